/* SPDX-License-Identifier: MIT */
/*
 * turn-int: the state of one turn, shared by the files of the turn engine
 * (turn.c: the loop and stop escalation; turn-end.c: the coder's end of
 * the turn and the settling of the result; turn-ask.c, turn-steer.c: a
 * person's answers and steers; turn-emit.c, below them all: events out
 * and writes to the coder). Not for use outside them.
 */
#ifndef BT_TURN_INT_H
#define BT_TURN_INT_H

#include "answer.h"
#include "framer.h"
#include "proc.h"
#include "progress.h"
#include "turn.h"

/* Why baton stops a turn; the first reason wins. */
enum bt_turn_stop {
    BT_TURN_STOP_NONE,
    BT_TURN_STOP_CANCEL,  /* a stop signal, or on_tick asked */
    BT_TURN_STOP_STALL,   /* the idle watchdog fired */
    BT_TURN_STOP_TIMEOUT, /* the turn's deadline passed */
    BT_TURN_STOP_BROKEN,  /* writing to the coder failed */
};

/* Signals that stop a turn: Ctrl-C, a terminal hang-up, a polite kill. */
#define BT_TURN_N_STOP_SIGNALS 3

/* Requests waiting for a person at once, at most: more are declined by
 * policy (a coder asks one at a time; claude's parallel tools a few). */
#define BT_TURN_HELD_MAX 32

/* A request the coder waits on while a person decides (turn-ask.c). */
struct bt_turn_held {
    struct bt_signal_request rq;      /* as the coder sent it; every string owned */
    char id[BT_EVENT_REQUEST_ID_MAX]; /* its request_id as events show it */
};

struct bt_turn {
    const struct bt_turn_options *o;
    const struct bt_turn_replay *replay; /* a replay of a run file (no process), or NULL */
    uv_loop_t loop;
    struct bt_proc *proc;
    struct bt_framer framer;
    void *parser;
    void *runner;
    struct bt_parser_sink sink;
    struct bt_buf json; /* encoding scratch */
    struct bt_buf wbuf; /* lines for the coder's stdin */
    int64_t seq;
    int unbatched; /* events emitted since the last o->on_batch */
    int64_t t0;    /* monotonic ms at start */
    uv_timer_t idle, deadline, tick, settle;
    uv_prepare_t batch; /* before the loop waits: bt_turn_batch */
    struct {
        int set;
        enum bt_turn_status status;
        enum bt_error_kind kind;
        char *message;
        int drain;           /* an end that drains: final once the coder is quiet */
        int64_t drain_until; /* bt_mono_ms by which the drain ends */
        int unexplained;     /* as turn_end.unexplained */
    } pending;               /* a tentative end, see bt_turn_end_hold */
    char *session_path;      /* native session file, when the coder names one */
    uv_signal_t signals[BT_TURN_N_STOP_SIGNALS];
    int ended;        /* the coder's terminal event was seen */
    int version_seen; /* the coder named its version */
    int read_any;     /* stdout gave something */
    int spawn_failed; /* the result was settled when spawning failed */
    int argv_refused; /* the runner refused the config (build_argv), nothing ran */
    int stdout_eof;   /* stdout ended before the terminal event */
    int write_error;  /* writing to the coder failed (negative code) */
    /* stop the turn after a failed write (turn.c's, set before any write):
     * a pointer, so turn-emit.c, below turn.c, calls nothing above it */
    void (*broken)(struct bt_turn *t);
    struct {
        const char *kind;
        int count;
    } warned[16];        /* warnings per kind, for WARNINGS_PER_KIND */
    int items_after_end; /* item events dropped after the terminal event */
    int usage_after_end; /* usage events dropped after the terminal event */
    int ends_after_end;  /* terminal events ignored after the first */
    enum bt_turn_status end_status;
    enum bt_error_kind end_kind;
    char *end_message;
    int end_unexplained; /* the end said failed but not why: explain from stderr */
    enum bt_turn_stop stop;
    int stop_signals_seen;
    struct bt_usage usage;
    struct bt_answer answer;     /* the answer text so far */
    struct bt_progress progress; /* what the idle watchdog counts */
    char *session_id;
    struct {
        struct bt_turn_steer_rec *v; /* every steer written, in order (owned) */
        size_t n, cap;
        int ends_owed;   /* coder ends still to come for steers (claude) */
        int prompt_seen; /* the coder's echo of the prompt (USER_TEXT) came */
    } steers;
    struct bt_turn_held *held[BT_TURN_HELD_MAX]; /* waiting for a person, oldest first */
    size_t n_held;
    struct bt_strv always; /* approval kinds a person allowed for the rest of the turn */
    int done;
    struct bt_proc_result pres;
};

