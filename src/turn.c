/* SPDX-License-Identifier: MIT */
/*
 * turn: the turn engine (see turn.h). One libuv loop per turn: the process
 * group, a line framer on stdout, the coder's parser and runner, watchdog
 * timers and the SIGINT handler.
 */
#include "turn.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "error.h"
#include "framer.h"
#include "perf.h"
#include "proc.h"
#include "progress.h"
#include "runfile.h"

enum stop_reason { STOP_NONE, STOP_CANCEL, STOP_STALL, STOP_TIMEOUT, STOP_BROKEN };

/* Signals that stop a turn: Ctrl-C, a terminal hang-up, a polite kill. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

/* Warnings of one kind kept per run before the rest are dropped: a coder
 * printing noise must not turn every line into a stored event. */
#define WARNINGS_PER_KIND 100

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
    int64_t t0; /* monotonic ms at start */
    uv_timer_t idle, deadline, tick, settle;
    struct {
        int set;
        enum bt_turn_status status;
        char *kind, *message;
    } pending;          /* a tentative end, see hold_end */
    char *session_path; /* native session file, when the coder names one */
    uv_signal_t signals[N_STOP_SIGNALS];
    int ended;        /* the coder's terminal event was seen */
    int version_seen; /* the coder named its version */
    int read_any;     /* stdout gave something */
    int spawn_failed; /* the result was settled when spawning failed */
    int stdout_eof;   /* stdout ended before the terminal event */
    int write_error;  /* writing to the coder failed (negative code) */
    struct {
        const char *kind;
        int count;
    } warned[16];        /* warnings per kind, for WARNINGS_PER_KIND */
    int items_after_end; /* item events dropped after the terminal event */
    enum bt_turn_status end_status;
    char *end_kind, *end_message;
    enum stop_reason stop;
    int stop_signals_seen;
    struct bt_usage usage;
    struct bt_answer answer;     /* the answer text so far */
    struct bt_progress progress; /* what the idle watchdog counts */
    char *session_id;
    int done;
    struct bt_proc_result pres;
};

static uint64_t grace(const struct bt_turn *t)
{
    return t->o->grace_ms ? t->o->grace_ms : 3000;
}

/* ---- events --------------------------------------------------------- */

/* Keep what the result needs: the answer text, usage, session id. */
static void track(struct bt_turn *t, const struct bt_event *ev)
{
    if (ev->type == BT_EVENT_ITEM_DELTA || ev->type == BT_EVENT_ITEM_COMPLETED) {
        bt_answer_add(&t->answer, ev);
    } else if (ev->type == BT_EVENT_USAGE) {
        t->usage = ev->usage;
    } else if (ev->type == BT_EVENT_SESSION_STARTED && ev->native_session_id) {
        free(t->session_id);
        t->session_id = bt_xstrdup(ev->native_session_id);
    }
}

static void emit(struct bt_turn *t, struct bt_event *ev)
{
    ev->seq = ++t->seq;
    ev->run = t->o->run_id;
    ev->conversation = t->o->conversation_id;
    ev->ts_ms = bt_now_ms();
    track(t, ev);
    bt_buf_reset(&t->json);
    bt_event_to_json(ev, &t->json);
    if (t->o->on_event)
        t->o->on_event(t->o->data, ev, t->json.data, t->json.len);
}

/* 1 if one more warning of this kind may be emitted; the first one over
 * the limit is replaced by a note that the rest are dropped. */
static int warning_allowed(struct bt_turn *t, const struct bt_event *ev)
{
    const char *kind = ev->kind ? ev->kind : "other";
    size_t i = 0;
    while (i < BT_ARRAY_SIZE(t->warned) && t->warned[i].kind &&
           strcmp(t->warned[i].kind, kind) != 0)
        i++;
    if (i == BT_ARRAY_SIZE(t->warned))
        i--; /* more kinds than slots: they share the last one */
    if (!t->warned[i].kind)
        t->warned[i].kind = kind; /* parser kinds are static strings */
    if (++t->warned[i].count <= WARNINGS_PER_KIND)
        return 1;
    if (t->warned[i].count == WARNINGS_PER_KIND + 1) {
        struct bt_event note;
        bt_event_init(&note, BT_EVENT_WARNING);
        note.kind = kind;
        note.message = "further warnings of this kind in this run are not reported";
        emit(t, &note);
    }
    return 0;
}

