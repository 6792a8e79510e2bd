/* SPDX-License-Identifier: MIT */
/*
 * turn: the turn engine. Runs one turn of one coder as one run:
 * runner -> process group -> line framer -> parser -> normalized events.
 *
 * The engine does not know who watches: every event is stamped (seq from 1,
 * run, conversation, ts), encoded as a JSON line and handed to on_event.
 * It guarantees exactly one turn.completed, always last, whatever happened
 * (coder crash, stall, timeout, cancel, protocol garbage).
 *
 * Stop path (cancel, stall, timeout): the runner's protocol interrupt if it
 * has one, then SIGTERM to the group after grace_ms, SIGKILL after another
 * grace_ms. After the coder's terminal event the engine closes stdin and
 * gives the coder linger_ms to exit before stopping it the same way; the turn
 * still counts as completed.
 */
#ifndef BT_TURN_H
#define BT_TURN_H

#include <stdint.h>
#include <uv.h>

#include "coder.h"
#include "error-kind.h"
#include "event.h"

struct bt_runfile;

struct bt_turn;

/* How long a tentative end (a coder that may still retry) waits for the
 * retry to begin before it is the end, in ms. pi 0.73.1 announces a retry
 * with auto_retry_start right after agent_end. */
#define BT_TURN_SETTLE_MS 1500

/* How long an end that drains (parser-signal.h, turn_end.drain) waits for
 * the coder to go quiet, in ms, and its bound from the end on: an ACP
 * agent may write the last session/update notifications of a turn (a
 * message's tail, usage_update) just after its session/prompt answer
 * (gemini-cli, opencode and copilot send them from other tasks than the
 * answer's). */
#define BT_TURN_DRAIN_MS 200
#define BT_TURN_DRAIN_MAX_MS 1000

/* Bounds of the raw copies of a run's stdout and stderr (run files), in
 * bytes of the stream (the files hold them compressed). */
#define BT_TURN_RAW_OUT_MAX ((uint64_t)1 << 30) /* 1 GiB */
#define BT_TURN_RAW_ERR_MAX ((uint64_t)8 << 20) /* 8 MiB */

struct bt_turn_options {
    const struct bt_coder *coder;
    const char *bin;           /* resolved executable path */
    const char *coder_version; /* for turn.started; NULL: not known yet */
    char *const *env;          /* environment for the coder */
    struct bt_runner_config cfg;
    const char *run_id;          /* stamped on every event */
    const char *conversation_id; /* stamped on every event */
    struct bt_runfile *raw_out;  /* copy of raw stdout (runfile.h), NULL: none */
    struct bt_runfile *raw_err;  /* copy of raw stderr, NULL: none */
    uint64_t timeout_ms;         /* whole turn; 0 = none */
    uint64_t idle_timeout_ms;    /* no progress for this long (progress.h) = stalled; 0 = none */
    uint64_t grace_ms;           /* each stop step; 0 = 3000 */
    uint64_t linger_ms;          /* after the terminal event; 0 = 2000 */

