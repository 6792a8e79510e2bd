/* SPDX-License-Identifier: MIT */
/*
 * service: the conversation service. Starts a conversation or its next turn:
 * stores the user's message before the coder starts, creates the run, runs
 * the turn engine with every event stored as it arrives (committed after
 * each read from the coder), keeps the raw stdout/stderr in
 * $BATON_HOME/runs/<run>.{out,err}, then records the run's end, the answer
 * and the native session id in one transaction.
 *
 * One run per conversation, across processes: the store decides, in one
 * transaction, whether a prompt starts a run or waits queued. The process
 * that owns a run (its turn engine) takes control requests (a cancel...)
 * as they are stored, woken through its channel (channel.h), and reads
 * them every second should a wake be lost; whoever ends a completed turn
 * takes the queue next
 * (bt_service_flush), so queued prompts go out in the order they were
 * typed, once.
 */
#ifndef BT_SERVICE_H
#define BT_SERVICE_H

#include "coder.h"
#include "error-kind.h"
#include "event.h"
#include "store.h"

/* The largest prompt of a turn, queued messages joined included: far above
 * what coders accept (codex 0.171.0 refuses more than 1,048,576
 * characters), far below what could strain a pipe or the store. */
#define BT_SERVICE_PROMPT_MAX ((size_t)16 << 20)

struct bt_service_turn {
    const char *prompt;        /* run, send: required; flush, retry: ignored */
    const char *coder;         /* run: coder name; otherwise taken from CONV */
    const char *model;         /* run: NULL = coder default; otherwise ignored */
    const char *cwd;           /* run: project dir; otherwise ignored */
    int worktree;              /* run: the conversation gets its own git
                                  worktree of cwd's repository, where its
                                  turns run (service-worktree.c) */
    const char *branch;        /* run with worktree: its branch; NULL:
                                  baton/<short id> */
    const char *group;         /* run: the id of the group the new
                                  conversation joins (bt_store_group_create);
                                  NULL: none */
    enum bt_approval approval; /* approval policy */
    int no_retry;              /* ask the coder not to retry failed requests */
    int no_snapshot;           /* no snapshots of the working tree: no
                                  changes (as BATON_SNAPSHOTS=0) */
    uint64_t timeout_ms;       /* 0 = none */
    uint64_t idle_timeout_ms;  /* 0 = none */
    int force;                 /* send, retry: even to a conversation handed
                                  off to its coder's terminal UI */
    int slot;                  /* take a turn slot (slot.h) before the coder
                                  starts: a detached worker's turns. Its run
                                  reads as waiting until one is free; a cancel
                                  meanwhile ends it cancelled, no coder started */
    enum bt_store_queue queue; /* run, send: NEVER/IF_BUSY run the turn here
                                  (send queues the prompt while another turn
                                  runs); ALWAYS only stores the prompt as
                                  queued, for a worker to take */

    /* Under BT_APPROVAL_ASK: runner.h's ask_fallback and ask_no_questions. */
    enum bt_approval ask_fallback;
    int ask_no_questions;

    /* Live subscription: every event as it is stored. */
    void (*on_event)(void *data, const struct bt_event *ev, const char *json, size_t len);
    /* Every 100 ms while the turn runs; nonzero stops the turn as a cancel
     * does (the caller's output is gone, say). NULL: none. */
    int (*on_tick)(void *data);
    /* The run exists (its prompt is stored) and its turn is about to start. */
    void (*on_run)(void *data, const char *conversation, const char *run);
    void *data;
};

/* What became of a request. The service knows no exit codes: the CLI maps
 * these (cmd-exit.h). */
enum bt_service_result {
    BT_SERVICE_OK,            /* done without a turn of its own to report: the prompt
                                 was queued, or nothing was there to do */
    BT_SERVICE_TURN,          /* a turn ran to its end: status and error_kind say how */
    BT_SERVICE_USAGE,         /* refused as asked: no such coder or conversation, a turn
                                 running, handed off, too large, nothing to retry */
    BT_SERVICE_NOT_INSTALLED, /* the coder's executable is not there */
    BT_SERVICE_CANCELLED,     /* interrupted before the turn started */
    BT_SERVICE_FAILED,        /* the service failed: the store, the directory, the
                                 turn could not start, or its record is incomplete */
};