static int is_item_event(enum bt_event_type type)
{
    return type == BT_EVENT_ITEM_STARTED || type == BT_EVENT_ITEM_DELTA ||
           type == BT_EVENT_ITEM_COMPLETED;
}

/* The coder got on with the turn: the idle watchdog starts over. Once
 * the turn is being stopped, what the coder says (the answer to the
 * interrupt) is not progress: the reason it was retrying must stay. */
static void progressed(struct bt_turn *t)
{
    if (t->o->idle_timeout_ms && !t->ended)
        uv_timer_again(&t->idle);
}

static void sink_event(void *data, const struct bt_event *ev)
{
    struct bt_turn *t = data;
    if (ev->type == BT_EVENT_WARNING && !warning_allowed(t, ev))
        return;
    if (t->stop == STOP_NONE && bt_progress_event(&t->progress, ev))
        progressed(t);
    if (t->ended && is_item_event(ev->type)) {
        /* the answer is final once the coder said the turn ended */
        if (t->items_after_end++ == 0) {
            struct bt_event w;
            bt_event_init(&w, BT_EVENT_WARNING);
            w.kind = "protocol";
            w.message = "the coder sent items after the turn ended; they are ignored";
            emit(t, &w);
        }
        return;
    }
    struct bt_event copy = *ev;
    emit(t, &copy);
}

/* ---- writing to the coder ------------------------------------------- */

static void begin_stop(struct bt_turn *t, enum stop_reason why);

static void flush_writes(struct bt_turn *t)
{
    if (!t->wbuf.len)
        return;
    int rc = t->proc ? bt_proc_write(t->proc, t->wbuf.data, t->wbuf.len) : 0;
    bt_buf_reset(&t->wbuf);
    /* a coder that cannot be told what to do cannot finish the turn; after
     * the terminal event a lost write (stdin closing) changes nothing */
    if (rc < 0 && !t->ended && !t->write_error) {
        t->write_error = rc;
        begin_stop(t, STOP_BROKEN);
    }
}

/* Stop the turn. After the coder's terminal event the turn is over and
 * counts as it ended: a stop then only hastens the coder's exit. */
static void begin_stop(struct bt_turn *t, enum stop_reason why)
{
    if (!t->proc || t->done)
        return;
    if (t->ended) {
        if (why == STOP_CANCEL)
            bt_proc_stop(t->proc, 0, grace(t));
        return;
    }
    if (t->stop == STOP_NONE)
        t->stop = why;
    if (why != STOP_BROKEN && t->o->coder->runner->interrupt(t->runner, &t->wbuf) == 0) {
        flush_writes(t);
        bt_proc_stop(t->proc, grace(t), grace(t));
    } else {
        bt_proc_stop(t->proc, 0, grace(t));
    }
}

static void clear_pending(struct bt_turn *t)
{
    free(t->pending.kind);
    free(t->pending.message);
    memset(&t->pending, 0, sizeof(t->pending));
    uv_timer_stop(&t->settle);
}

static void on_end(struct bt_turn *t, const struct bt_signal *sig)
{
    if (t->ended)
        return;
    t->ended = 1;
    t->end_status = sig->status;
    if (sig->error_kind)
        t->end_kind = bt_xstrdup(sig->error_kind);
    if (sig->message)
        t->end_message = bt_xstrdup(sig->message);
    uv_timer_stop(&t->idle);
    if (t->proc) {
        bt_proc_close_stdin(t->proc);
        bt_proc_stop(t->proc, t->o->linger_ms ? t->o->linger_ms : 2000, grace(t));
    }
}