    /* Every event, stamped; json is one line ending in '\n' (valid for the
     * call only). */
    void (*on_event)(void *data, const struct bt_event *ev, const char *json, size_t len);
    /* A point to commit the events emitted since the last call (none if
     * there are none): after each batch of stdout has been parsed, after
     * an answer to the coder, before the turn's loop starts, each time
     * before it waits (none waits for the coder's next output) and after
     * each pass, and before on_end. turn.completed, emitted after on_end,
     * gets none: the caller commits it. */
    void (*on_batch)(void *data);
    /* The coder process started (pid = process group id). */
    void (*on_spawn)(void *data, int pid);
    /* Optional: the coder named its version in its protocol (borrowed, for
     * the call), once per run, before the events that follow it. */
    void (*on_version)(void *data, const char *version);
    /* Optional: called every tick_ms while the turn runs (a spinner, a
     * look for a cancel request); returning non-zero stops the turn as a
     * first stop signal would (status cancelled). */
    int (*on_tick)(void *data);
    uint64_t tick_ms;
    /* Optional: the turn's loop runs, the coder spawned: called once, on
     * the loop's thread, before the first read from the coder. The caller
     * may put handles of its own on bt_turn_loop(t) (the run owner's
     * channel, src/channel.h) and, from their callbacks, call the
     * loop-thread functions below. It must close them in on_loop_end. */
    void (*on_loop)(void *data, struct bt_turn *t);
    /* Optional, with on_loop: the coder is gone and the loop is about to
     * close: close what on_loop put on it (the loop runs until they are
     * closed). Called once, before turn.completed is emitted. */
    void (*on_loop_end)(void *data, struct bt_turn *t);
    /* Optional: the turn has ended and turn.completed is next: what it
     * carries as changes (event.h changes_json; owned, freed by the
     * engine), or NULL for none. Called once, after the coder's process
     * group is gone, so what it changed is all there. */
    char *(*on_end)(void *data);
    /* Optional: what became of a steer bt_turn_steer wrote, once per key:
     * taken (turn.steered was emitted just before), or not (the coder
     * refused it, or the turn ended before the coder took it in: why says
     * which), when the caller queues the text as the next turn's message. */
    void (*on_steer)(void *data, int64_t key, int taken, const char *why);
    void *data;
};

struct bt_turn_result {
    enum bt_turn_status status;
    enum bt_error_kind error_kind; /* why it failed; NONE unless failed */
    char *error_message;           /* curated sentence; NULL when completed */
    char *final_text;              /* the answer text; never NULL */
    char *native_session_id;       /* as named by the coder; NULL if never */
    char *native_session_path;     /* the session file, for coders that name one */
    struct bt_usage usage;
    int64_t exit_code; /* BT_UNKNOWN if killed by a signal or never ran */
    int exit_signal;
    int stop_stage; /* signals baton sent the coder's group: 0 none,
                       1 SIGTERM, 2 SIGKILL (bt_proc_result) */
    int64_t duration_ms;
    char *stderr_tail; /* last stderr bytes (NUL-terminated); may be NULL */
    int64_t events;    /* events emitted, turn.completed included */
    int coder_ended;   /* the coder's own end of the turn was seen */
};

/* Run the turn to its end on a loop of its own. SIGINT is handled while it
 * runs: once = interrupt, twice = kill. Returns 0 with *res filled (the turn
 * itself may have failed: see res->status), or a negative error when nothing
 * could run (then no event was emitted). Release res with
 * bt_turn_result_release. */
int bt_turn_run(const struct bt_turn_options *o, struct bt_turn_result *res);

void bt_turn_result_release(struct bt_turn_result *res);

/* Loop-thread functions: called only on the turn's loop thread, between
 * on_loop and on_loop_end (from a handle the caller put on the loop, or
 * from a callback of the turn such as on_tick). */

/* The turn's loop (valid until on_loop_end returns). */
uv_loop_t *bt_turn_loop(struct bt_turn *t);

/* Stop the turn as a cancel: it stops politely (the runner's protocol
 * interrupt, then the group's signals after grace_ms), as the first
 * Ctrl-C would, and the turn ends cancelled; a Ctrl-C after it kills the
 * group. A second call changes nothing (a stop is under way). Returns 0
 * when the stop began or is under way, -EALREADY when the coder had
 * already ended the turn (its end stands; its exit is only hastened) or
 * is gone. */
int bt_turn_stop(struct bt_turn *t);