struct bt_service_outcome {
    char conversation[BT_ID_SIZE];
    char run[BT_ID_SIZE];          /* the run, "" if none started */
    enum bt_service_result result; /* what happened */
    enum bt_turn_status status;    /* TURN: how the turn ended */
    enum bt_error_kind error_kind; /* TURN: why it failed; NONE unless failed */
    char *message;                 /* a sentence for stderr when nothing ran; else NULL */
    int64_t queued;                /* > 0: the prompt waits as this message; no run */
    int64_t queue_no;              /* and this is its queue number (rm-queued's N) */
    int busy;                      /* a turn of the conversation was running */
    int completed;                 /* the turn ran and completed */
    int64_t waiting;               /* queued messages waiting once the turn ended */
};

/* Start a new conversation with one turn. Returns 0 once a turn ran (out->
 * result TURN, or FAILED when its record is incomplete) or the prompt was
 * queued (t->queue ALWAYS; OK), or a negative error before anything was
 * stored, with out->result and out->message set (e.g. coder unknown: USAGE,
 * not installed: NOT_INSTALLED). Free out->message. */
int bt_service_run(struct bt_store *s, const struct bt_service_turn *t,
                   struct bt_service_outcome *out);

/* The next turn of conversation conv (full id), resuming its native session
 * in the conversation's own working directory; the prompt goes after what
 * is queued. While another turn runs, t->queue IF_BUSY queues the prompt
 * (out->queued, OK) and NEVER refuses (BT_EBUSY, FAILED). Same returns as
 * bt_service_run. */
int bt_service_send(struct bt_store *s, const char *conv, const struct bt_service_turn *t,
                    struct bt_service_outcome *out);

/* Send everything queued in conv as one turn (messages joined by a blank
 * line). BT_ENOTFOUND with out->result OK when nothing is queued or
 * another turn runs (its owner takes the queue when it ends). */
int bt_service_flush(struct bt_store *s, const char *conv, const struct bt_service_turn *t,
                     struct bt_service_outcome *out);

/* Run the last turn's prompt again as a new turn, only when that turn
 * failed, was cancelled or interrupted: a completed turn is never resent
 * (-EALREADY, USAGE), nor is one still running (BT_EBUSY, USAGE). */
int bt_service_retry(struct bt_store *s, const char *conv, const struct bt_service_turn *t,
                     struct bt_service_outcome *out);

/* Finish every control request (store.h, "controls") left pending by a
 * run that is no longer running, by its kind's rule (service-control.c):
 * a cancel of a run that ended cancelled is done, the others refused
 * ("the turn had ended"). Run after the owner finished its run and by
 * recovery, so a request of a dead owner is never lost nor left waiting.
 * 0 or a store error. */
int bt_service_control_strand(struct bt_store *s);

/* What became of a steer (bt_service_steer). */
struct bt_service_steered {
    int64_t control;                   /* the stored control request (kind steer); 0 when none
                                          was stored (no turn ran: queued at once) */
    char run[BT_ID_SIZE];              /* the running turn's run; "" if none */
    enum bt_store_control_state state; /* DONE: taken into the running turn
                                          (turn.steered is in its events);
                                          QUEUED: waits as the next turn's
                                          message; PENDING: stored, the turn's
                                          owner has not delivered it yet (it
                                          will, or queue it: never lost) */
    int64_t queue_no;                  /* QUEUED: its queue number (rm-queued's N) */
    char *reason;                      /* QUEUED: why it was queued (owned), or NULL */
    char *message;                     /* an error's sentence (owned), or NULL */
};
void bt_service_steered_release(struct bt_service_steered *out);

/* Put text into conv's running turn, on its coder's own protocol (a
 * steer: docs/events.md turn.steered). The request is stored first (a
 * control of kind steer) and delivered by the turn's owner, whichever
 * process it is; this waits up to wait_ms for it to be taken in or queued
 * (0: does not wait: PENDING). No running turn, or a coder that cannot
 * steer (an ACP agent): text is queued at once as the next turn's message
 * (QUEUED, reason saying why). A queued text keeps the sender's settings
 * (t's approval, timeout_ms, idle_timeout_ms, no_retry), as a queued
 * send does. text must be a prompt (bt_input_prompt_problem). Returns 0
 * with *out filled; -EINVAL for a bad text, BT_ENOTFOUND for no such
 * conversation, -EPERM when it was handed off, or a store error: each
 * with out->message. Release out. */
