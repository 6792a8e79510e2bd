/* SPDX-License-Identifier: MIT */
/*
 * service-recover: the runs whose baton process died (service-conv.h).
 * Every front end recovers them before it reads or changes a conversation
 * (the CLI when it opens the store, `baton serve` on its beat and before a
 * request about a conversation, `baton acp` while it follows another
 * process's turn), so neither a stream nor a busy check waits on a dead
 * owner.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "error.h"
#include "perf.h"
#include "proc.h"
#include "rebuild.h"
#include "service-conv.h"

static void say(bt_service_say_fn fn, void *data, char *line)
{
    if (fn)
        fn(data, line);
    free(line);
}

/* Rebuild a run whose owner is gone from its raw output when the store
 * lacks events it holds, or the coder's own end (rebuild.h); else leave it
 * to bt_store_recover. */
static void rebuild_dead(struct bt_store *s, const struct bt_store_run *r, bt_service_say_fn fn,
                         void *data)
{
    struct bt_rebuild_report rep;
    int rc = bt_rebuild_run(s, &(struct bt_rebuild){.run = r}, &rep);
    if (rc == 0 && rep.rebuilt) {
        say(fn, data,
            bt_xasprintf("run %s of conversation %s was rebuilt from the coder's raw output "
                         "(%lld events kept, %lld added): %s%s%s",
                         r->id, r->conversation, (long long)rep.kept, (long long)rep.added,
                         bt_store_run_state_name(rep.state), rep.problem ? "; " : "",
                         rep.problem ? rep.problem : ""));
        bt_proc_stop_orphan(r->pgid, r->child_start, r->id);
    } else if (rc == 0 && rep.problem) {
        say(fn, data,
            bt_xasprintf("run %s of conversation %s: %s; it is marked interrupted with the "
                         "events the store has",
                         r->id, r->conversation, rep.problem));
    } else if (rc && rc != -EALREADY) {
        say(fn, data,
            bt_xasprintf("cannot rebuild run %s of conversation %s: %s", r->id, r->conversation,
                         bt_store_errmsg(s)));
    }
    bt_rebuild_report_release(&rep);
}

int bt_service_recover(struct bt_store *s, bt_service_say_fn fn, void *data)
{
    struct bt_store_run *dead = NULL;
    size_t n = 0;
    int rc = bt_store_dead_runs(s, &dead, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rebuild_dead(s, &dead[i], fn, data);
        bt_channel_remove_stale(bt_store_home(s), dead[i].id); /* its owner's socket */
    }
    bt_store_run_list_free(dead, n);
    if (rc == 0 && n == 0)
        return bt_service_control_strand(s); /* left by owners that died before */
    struct bt_store_orphan *orphans = NULL;
    size_t n_orphans = 0;
    if (rc == 0)
        rc = bt_store_recover(s, NULL, &orphans, &n_orphans);
    for (size_t i = 0; rc == 0 && i < n_orphans; i++)
        bt_proc_stop_orphan(orphans[i].pgid, orphans[i].child_start, orphans[i].run);
    free(orphans);
    if (rc == 0) /* their control requests: a cancel is done, the rest refused */
        rc = bt_service_control_strand(s);
    if (rc)
        say(fn, data,
            bt_xasprintf("cannot recover the runs whose baton process is gone: %s",
                         bt_store_errmsg(s)));
    return rc ? rc : (int)n;
}

int bt_service_open(struct bt_store **s, bt_service_say_fn fn, void *data,
                    struct bt_service_outcome *out)
{
    char *home = bt_store_default_home(), *err = NULL;
    const char *env = getenv("BATON_HOME");
    out->result = BT_SERVICE_FAILED;
    if (!home && env && *env) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("BATON_HOME must be an absolute path, not '%s'", env);
        return -EINVAL;
    }
    if (!home) {
        out->message = bt_xstrdup("cannot find a home for the store: set BATON_HOME");
        return -ENOENT;
    }
    int rc = bt_store_open(home, s, &err);
    if (rc)
        out->message =
            bt_xasprintf("cannot open the store in %s: %s", home, err ? err : bt_strerror(rc));
    free(err);
    free(home);
    if (rc)
        return rc;
    out->result = BT_SERVICE_OK;
    bt_perf_mark("store opened");
    bt_service_recover(*s, fn, data);
    bt_perf_mark("earlier runs recovered");
    return 0;
}