/* A steer written to the coder (turn-steer.c). */
struct bt_turn_steer_rec {
    int64_t key;   /* the caller's (on_steer) */
    char *text;    /* owned */
    int confirmed; /* on_steer was called for it */
    int deferred;  /* not written yet: the coder had not begun the turn */
};

/* Each step of a stop, in ms. */
static inline uint64_t bt_turn_grace(const struct bt_turn *t)
{
    return t->o->grace_ms ? t->o->grace_ms : 3000;
}

/* turn-emit.c: stamp ev (seq, run, conversation, ts), keep what the result
 * needs, encode it and hand it to o->on_event. */
void bt_turn_emit(struct bt_turn *t, struct bt_event *ev);
/* turn-emit.c: a point to commit what was emitted (o->on_batch), if
 * anything was since the last. */
void bt_turn_batch(struct bt_turn *t);

/* turn-emit.c: write what the runner put in wbuf to the coder; a failed
 * write stops the turn (BROKEN, through t->broken). */
void bt_turn_flush(struct bt_turn *t);
/* turn-emit.c: the coder got on with the turn: the idle watchdog starts over. */
void bt_turn_progressed(struct bt_turn *t);

/* turn-ask.c */

/* A request with an approval kind under BT_APPROVAL_ASK (not a replay, not
 * after the stop began): kept for a person (or allowed at once when a
 * person allowed its kind for the rest of the turn). Returns 1 if taken
 * (the runner's on_signal must not see it), 0 when the policy decides. */
int bt_turn_ask_hold(struct bt_turn *t, const struct bt_signal_request *rq);
/* Settle every waiting request: by "timeout" (the idle watchdog fired
 * while a person was asked) as cfg.ask_fallback says (deny by default),
 * by "cancel" (the stop began, or the coder ended) declined. Returns how
 * many there were. */
size_t bt_turn_ask_settle(struct bt_turn *t, const char *by);
void bt_turn_ask_release(struct bt_turn *t);

/* turn-steer.c */

/* A USER_TEXT or STEER signal: a steer taken or refused. Returns 1 if sig
 * was one of them (the runner is not to see it). */
int bt_turn_steer_signal(struct bt_turn *t, const struct bt_signal *sig);
/* After the coder's answer to a request: write the steers deferred until
 * the coder began the turn, in order. */
void bt_turn_steer_retry(struct bt_turn *t);
/* A coder's end of the turn: 1 if it answers a steer (claude) and the turn
 * goes on to the next. */
int bt_turn_steer_owes_end(struct bt_turn *t, const struct bt_signal_turn_end *end);
/* The turn is over: every steer the coder did not take in is reported
 * not taken (on_steer), and the records are freed. */
void bt_turn_steer_finish(struct bt_turn *t);

/* turn-end.c */

/* The coder's end of the turn (a TURN_END signal, or a tentative end that
 * no retry followed): the turn is over; stdin closes and the coder has
 * linger_ms to exit. Only the first end counts. */
void bt_turn_end_now(struct bt_turn *t, const struct bt_signal_turn_end *end);
/* A tentative end: it becomes the end after BT_TURN_SETTLE_MS unless
 * bt_turn_end_clear_pending (a retry began) comes first. */
void bt_turn_end_hold(struct bt_turn *t, const struct bt_signal_turn_end *end);
/* The coder said something while an end drains: the drain waits on, up
 * to its bound. */
void bt_turn_end_heard(struct bt_turn *t);
/* An end that drains is the end now (a stop came while it drained: the
 * turn had ended as the coder said). */
void bt_turn_end_drain_now(struct bt_turn *t);
/* Forget a tentative end. */
void bt_turn_end_clear_pending(struct bt_turn *t);
/* Spawning failed with rc: settle *res (not_installed, resume_failed or
 * coder_crashed) before any event but turn.started. */
void bt_turn_end_spawn_failed(struct bt_turn *t, int rc, struct bt_turn_result *res);
/* The end of the stream: settle *res from what happened, then emit the
 * error event (when failed) and turn.completed, always last. */
void bt_turn_end_finish(struct bt_turn *t, struct bt_turn_result *res);

#endif