int bt_service_steer(struct bt_store *s, const char *conv, const char *text,
                     const struct bt_service_turn *t, uint64_t wait_ms,
                     struct bt_service_steered *out);
/* Wake the owner of run: a control request of it was just stored
 * (bt_store_control_add, bt_store_run_cancel). It is delivered at once by
 * a live owner (its channel, src/channel.h); -ENOENT or -ECONNREFUSED
 * when none listens, and the request waits stored (the owner's fallback
 * read, or recovery, finishes it): not an error for the caller to report.
 * Never blocks. */
int bt_service_control_wake(struct bt_store *s, const char *run); /* service-wake.c */
/* --- a person's answers to a running turn (service-ask.c) ---------------- */

/* One approval request or question of a running turn that waits for a
 * person (--approval ask): its approval.requested without an
 * approval.resolved after it. Strings owned. */
struct bt_service_request {
    char *request_id;     /* as the event shows it: what bt_service_decide takes */
    char *kind;           /* command, file_change, permissions, user_input, other */
    char *summary;        /* one line: the command, file or first question; NULL: none */
    char *questions_json; /* user_input: the questions (docs/events.md); NULL: none */
    char *event_json;     /* the approval.requested event as stored */
    int64_t seq;          /* its seq in the run */
};

struct bt_service_requests {
    char run[BT_ID_SIZE];         /* the running run ("" when none runs) */
    struct bt_service_request *v; /* n of them, oldest first */
    size_t n;
};

/* The requests of conv's running turn that wait for a person, from its
 * stored events. None (n 0, run "") when no turn runs. Returns 0 or
 * BT_ESTORE; release *out with bt_service_requests_release. */
int bt_service_pending(struct bt_store *s, const char *conv, struct bt_service_requests *out);
void bt_service_requests_release(struct bt_service_requests *r);

/* A person's decision on one request. Strings borrowed. */
struct bt_service_decision {
    const char *request_id;   /* as approval.requested shows it; NULL: the only
                                 request waiting */
    int accept;               /* 1 allow (a question: answered), 0 deny */
    int always;               /* with accept: allow this kind for the rest of the turn */
    const char *answers_json; /* a question answered: JSON array, one element per
                                 question, each an array of strings (labels or one
                                 free text); NULL for an approval or a refusal */
    unsigned wait_ms;         /* how long to wait for the turn's owner to take it
                                 (0: not at all) */
};

/* What became of a decision. */
struct bt_service_decided {
    char request_id[BT_EVENT_REQUEST_ID_MAX]; /* the request decided */
    int64_t control;                          /* the stored control request's id */
    int taken;     /* 1: the owner gave it to the coder; 0: it waits stored
                      (the owner did not take it within wait_ms) */
    char *message; /* owned: why it was refused (NULL when it was not) */
};

/* Decide a request of conv's running turn (stored first as a control
 * request of kind "decision", store.h; the owner of the run gives it to
 * the coder, bt_turn_decide, by "user"), then wait up to d->wait_ms for
 * the owner to take it. Returns 0 (out->taken says whether it was taken
 * yet); or, with out->message: BT_ENOTFOUND no turn of conv runs, or no
 * such request waits (answered already, declined by timeout or by the
 * stop: a late answer is refused); -EINVAL the request is not named and
 * several wait, answers for a request that is no question, a question
 * accepted without answers, answers of the wrong shape, or answers the
 * owner found the coder's request cannot take (an elicitation form's
 * field: not a number, not a choice, a required one unanswered; the
 * request still waits); -EALREADY the owner refused it (the turn or the
 * request ended first); BT_ESTORE. */
int bt_service_decide(struct bt_store *s, const char *conv, const struct bt_service_decision *d,
                      struct bt_service_decided *out);

#endif
