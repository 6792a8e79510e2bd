/* SPDX-License-Identifier: MIT */
/*
 * service-int: what the files of the conversation service share
 * (service.c: requests, the queue, retries; service-turn.c: the coder and
 * the run of one turn). Not for use outside them.
 */
#ifndef BT_SERVICE_INT_H
#define BT_SERVICE_INT_H

#include "repo.h"
#include "service.h"

/* A coder resolved to an executable and version, or why not. */
struct bt_service_coder {
    const struct bt_coder *coder;
    struct bt_coder_exe exe; /* what runs */
    struct bt_store_exe id;  /* its identity, the key of its stored version */
    int have_id;             /* id could be read */
    int asked;               /* the coder was asked (now, or the store says so) */
    char *version;           /* NULL: not known before the coder says it */
};

/* Find coder name, its executable and (when it does not name it itself)
 * its version. Returns 0; or -EINVAL for an unknown coder (out: usage),
 * BT_ENOTINSTALLED (out: not installed), -EINTR when a signal ended the
 * version probe (out: cancelled), each with out->message. Release l with
 * bt_service_coder_release whatever it returns. */
int bt_service_coder_locate(struct bt_store *s, const char *name, struct bt_service_coder *l,
                            struct bt_service_outcome *out);
void bt_service_coder_release(struct bt_service_coder *l);

/* Run the turn of run out->run (just created, its prompt stored) of conv
 * with l and the settings t, storing every event as it arrives, and record
 * its end. Returns 0 once the turn ran (out->result BT_SERVICE_TURN with
 * its status and kind, or FAILED when its record could not be completed);
 * a negative error when it could not run (out: failed, with a message; the
 * run is recorded failed). */
int bt_service_turn_run(struct bt_store *s, const struct bt_store_conversation *conv,
                        struct bt_service_coder *l, const struct bt_service_turn *t,
                        const char *prompt, struct bt_service_outcome *out);

/* service-control.c: deliver every pending control request of run with
 * an id above *last to the live turn t, in id order, by its kind's
 * handler (each finishes its request); *last becomes the last id seen.
 * Called on t's loop thread. 0 or a store error. */
struct bt_turn;
int bt_service_control_deliver(struct bt_store *s, struct bt_turn *t, const char *run,
                               int64_t *last);

/* service-steer.c: the control table's steer handlers (service-control.c)
 * and the turn's word on a steer (turn.h on_steer): c finished done, or
 * its text queued as the next turn's message with the reason why. */
struct bt_store_control;
void bt_service_steer_deliver(struct bt_store *s, struct bt_turn *t,
                              const struct bt_store_control *c);
void bt_service_steer_stranded(struct bt_store *s, const struct bt_store_control *c);
void bt_service_steer_outcome(struct bt_store *s, int64_t control, int taken, const char *why);
/* service-ask.c: the "decision" line of service-control.c's table. deliver
 * gives the person's decision c (body {request_id, accept, always,
 * answers?}) to the live turn t (bt_turn_decide, on its loop's thread) and
 * finishes c: done, or refused when the request no longer waits (a late
 * answer); stranded refuses c, whose run ended first. */
struct bt_store_control;
void bt_service_decision_deliver(struct bt_store *s, struct bt_turn *t,
                                 const struct bt_store_control *c);
void bt_service_decision_stranded(struct bt_store *s, const struct bt_store_control *c);

/* service-worktree.c: make the worktree of the new conversation id
 * (t->cwd's repository, t->branch or baton/<short id>, under
 * $BATON_HOME/worktrees). Returns 0 with *wt filled (release it), or an
 * error with out->result and out->message set (not a repository, bare,
 * no commit yet, the branch exists: USAGE). */
int bt_service_worktree_make(struct bt_store *s, const struct bt_service_turn *t,
                             const char id[BT_ID_SIZE], struct bt_repo_worktree *wt,
                             struct bt_service_outcome *out);

/* Take back a worktree just made for a conversation that was not stored. */
void bt_service_worktree_drop(const struct bt_repo_worktree *wt);

#endif