/* A tentative end that no retry followed is the end. */
static void end_pending(struct bt_turn *t)
{
    if (!t->pending.set)
        return;
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END,
                            .status = t->pending.status,
                            .error_kind = t->pending.kind,
                            .message = t->pending.message};
    on_end(t, &sig);
    clear_pending(t);
}

static void on_settle(uv_timer_t *h)
{
    end_pending(h->data);
}

/* A coder that may retry after an end (pi's auto-retry) says so within
 * BT_TURN_SETTLE_MS; until then the end waits. */
static void hold_end(struct bt_turn *t, const struct bt_signal *sig)
{
    clear_pending(t);
    t->pending.set = 1;
    t->pending.status = sig->status;
    t->pending.kind = sig->error_kind ? bt_xstrdup(sig->error_kind) : NULL;
    t->pending.message = sig->message ? bt_xstrdup(sig->message) : NULL;
    uv_timer_start(&t->settle, on_settle, BT_TURN_SETTLE_MS, 0);
}

static void sink_signal(void *data, const struct bt_signal *sig)
{
    struct bt_turn *t = data;
    if (t->stop == STOP_NONE && bt_progress_signal(&t->progress, sig))
        progressed(t);
    if (sig->type == BT_SIGNAL_RETRY || sig->type == BT_SIGNAL_PROGRESS)
        return;
    if (sig->type == BT_SIGNAL_TURN_END && sig->tentative) {
        hold_end(t, sig);
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_END) {
        clear_pending(t);
        on_end(t, sig);
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_RESUMED) {
        clear_pending(t);
        return;
    }
    if (sig->type == BT_SIGNAL_CODER_VERSION) {
        if (t->o->on_version && sig->coder_version && !t->version_seen)
            t->o->on_version(t->o->data, sig->coder_version);
        t->version_seen = 1;
        return;
    }
    if (sig->session_path) {
        free(t->session_path);
        t->session_path = bt_xstrdup(sig->session_path);
    }
    t->o->coder->runner->on_signal(t->runner, sig, &t->wbuf, &t->sink);
    flush_writes(t);
}

/* ---- reading from the coder ----------------------------------------- */

/* Parsers see text only: NUL bytes and invalid UTF-8 from the coder are
 * replaced by U+FFFD first, and reported. */
static void on_line(void *data, char *line, size_t len)
{
    struct bt_turn *t = data;
    if (!memchr(line, '\0', len) && bt_utf8_invalid_at(line, len) == len) {
        t->o->coder->parser->line(t->parser, line, len, &t->sink);
        return;
    }
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.kind = "invalid_text";
    w.message = "the coder wrote bytes that are not UTF-8 text; they were replaced";
    w.raw = line;
    w.raw_len = bt_utf8_cut(line, len, 4096);
    sink_event(t, &w);
    char *clean = bt_utf8_sanitize(line, len, NULL);
    t->o->coder->parser->line(t->parser, clean, strlen(clean), &t->sink);
    free(clean);
}

static void on_too_long(void *data, size_t dropped)
{
    struct bt_turn *t = data;
    char msg[128];
    snprintf(msg, sizeof(msg), "a line of %zu bytes exceeded the line limit and was dropped",
             dropped);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_WARNING);
    ev.kind = "input_too_large";
    ev.message = msg;
    sink_event(t, &ev);
}

static const struct bt_framer_ops framer_ops = {on_line, on_too_long};

static void on_stdout(void *data, const char *buf, size_t n)
{
    struct bt_turn *t = data;
    if (!t->read_any)
        bt_perf_mark("coder's first output");
    t->read_any = 1;
    bt_runfile_write(t->o->raw_out, buf, n);
    bt_framer_feed(&t->framer, buf, n);
    if (t->o->on_batch)
        t->o->on_batch(t->o->data);
}

/* stdout ended: whatever the coder still does, nobody will hear it. */
static void on_stdout_eof(void *data)
{
    struct bt_turn *t = data;
    if (t->ended || t->done)
        return;
    t->stdout_eof = 1;
    /* A coder may close its output and wait for its input to end before it
     * exits (claude 2.1.332 after refusing its arguments on stderr): stdin
     * is closed and it gets the linger to exit by itself, so that its exit
     * status and stderr explain the end; it is stopped after that. */
    bt_proc_close_stdin(t->proc);
    bt_proc_stop(t->proc, t->o->linger_ms ? t->o->linger_ms : 2000, grace(t));
}