/* Put text into the running turn t on the coder's own protocol (a steer:
 * codex turn/steer, pi steer, claude a user message; runner.h). On t's
 * loop thread only (above).
 * key names it to on_steer (the control's id). Returns 0 when it was
 * written, or will be once the coder began the turn (codex before
 * turn/start named it; steers go in the order given): on_steer then says,
 * exactly once, whether the coder took it in (turn.steered emitted,
 * carrying key as `control`) or not, at the latest as the turn ends; -ENOTSUP when the coder cannot
 * steer (an ACP agent); -EAGAIN when the turn cannot take it now: the coder's turn has ended, is
 * ending or is being stopped. Nothing is written on error, on_steer is not called, and the caller
 * queues the text. text is checked by the caller as a prompt is (bt_input_prompt_problem). */
int bt_turn_steer(struct bt_turn *t, int64_t key, const char *text);
/* A person's answer to one request the coder is waiting on. */
struct bt_turn_decision {
    int accept;               /* 1 allow (a question: answered), 0 deny */
    int always;               /* with accept: requests of the same kind (command,
                                 file_change, ...) are allowed for the rest of this
                                 turn without asking */
    const char *answers_json; /* a question answered: JSON array text, one element
                                 per question in order, each an array of strings
                                 (labels chosen or one free text), as
                                 bt_runner_decision's; NULL otherwise */
    char **why;               /* optional: on -EINVAL, why the answers do not fit
                                 (owned, free; NULL when only their shape is
                                 wrong) */
};

/* Under BT_APPROVAL_ASK the engine keeps each approval request and
 * question for a person while the loop goes on (events flow, the idle
 * watchdog counts): approval.requested shows its `request_id`. Answer
 * request_id (as the event shows it) as d says, by "user": the runner
 * writes the protocol's reply and approval.resolved follows. Call on the
 * turn's loop thread only (on_loop, on_tick, or a handle of that loop).
 * A request nobody answered within idle_timeout_ms is declined by
 * "timeout"; once the turn is being stopped, every waiting request is
 * declined by "cancel" (never granted after the stop); requests still
 * waiting when the coder ends are resolved by "cancel". Returns 0;
 * -ENOENT when no such request waits (never asked, answered already, or
 * declined by timeout or cancel: a late answer changes nothing); -EINVAL
 * when d does not fit it (answers for a request that is no question,
 * answers that are not an array of arrays of strings, or answers the
 * coder's request cannot take: the runner's answer_problem, told in
 * *d->why): nothing is written and the request keeps waiting. */
int bt_turn_decide(struct bt_turn *turn, const char *request_id, const struct bt_turn_decision *d);

/* A run replayed from the raw stdout its run file kept (bt_turn_replay). */
struct bt_turn_replay {
    const char *out; /* the coder's stdout, as kept (borrowed) */
    size_t len;      /* bytes of out */
    /* Optional: the end as the turn's owner saw it (status, error kind and
     * message, exit, duration), which wins over the stream's: a stall, a
     * timeout or a cancel is not in the stream. NULL: from the stream. */
    const struct bt_turn_result *end;
    int cancelled;            /* without end, and no end in the stream: a cancel was
                                 requested, so the turn ends cancelled */
    int64_t duration_ms;      /* for turn.completed without end */
    const char *changes_json; /* turn.completed's changes, as the run had them; NULL: none */
};

/* The events of a turn again, from its raw stdout, without a process: the
 * same framing, text checks, parser, warning limits and runner (its lines
 * go nowhere; its state follows the protocol, so its answers and events
 * come out as they did, given the same o->cfg) as bt_turn_run. Every event
 * goes to o->on_event, stamped now, seq from 1, turn.started first and
 * turn.completed last. The end is r->end when given; else the coder's own
 * end in the stream; else interrupted (cancelled with r->cancelled): the
 * output stops short. The coder's exit is unknown then. A tentative end
 * with no retry after it in the stream is the end. No timer, signal or
 * other callback of o is used. Returns 0 with *res filled (release with
 * bt_turn_result_release), or a negative error (nothing emitted). */
int bt_turn_replay(const struct bt_turn_options *o, const struct bt_turn_replay *r,
                   struct bt_turn_result *res);

#endif
