/* SPDX-License-Identifier: MIT */
/*
 * turn: the turn engine (see turn.h). One libuv loop per turn: the process
 * group, a line framer on stdout, the coder's parser and runner, watchdog
 * timers and the stop signals; the stop escalation. How the turn ends and
 * its result: turn-end.c; events out and writes to the coder: turn-emit.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "json.h"
#include "perf.h"
#include "runfile.h"
#include "turn-int.h"

/* Signals that stop a turn: Ctrl-C, a terminal hang-up, a polite kill. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
_Static_assert(BT_ARRAY_SIZE(stop_signals) == BT_TURN_N_STOP_SIGNALS, "stop signals");

/* Warnings of one kind kept per run before the rest are dropped: a coder
 * printing noise must not turn every line into a stored event. */
#define WARNINGS_PER_KIND 100

/* ---- events --------------------------------------------------------- */

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
        bt_turn_emit(t, &note);
    }
    return 0;
}

static int is_item_event(enum bt_event_type type)
{
    return type == BT_EVENT_ITEM_STARTED || type == BT_EVENT_ITEM_DELTA ||
           type == BT_EVENT_ITEM_COMPLETED;
}

static void warn_protocol(struct bt_turn *t, const char *message)
{
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.kind = "protocol";
    w.message = message;
    bt_turn_emit(t, &w);
}

/* The streamed deltas of a message differed from its complete text. */
static void warn_text_repaired(struct bt_turn *t, const char *item_id)
{
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.kind = "repaired";
    char *msg = bt_xasprintf("the streamed text of message %.200s differed from its complete text "
                             "(a delta was lost or cut); the complete text is the item's and the "
                             "answer's",
                             item_id);
    w.message = msg;
    bt_turn_emit(t, &w);
    free(msg);
}

static void sink_event(void *data, const struct bt_event *ev)
{
    struct bt_turn *t = data;
    if (ev->type == BT_EVENT_WARNING && !warning_allowed(t, ev))
        return;
    if (t->stop == BT_TURN_STOP_NONE && bt_progress_event(&t->progress, ev))
        bt_turn_progressed(t);
    if (t->ended && is_item_event(ev->type)) {
        /* the answer is final once the coder said the turn ended */
        if (t->items_after_end++ == 0)
            warn_protocol(t, "the coder sent items after the turn ended; they are ignored");
        return;
    }
    if (t->ended && ev->type == BT_EVENT_USAGE) {
        /* so is its usage: a second result's usage is not a new request
         * of this turn, and would replace or add to the turn's totals */
        if (t->usage_after_end++ == 0)
            warn_protocol(t, "the coder reported usage after the turn ended; it is not counted");
        return;
    }
    int repaired = bt_answer_repairs(&t->answer, ev);
    struct bt_event copy = *ev;
    bt_turn_emit(t, &copy);
    if (repaired) /* no corrective delta: item.completed and final_text hold the whole text */
        warn_text_repaired(t, ev->item.id);
}

/* ---- writing to the coder ------------------------------------------- */

static void begin_stop(struct bt_turn *t, enum bt_turn_stop why);

static void on_tick(uv_timer_t *h);

/* A write to the coder failed (bt_turn_flush, turn-emit.c). */
static void stop_broken(struct bt_turn *t)
{
    begin_stop(t, BT_TURN_STOP_BROKEN);
}

/* Stop the turn. After the coder's terminal event the turn is over and
 * counts as it ended: a stop then only hastens the coder's exit. */
static void begin_stop(struct bt_turn *t, enum bt_turn_stop why)
{
    if (!t->proc || t->done)
        return;
    bt_turn_end_drain_now(t);
    if (t->ended) {
        if (why == BT_TURN_STOP_CANCEL)
            bt_proc_stop(t->proc, 0, bt_turn_grace(t));
        return;
    }
    if (t->stop == BT_TURN_STOP_NONE)
        t->stop = why;
    /* nothing is granted after the stop: whoever was asked, it is declined
     * as cancelled before the coder hears of the interrupt */
    bt_turn_ask_settle(t, "cancel");
    if (why != BT_TURN_STOP_BROKEN && t->o->coder->runner->interrupt(t->runner, &t->wbuf) == 0) {
        bt_turn_flush(t);
        bt_proc_stop(t->proc, bt_turn_grace(t), bt_turn_grace(t));
    } else {
        bt_proc_stop(t->proc, 0, bt_turn_grace(t));
    }
}