static void on_stderr(void *data, const char *buf, size_t n)
{
    struct bt_turn *t = data;
    bt_runfile_write(t->o->raw_err, buf, n);
}

/* ---- watchdogs and signals ------------------------------------------ */

static void on_idle(uv_timer_t *h)
{
    begin_stop(h->data, STOP_STALL);
}

static void on_deadline(uv_timer_t *h)
{
    begin_stop(h->data, STOP_TIMEOUT);
}

static void on_tick(uv_timer_t *h)
{
    struct bt_turn *t = h->data;
    if (t->o->on_tick(t->o->data) && t->stop_signals_seen == 0) {
        t->stop_signals_seen = 1; /* a stop signal after this one kills */
        begin_stop(t, STOP_CANCEL);
    }
}

/* SIGINT, SIGTERM, SIGHUP: the first stops the turn politely, the next
 * kills the coder's group at once. */
static void on_stop_signal(uv_signal_t *h, int signum)
{
    struct bt_turn *t = h->data;
    (void)signum;
    if (++t->stop_signals_seen == 1)
        begin_stop(t, STOP_CANCEL);
    else if (t->proc && !t->done)
        bt_proc_stop(t->proc, 0, 0);
}

static void on_done(void *data, const struct bt_proc_result *r)
{
    struct bt_turn *t = data;
    t->pres = *r;
    t->done = 1;
    uv_timer_stop(&t->idle);
    uv_timer_stop(&t->deadline);
    uv_timer_stop(&t->tick);
    uv_timer_stop(&t->settle);
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        uv_signal_stop(&t->signals[i]);
}

/* ---- the final status ----------------------------------------------- */

static void set_failure(struct bt_turn_result *res, const char *kind, char *message)
{
    res->status = BT_TURN_FAILED;
    res->error_kind = kind;
    res->error_message = message;
}

/* Static storage for kinds the engine copies from parsers. */
static const char *static_kind(const char *kind)
{
    static const char *const kinds[] = {
        "not_installed",     "auth_required",    "resume_failed", "model_error",
        "rate_limited",      "context_exceeded", "coder_crashed", "stalled",
        "protocol_mismatch", "input_too_large",  "timeout",       "network_error",
    };
    for (size_t i = 0; kind && i < BT_ARRAY_SIZE(kinds); i++)
        if (strcmp(kinds[i], kind) == 0)
            return kinds[i];
    return "model_error";
}

static void settle_from_end(struct bt_turn *t, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    res->status = t->end_status;
    if (t->end_status != BT_TURN_FAILED)
        return;
    char *msg = t->end_message
                    ? bt_xasprintf("%s could not complete the turn: %s", name, t->end_message)
                    : bt_xasprintf("%s could not complete the turn", name);
    set_failure(res, static_kind(t->end_kind), msg);
}

