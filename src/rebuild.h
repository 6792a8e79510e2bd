/* SPDX-License-Identifier: MIT */
/*
 * rebuild: a run whose events the store did not keep (its writes failed, or
 * the baton running it died before a batch was committed) is rebuilt from
 * its raw stdout (runs/<run>.out.zst), which is what the raw file is for:
 * the stream goes through the coder's parser and runner again
 * (bt_turn_replay), the stored events that agree with the replay are kept,
 * a warning {kind: "rebuilt"} marks where the replay takes over, and the
 * run ends with the status the coder reported (or its owner's end, when
 * the owner itself rebuilds at the end of its turn). See docs/store.md,
 * "Rebuilding a run".
 */
#ifndef BT_REBUILD_H
#define BT_REBUILD_H

#include "runner.h"
#include "store.h"
#include "turn.h"

#define BT_REBUILD_WARNING "rebuilt" /* kind of the warning that marks a rebuild */

struct bt_rebuild {
    const struct bt_store_run *run;     /* the run, still running in the store */
    const struct bt_turn_options *turn; /* optional: the owner's own options (its
                                           cfg, the coder_version turn.started
                                           gave); NULL: from the store, approval
                                           deny (the policy is not stored) */
    const struct bt_turn_result *end;   /* optional: the owner's end of the turn;
                                           NULL: the stream's */
    const char *why;                    /* why the store lacks events, for the
                                           warning ("the store could not be
                                           written: ..."); NULL: not known */
    int always;                         /* rebuild even when the store lacks
                                           nothing (an owner whose writes failed) */
    const char *changes_json;           /* optional: turn.completed's changes as the
                                           owner had them; NULL: from the run's stored
                                           snapshots (src/repo.h), if it has both */
};

struct bt_rebuild_report {
    int rebuilt;                   /* 1: the run was rebuilt and finished */
    int64_t kept;                  /* stored events kept */
    int64_t added;                 /* events added (the warning and turn.completed included) */
    enum bt_store_run_state state; /* the run's end state, when rebuilt */
    char *problem;                 /* owned: why the raw output could not be used
                                      (missing, damaged, an unknown coder), or
                                      NULL */
};

void bt_rebuild_report_release(struct bt_rebuild_report *rep);

/* Rebuild o->run from its raw output, if that gives what the store lacks:
 * events past the stored ones, or the coder's own end of the turn (or
 * o->always). Fills *rep (release it). Returns 0 (rep->rebuilt says whether
 * anything changed; rep->problem when the raw output could not be read:
 * the caller marks the run interrupted as before), -EALREADY when another
 * process finished the run first, or the store's error (bt_store_errmsg). */
int bt_rebuild_run(struct bt_store *s, const struct bt_rebuild *o, struct bt_rebuild_report *rep);

#endif