static void sink_signal(void *data, const struct bt_signal *sig)
{
    struct bt_turn *t = data;
    if (t->stop == BT_TURN_STOP_NONE && bt_progress_signal(&t->progress, sig))
        bt_turn_progressed(t);
    if (sig->type == BT_SIGNAL_RETRY || sig->type == BT_SIGNAL_PROGRESS ||
        bt_turn_steer_signal(t, sig))
        return;
    if (sig->type == BT_SIGNAL_TURN_END && (sig->turn_end.tentative || sig->turn_end.drain)) {
        bt_turn_end_hold(t, &sig->turn_end);
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_END) {
        bt_turn_end_clear_pending(t);
        if (!bt_turn_steer_owes_end(t, &sig->turn_end))
            bt_turn_end_now(t, &sig->turn_end);
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_RESUMED) {
        bt_turn_end_clear_pending(t);
        return;
    }
    if (sig->type == BT_SIGNAL_CODER_VERSION) {
        const char *v = sig->coder_version.version;
        if (t->o->on_version && v && !t->version_seen)
            t->o->on_version(t->o->data, v);
        t->version_seen = 1;
        return;
    }
    if (sig->type == BT_SIGNAL_RESPONSE && sig->response.session_path) {
        free(t->session_path);
        t->session_path = bt_xstrdup(sig->response.session_path);
    }
    /* under --approval ask a person answers, later (turn-ask.c) */
    if (sig->type == BT_SIGNAL_REQUEST && bt_turn_ask_hold(t, &sig->request))
        return;
    struct bt_signal marked = *sig;
    if (sig->type == BT_SIGNAL_REQUEST)
        /* a request that comes after the stop began is the coder's, not the
         * user's: every runner declines it as cancelled (bt_runner_accepts) */
        marked.request.stopping = t->stop != BT_TURN_STOP_NONE;
    t->o->coder->runner->on_signal(t->runner, &marked, &t->wbuf, &t->sink);
    bt_turn_flush(t);
    if (sig->type == BT_SIGNAL_RESPONSE)
        bt_turn_steer_retry(t); /* the coder may have begun the turn */
}

/* ---- reading from the coder ----------------------------------------- */

static void warn_text(struct bt_turn *t, const char *message, const char *line, size_t len)
{
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.kind = "invalid_text";
    w.message = message;
    w.raw = line;
    w.raw_len = bt_utf8_cut(line, len, 4096);
    sink_event(t, &w);
}

/* Parsers see text only: NUL bytes and invalid UTF-8 from the coder are
 * replaced by U+FFFD first, and reported; so is the escape \u0000 inside
 * its JSON, at which every parser's strings would end (json.h). */
static void on_line(void *data, char *line, size_t len)
{
    struct bt_turn *t = data;
    bt_turn_end_heard(t);
    if (bt_json_has_nul(line, len)) {
        char *orig = bt_xmalloc(len + 1); /* the warning shows what the coder wrote */
        memcpy(orig, line, len + 1);
        if (bt_json_nul_replace(line, len))
            warn_text(t,
                      "the coder wrote an escaped NUL character (\\u0000); it was replaced by "
                      "U+FFFD and the text after it kept",
                      orig, len);
        free(orig);
    }
    if (!memchr(line, '\0', len) && bt_utf8_invalid_at(line, len) == len) {
        t->o->coder->parser->line(t->parser, line, len, &t->sink);
        return;
    }
    warn_text(t, "the coder wrote bytes that are not UTF-8 text; they were replaced", line, len);
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
    bt_framer_feed(&t->framer, buf, n);
    bt_turn_batch(t);
    /* the raw copy after the batch's commit and its send to followers:
     * its compression and write are not on the way of a live event */
    bt_runfile_write(t->o->raw_out, buf, n);
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
    bt_proc_stop(t->proc, t->o->linger_ms ? t->o->linger_ms : 2000, bt_turn_grace(t));
}

static void on_stderr(void *data, const char *buf, size_t n)
{
    struct bt_turn *t = data;
    bt_runfile_write(t->o->raw_err, buf, n);
}

/* ---- watchdogs and signals ------------------------------------------ */

/* The idle watchdog. A coder waiting on a person is not stalled: the
 * person's time is up, the policy behind ask declines what waits, by
 * "timeout", and the coder gets another idle period to go on. */
static void on_idle(uv_timer_t *h)
{
    struct bt_turn *t = h->data;
    if (t->stop == BT_TURN_STOP_NONE && !t->ended && bt_turn_ask_settle(t, "timeout"))
        return;
    begin_stop(t, BT_TURN_STOP_STALL);
}

static void on_deadline(uv_timer_t *h)
{
    begin_stop(h->data, BT_TURN_STOP_TIMEOUT);
}

static void on_tick(uv_timer_t *h)
{
    struct bt_turn *t = h->data;
    if (t->o->on_tick(t->o->data) && t->stop_signals_seen == 0) {
        t->stop_signals_seen = 1; /* a stop signal after this one kills */
        begin_stop(t, BT_TURN_STOP_CANCEL);
    }
}

uv_loop_t *bt_turn_loop(struct bt_turn *t)
{
    return &t->loop;
}

int bt_turn_stop(struct bt_turn *t)
{
    if (!t->proc || t->done)
        return -EALREADY;
    int ended = t->ended;
    if (t->stop_signals_seen == 0) {
        t->stop_signals_seen = 1; /* a stop signal after this one kills */
        begin_stop(t, BT_TURN_STOP_CANCEL);
    }
    return ended ? -EALREADY : 0;
}

/* SIGINT, SIGTERM, SIGHUP: the first stops the turn politely, the next
 * kills the coder's group at once. */