static void settle(struct bt_turn *t, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    const char *retry = t->progress.retry_message; /* the coder's reason, if it was retrying */
    char dur[32];
    switch (t->stop) {
    case STOP_STALL:
        bt_duration_format((int64_t)t->o->idle_timeout_ms, dur);
        if (retry)
            set_failure(res, static_kind(t->progress.retry_kind),
                        bt_xasprintf("%s was retrying with no progress for %s and was stopped: %s",
                                     name, dur, retry));
        else
            set_failure(res, "stalled",
                        bt_xasprintf("%s made no progress for %s and was stopped", name, dur));
        return;
    case STOP_TIMEOUT:
        bt_duration_format((int64_t)t->o->timeout_ms, dur);
        set_failure(res, "timeout",
                    retry ? bt_xasprintf("the turn took longer than %s and was stopped; %s was "
                                         "retrying: %s",
                                         dur, name, retry)
                          : bt_xasprintf("the turn took longer than %s and was stopped", dur));
        return;
    case STOP_CANCEL: res->status = BT_TURN_CANCELLED; return;
    case STOP_BROKEN:
        set_failure(
            res, t->write_error == BT_ETOOBIG ? "input_too_large" : "coder_crashed",
            bt_xasprintf("baton could not write to %s: %s", name, bt_strerror(t->write_error)));
        return;
    case STOP_NONE: break;
    }
    if (t->ended) {
        settle_from_end(t, res);
        return;
    }
    const char *kind = "coder_crashed";
    struct bt_buf msg = BT_BUF_INIT;
    size_t tail_len = 0;
    const char *tail = t->proc ? bt_proc_stderr_tail(t->proc, &tail_len) : NULL;
    char *tail_z = tail ? bt_xstrndup(tail, tail_len) : NULL;
    if (t->o->coder->parser->diagnose)
        t->o->coder->parser->diagnose(t->parser, tail_z, tail_len, t->pres.exit_status,
                                      t->pres.term_signal, &kind, &msg);
    free(tail_z);
    if (t->stdout_eof && t->pres.stop_stage) { /* it had to be stopped */
        bt_buf_reset(&msg);
        kind = "coder_crashed";
        bt_buf_addf(&msg, "%s closed its output before the turn was complete", name);
    }
    if (!msg.len)
        bt_buf_addf(&msg, "%s ended before the turn was complete", name);
    set_failure(res, static_kind(kind), bt_buf_detach(&msg, NULL));
}

/* A replay's end: the owner's, or what the stream says (the coder's own
 * end, else the turn stopped short: interrupted or cancelled). The coder's
 * exit is not in the stream. */
static void settle_replay(struct bt_turn *t, struct bt_turn_result *res)
{
    const struct bt_turn_replay *r = t->replay;
    res->exit_code = r->end ? r->end->exit_code : BT_UNKNOWN;
    res->exit_signal = r->end ? r->end->exit_signal : 0;
    if (r->end) {
        res->status = r->end->status;
        res->error_kind = r->end->error_kind ? static_kind(r->end->error_kind) : NULL;
        res->error_message = r->end->error_message ? bt_xstrdup(r->end->error_message) : NULL;
    } else if (t->ended) {
        settle_from_end(t, res);
    } else {
        res->status = r->cancelled ? BT_TURN_CANCELLED : BT_TURN_INTERRUPTED;
        res->error_message =
            bt_xstrdup(r->cancelled ? "the turn was cancelled before the coder finished"
                                    : "the coder's output ends before the turn was complete");
    }
}

static void finish(struct bt_turn *t, struct bt_turn_result *res)
{
    if (t->pending.set && !t->ended) /* the coder left before it could retry */
        end_pending(t);
    bt_framer_finish(&t->framer);
    if (t->o->coder->parser->finish)
        t->o->coder->parser->finish(t->parser, &t->sink);
    if (t->replay) {
        settle_replay(t, res);
    } else if (!t->spawn_failed) {
        res->exit_code = t->pres.term_signal ? BT_UNKNOWN : t->pres.exit_status;
        res->exit_signal = t->pres.term_signal;
        res->stop_stage = t->pres.stop_stage;
        settle(t, res);
    }
    if (res->status == BT_TURN_FAILED) {
        struct bt_event err;
        bt_event_init(&err, BT_EVENT_ERROR);
        err.kind = res->error_kind;
        err.message = res->error_message;
        emit(t, &err);
    }
    /* a cut-short message keeps its text; an owner's end has the answer
     * even when its run file could not keep all of the stream */
    const struct bt_turn_result *owner = t->replay ? t->replay->end : NULL;
    res->final_text =
        owner && owner->final_text ? bt_xstrdup(owner->final_text) : bt_answer_text(&t->answer);
    res->usage = owner ? owner->usage : t->usage;
    res->native_session_id = t->session_id;
    res->native_session_path = t->session_path;
    t->session_path = NULL;
    t->session_id = NULL;
    res->duration_ms = !t->replay       ? bt_mono_ms() - t->t0
                       : t->replay->end ? t->replay->end->duration_ms
                                        : t->replay->duration_ms;
    if (t->proc) {
        size_t n;
        const char *tail = bt_proc_stderr_tail(t->proc, &n);
        res->stderr_tail = n ? bt_xstrndup(tail, n) : NULL;
    }
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    ev.status = res->status;
    ev.kind = res->error_kind;
    ev.message = res->error_message;
    ev.final_text = res->final_text;
    ev.usage = res->usage;
    ev.duration_ms = res->duration_ms;
    ev.exit_code = res->exit_code;
    ev.exit_signal = res->exit_signal;
    emit(t, &ev);
    res->events = t->seq;
    res->coder_ended = t->ended;
}

/* ---- setup ---------------------------------------------------------- */

static void emit_started(struct bt_turn *t)
{
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_STARTED);
    ev.coder = t->o->coder->name;
    ev.coder_version = t->o->coder_version;
    ev.model = t->o->cfg.model;
    ev.cwd = t->o->cfg.cwd;
    ev.native_session_id = t->o->cfg.native_session_id;
    ev.resumed = t->o->cfg.native_session_id != NULL;
    emit(t, &ev);
}

static int spawn(struct bt_turn *t)
{
    struct bt_strv argv;
    bt_strv_init(&argv);
    bt_strv_push(&argv, t->o->bin);
    int rc = t->o->coder->runner->build_argv(&t->o->cfg, &argv);
    if (rc == 0) {
        struct bt_proc_options po = {
            .file = t->o->bin,
            .argv = argv.v,
            .env = t->o->env,
            .cwd = t->o->cfg.cwd,
            .stdin_pipe = t->o->coder->runner->stdin_pipe,
            .on_stdout = on_stdout,
            .on_stdout_eof = on_stdout_eof,
            .on_stderr = on_stderr,
            .on_done = on_done,
            .data = t,
        };
        rc = bt_proc_spawn(&t->loop, &po, &t->proc);
    }
    bt_strv_release(&argv);
    return rc;
}

static void spawn_failed(struct bt_turn *t, int rc, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    t->done = 1;
    t->spawn_failed = 1;
    res->exit_code = BT_UNKNOWN;
    if (rc == -ENOENT || rc == -EACCES)
        set_failure(res, "not_installed",
                    bt_xasprintf("%s could not be started: %s", name, bt_strerror(rc)));
    else if (rc == -EINVAL)
        set_failure(res, "resume_failed",
                    bt_xasprintf("the native session id is not one %s can take", name));
    else
        set_failure(res, "coder_crashed",
                    bt_xasprintf("%s could not be started: %s", name, bt_strerror(rc)));
    t->stop = STOP_NONE;
}

static void timers_start(struct bt_turn *t)
{
    uv_timer_init(&t->loop, &t->idle);
    uv_timer_init(&t->loop, &t->deadline);
    uv_timer_init(&t->loop, &t->tick);
    uv_timer_init(&t->loop, &t->settle);
    t->idle.data = t->deadline.data = t->tick.data = t->settle.data = t;
    for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
        uv_signal_init(&t->loop, &t->signals[i]);
        t->signals[i].data = t;
    }
    if (t->replay) /* no time passes in a replay, and signals are the caller's */
        return;
    if (t->o->on_tick && t->o->tick_ms)
        uv_timer_start(&t->tick, on_tick, t->o->tick_ms, t->o->tick_ms);
    if (t->o->idle_timeout_ms)
        uv_timer_start(&t->idle, on_idle, t->o->idle_timeout_ms, t->o->idle_timeout_ms);
    if (t->o->timeout_ms)
        uv_timer_start(&t->deadline, on_deadline, t->o->timeout_ms, 0);
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        uv_signal_start(&t->signals[i], on_stop_signal, stop_signals[i]);
}