static void on_stop_signal(uv_signal_t *h, int signum)
{
    struct bt_turn *t = h->data;
    (void)signum;
    if (++t->stop_signals_seen == 1)
        begin_stop(t, BT_TURN_STOP_CANCEL);
    else if (t->proc && !t->done)
        bt_proc_stop(t->proc, 0, 0);
}

static void on_done(void *data, const struct bt_proc_result *r)
{
    struct bt_turn *t = data;
    t->pres = *r;
    t->done = 1;
    /* the coder is gone: what still waited for a person was never
     * answered; said so before turn.completed (no write reaches it) */
    bt_turn_ask_settle(t, "cancel");
    uv_timer_stop(&t->idle);
    uv_timer_stop(&t->deadline);
    uv_timer_stop(&t->tick);
    uv_timer_stop(&t->settle);
    for (size_t i = 0; i < BT_TURN_N_STOP_SIGNALS; i++)
        uv_signal_stop(&t->signals[i]);
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
    bt_turn_emit(t, &ev);
}

static int spawn(struct bt_turn *t)
{
    struct bt_strv argv;
    bt_strv_init(&argv);
    bt_strv_push(&argv, t->o->bin);
    int rc = t->o->coder->runner->build_argv(&t->o->cfg, &argv);
    t->argv_refused = rc != 0;
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

/* Before the loop waits, what was emitted since the last point to commit
 * is committed (a timer's warning, a steer taken, a request delivered):
 * an open batch holds the store's write lock, and no other run may wait
 * on a quiet coder. */
static void on_prepare(uv_prepare_t *h)
{
    bt_turn_batch(h->data);
}

static void timers_start(struct bt_turn *t)
{
    uv_timer_init(&t->loop, &t->idle);
    uv_timer_init(&t->loop, &t->deadline);
    uv_timer_init(&t->loop, &t->tick);
    uv_timer_init(&t->loop, &t->settle);
    t->idle.data = t->deadline.data = t->tick.data = t->settle.data = t;
    for (size_t i = 0; i < BT_TURN_N_STOP_SIGNALS; i++) {
        uv_signal_init(&t->loop, &t->signals[i]);
        t->signals[i].data = t;
    }
    uv_prepare_init(&t->loop, &t->batch);
    t->batch.data = t;
    if (t->replay) /* no time passes in a replay, and signals are the caller's */
        return;
    uv_prepare_start(&t->batch, on_prepare);
    if (t->o->on_tick && t->o->tick_ms)
        uv_timer_start(&t->tick, on_tick, t->o->tick_ms, t->o->tick_ms);
    if (t->o->idle_timeout_ms)
        uv_timer_start(&t->idle, on_idle, t->o->idle_timeout_ms, t->o->idle_timeout_ms);
    if (t->o->timeout_ms)
        uv_timer_start(&t->deadline, on_deadline, t->o->timeout_ms, 0);
    for (size_t i = 0; i < BT_TURN_N_STOP_SIGNALS; i++)
        uv_signal_start(&t->signals[i], on_stop_signal, stop_signals[i]);
}

static void teardown(struct bt_turn *t)
{
    uv_close((uv_handle_t *)&t->idle, NULL);
    uv_close((uv_handle_t *)&t->deadline, NULL);
    uv_close((uv_handle_t *)&t->tick, NULL);
    uv_close((uv_handle_t *)&t->settle, NULL);
    uv_close((uv_handle_t *)&t->batch, NULL);
    for (size_t i = 0; i < BT_TURN_N_STOP_SIGNALS; i++)
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
    bt_turn_ask_release(t);
    free(t->session_id);
    free(t->session_path);
    free(t->pending.message);
    free(t->end_message);
}

/* Set t up (its loop, parser, runner, timers) and emit turn.started. */
static int begin(struct bt_turn *t, struct bt_turn_result *res)
{
    memset(res, 0, sizeof(*res));
    res->status = BT_TURN_COMPLETED;
    t->broken = stop_broken;
    int rc = uv_loop_init(&t->loop);
    if (rc)
        return rc;
    t->t0 = bt_mono_ms();
    bt_answer_init(&t->answer);
    bt_progress_init(&t->progress);
    bt_usage_init(&t->usage);
    bt_strv_init(&t->always);
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
    bt_turn_steer_finish(&t);
    bt_turn_end_finish(&t, res);
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
        bt_turn_end_spawn_failed(&t, rc, res);
    } else {
        bt_perf_mark("coder spawned");
        if (o->on_spawn)
            o->on_spawn(o->data, bt_proc_pid(t.proc));
        o->coder->runner->start(t.runner, &t.wbuf);
        bt_turn_flush(&t);
        if (o->on_loop)
            o->on_loop(o->data, &t);
        bt_turn_batch(&t); /* turn.started */
        while (!t.done) {
            uv_run(&t.loop, UV_RUN_ONCE);
            bt_turn_batch(&t); /* what the pass's last timers emitted */
        }
        if (o->on_loop && o->on_loop_end)
            o->on_loop_end(o->data, &t);
    }
    bt_perf_mark("coder done");
    bt_turn_steer_finish(&t);
    bt_turn_end_finish(&t, res);
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