static void teardown(struct bt_turn *t)
{
    uv_close((uv_handle_t *)&t->idle, NULL);
    uv_close((uv_handle_t *)&t->deadline, NULL);
    uv_close((uv_handle_t *)&t->tick, NULL);
    uv_close((uv_handle_t *)&t->settle, NULL);
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        uv_close((uv_handle_t *)&t->signals[i], NULL);
    if (t->proc)
        bt_proc_free(t->proc);
    uv_run(&t->loop, UV_RUN_DEFAULT);
    uv_loop_close(&t->loop);
    bt_framer_release(&t->framer);
    t->o->coder->parser->destroy(t->parser);
    t->o->coder->runner->destroy(t->runner);
    bt_buf_release(&t->json);
    bt_buf_release(&t->wbuf);
    bt_answer_release(&t->answer);
    bt_progress_release(&t->progress);
    free(t->session_id);
    free(t->session_path);
    free(t->pending.kind);
    free(t->pending.message);
    free(t->end_kind);
    free(t->end_message);
}

/* Set t up (its loop, parser, runner, timers) and emit turn.started. */
static int begin(struct bt_turn *t, struct bt_turn_result *res)
{
    memset(res, 0, sizeof(*res));
    res->status = BT_TURN_COMPLETED;
    int rc = uv_loop_init(&t->loop);
    if (rc)
        return rc;
    t->t0 = bt_mono_ms();
    bt_answer_init(&t->answer);
    bt_progress_init(&t->progress);
    bt_usage_init(&t->usage);
    bt_framer_init(&t->framer, 0, &framer_ops, t);
    t->parser = t->o->coder->parser->create();
    t->runner = t->o->coder->runner->create(&t->o->cfg);
    t->sink = (struct bt_parser_sink){sink_event, sink_signal, t};
    timers_start(t);
    emit_started(t);
    return 0;
}

int bt_turn_replay(const struct bt_turn_options *o, const struct bt_turn_replay *r,
                   struct bt_turn_result *res)
{
    struct bt_turn t = {.o = o, .replay = r, .json = BT_BUF_INIT, .wbuf = BT_BUF_INIT};
    int rc = begin(&t, res);
    if (rc)
        return rc;
    /* the runner's lines go nowhere, but its state follows the protocol as
     * it did, so its answers and events come out as they did */
    o->coder->runner->start(t.runner, &t.wbuf);
    bt_buf_reset(&t.wbuf);
    bt_framer_feed(&t.framer, r->out, r->len);
    t.done = 1;
    finish(&t, res);
    teardown(&t);
    return 0;
}

int bt_turn_run(const struct bt_turn_options *o, struct bt_turn_result *res)
{
    struct bt_turn t = {.o = o, .json = BT_BUF_INIT, .wbuf = BT_BUF_INIT};
    int rc = begin(&t, res);
    if (rc)
        return rc;
    bt_perf_mark("turn.started");
    rc = spawn(&t);
    if (rc) {
        spawn_failed(&t, rc, res);
    } else {
        bt_perf_mark("coder spawned");
        if (o->on_spawn)
            o->on_spawn(o->data, bt_proc_pid(t.proc));
        o->coder->runner->start(t.runner, &t.wbuf);
        flush_writes(&t);
        while (!t.done)
            uv_run(&t.loop, UV_RUN_ONCE);
    }
    bt_perf_mark("coder done");
    finish(&t, res);
    teardown(&t);
    return 0;
}

void bt_turn_result_release(struct bt_turn_result *res)
{
    free(res->error_message);
    free(res->final_text);
    free(res->native_session_id);
    free(res->native_session_path);
    free(res->stderr_tail);
    memset(res, 0, sizeof(*res));
}

int bt_turn_status_exit_code(enum bt_turn_status status, const char *error_kind)
{
    switch (status) {
    case BT_TURN_COMPLETED: return 0;
    case BT_TURN_CANCELLED: return 130;
    default: break;
    }
    if (error_kind && strcmp(error_kind, "not_installed") == 0)
        return 3;
    if (error_kind && strcmp(error_kind, "auth_required") == 0)
        return 4;
    return 1;
}

int bt_turn_exit_code(const struct bt_turn_result *res)
{
    return bt_turn_status_exit_code(res->status, res->error_kind);
}
