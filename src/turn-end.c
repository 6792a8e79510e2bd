/* SPDX-License-Identifier: MIT */
/*
 * turn-end: how a turn ends (see turn.h). The coder's own end, held a while
 * when it is tentative; then the settling of the result from what happened
 * (the coder's end, a stop baton made, a coder that left early, a replay's
 * end) and the last events, error and turn.completed.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "turn-int.h"

/* ---- the coder's end ------------------------------------------------ */

void bt_turn_end_clear_pending(struct bt_turn *t)
{
    free(t->pending.message);
    memset(&t->pending, 0, sizeof(t->pending));
    uv_timer_stop(&t->settle);
}

/* A second end (claude's second `result`, codex's second turn/completed of
 * the turn, pi's agent_end after the end, an ACP prompt answered again)
 * changes nothing: the first end and its usage stand; the first repeat
 * is said. */
static void end_again(struct bt_turn *t)
{
    if (t->ends_after_end++)
        return;
    struct bt_event w;
    bt_event_init(&w, BT_EVENT_WARNING);
    w.kind = "protocol";
    w.message = "the coder ended the turn again after its end; the later end is ignored";
    bt_turn_emit(t, &w);
}

void bt_turn_end_now(struct bt_turn *t, const struct bt_signal_turn_end *end)
{
    if (t->ended) {
        end_again(t);
        return;
    }
    t->ended = 1;
    t->end_status = end->status;
    t->end_kind = end->error_kind;
    t->end_unexplained = end->unexplained;
    if (end->message)
        t->end_message = bt_xstrdup(end->message);
    uv_timer_stop(&t->idle);
    if (t->proc) {
        bt_proc_close_stdin(t->proc);
        bt_proc_stop(t->proc, t->o->linger_ms ? t->o->linger_ms : 2000, bt_turn_grace(t));
    }
}

/* A tentative end that no retry followed is the end. */
static void end_pending(struct bt_turn *t)
{
    if (!t->pending.set)
        return;
    struct bt_signal_turn_end end = {.status = t->pending.status,
                                     .error_kind = t->pending.kind,
                                     .message = t->pending.message,
                                     .unexplained = t->pending.unexplained};
    bt_turn_end_now(t, &end);
    bt_turn_end_clear_pending(t);
}

/* A drained end: the parser closes what is still open (a message whose
 * tail came after the answer) while its items still count, then it ends. */
static void end_drained(struct bt_turn *t)
{
    if (t->pending.set && t->pending.drain && t->o->coder->parser->finish)
        t->o->coder->parser->finish(t->parser, &t->sink);
    end_pending(t);
}

static void on_settle(uv_timer_t *h)
{
    end_drained(h->data);
}

void bt_turn_end_drain_now(struct bt_turn *t)
{
    if (t->pending.set && t->pending.drain)
        end_drained(t);
}

/* A coder that may retry after an end (pi's auto-retry) says so within
 * BT_TURN_SETTLE_MS; until then the end waits. An end that drains (ACP)
 * waits for BT_TURN_DRAIN_MS of quiet instead. */
void bt_turn_end_hold(struct bt_turn *t, const struct bt_signal_turn_end *end)
{
    bt_turn_end_clear_pending(t);
    t->pending.set = 1;
    t->pending.status = end->status;
    t->pending.kind = end->error_kind;
    t->pending.message = end->message ? bt_xstrdup(end->message) : NULL;
    t->pending.unexplained = end->unexplained;
    t->pending.drain = end->drain;
    t->pending.drain_until = bt_mono_ms() + BT_TURN_DRAIN_MAX_MS;
    uv_timer_start(&t->settle, on_settle, end->drain ? BT_TURN_DRAIN_MS : BT_TURN_SETTLE_MS, 0);
}

void bt_turn_end_heard(struct bt_turn *t)
{
    if (!t->pending.set || !t->pending.drain || t->replay)
        return;
    int64_t left = t->pending.drain_until - bt_mono_ms();
    if (left < 0)
        left = 0;
    uv_timer_start(&t->settle, on_settle,
                   left < BT_TURN_DRAIN_MS ? (uint64_t)left : BT_TURN_DRAIN_MS, 0);
}

/* ---- the final status ----------------------------------------------- */

/* A failure without a kind is model_error: the model request failed, and
 * nothing says more. */
static void set_failure(struct bt_turn_result *res, enum bt_error_kind kind, char *message)
{
    res->status = BT_TURN_FAILED;
    res->error_kind = kind != BT_ERROR_KIND_NONE ? kind : BT_ERROR_KIND_MODEL_ERROR;
    res->error_message = message;
}

void bt_turn_end_spawn_failed(struct bt_turn *t, int rc, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    t->done = 1;
    t->spawn_failed = 1;
    res->exit_code = BT_UNKNOWN;
    /* build_argv refuses a session id or a model that could become a flag
     * (the CLI checks the model first, so it is the stored session); an
     * error of the spawn itself says nothing about the session */
    if (t->argv_refused && (t->o->cfg.native_session_id || t->o->cfg.native_session_path))
        set_failure(res, BT_ERROR_KIND_RESUME_FAILED,
                    bt_xasprintf("the native session is not one %s can take", name));
    else if (t->argv_refused)
        set_failure(res, BT_ERROR_KIND_MODEL_ERROR,
                    bt_xasprintf("%s cannot take the turn's settings (model)", name));
    else if (rc == -ENOENT || rc == -EACCES)
        set_failure(res, BT_ERROR_KIND_NOT_INSTALLED,
                    bt_xasprintf("%s could not be started: %s", name, bt_strerror(rc)));
    else
        set_failure(res, BT_ERROR_KIND_CODER_CRASHED,
                    bt_xasprintf("%s could not be started: %s", name, bt_strerror(rc)));
    t->stop = BT_TURN_STOP_NONE;
}

/* An end that said failed but not why: what the coder's stderr says, as
 * its parser reads it, is the reason (": " before it), else nothing. */
static void explain_end(struct bt_turn *t, struct bt_buf *why)
{
    if (!t->end_unexplained || !t->o->coder->parser->explain || !t->proc)
        return;
    size_t n = 0;
    const char *tail = bt_proc_stderr_tail(t->proc, &n);
    char *tail_z = tail ? bt_xstrndup(tail, n) : NULL;
    struct bt_buf msg = BT_BUF_INIT;
    t->o->coder->parser->explain(t->parser, tail_z, n, &t->end_kind, &msg);
    if (msg.len)
        bt_buf_addf(why, ": %s", msg.data);
    bt_buf_release(&msg);
    free(tail_z);
}

/* The kind of a failure the coder gave no more precise kind for: a rate
 * or usage limit when its words say so, for every coder alike
 * (bt_error_text_rate_limited). */
static enum bt_error_kind kind_from_words(enum bt_error_kind kind, const char *message)
{
    if ((kind == BT_ERROR_KIND_NONE || kind == BT_ERROR_KIND_MODEL_ERROR) &&
        bt_error_text_rate_limited(message))
        return BT_ERROR_KIND_RATE_LIMITED;
    return kind;
}

static void settle_from_end(struct bt_turn *t, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    res->status = t->end_status;
    if (t->end_status != BT_TURN_FAILED)
        return;
    struct bt_buf msg = BT_BUF_INIT;
    bt_buf_addf(&msg, "%s could not complete the turn", name);
    if (t->end_message) {
        /* a reset time the coder gives is kept, made readable */
        char *readable = bt_error_text_readable(t->end_message);
        bt_buf_addf(&msg, ": %s", readable ? readable : t->end_message);
        free(readable);
    }
    explain_end(t, &msg);
    set_failure(res, kind_from_words(t->end_kind, msg.data), bt_buf_detach(&msg, NULL));
}

/* A turn that ended without the coder's end: why, from the parser's
 * diagnosis of its exit and stderr. */
static void settle_early_exit(struct bt_turn *t, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    enum bt_error_kind kind = BT_ERROR_KIND_CODER_CRASHED;
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
        kind = BT_ERROR_KIND_CODER_CRASHED;
        bt_buf_addf(&msg, "%s closed its output before the turn was complete", name);
    }
    if (!msg.len)
        bt_buf_addf(&msg, "%s ended before the turn was complete", name);
    set_failure(res, kind, bt_buf_detach(&msg, NULL));
}

static void settle(struct bt_turn *t, struct bt_turn_result *res)
{
    const char *name = t->o->coder->name;
    const char *retry = t->progress.retry_message; /* the coder's reason, if it was retrying */
    char dur[32];
    switch (t->stop) {
    case BT_TURN_STOP_STALL:
        bt_duration_format((int64_t)t->o->idle_timeout_ms, dur);
        if (retry)
            set_failure(res, kind_from_words(t->progress.retry_kind, retry),
                        bt_xasprintf("%s was retrying with no progress for %s and was stopped: %s",
                                     name, dur, retry));
        else
            set_failure(res, BT_ERROR_KIND_STALLED,
                        bt_xasprintf("%s made no progress for %s and was stopped", name, dur));
        return;
    case BT_TURN_STOP_TIMEOUT:
        bt_duration_format((int64_t)t->o->timeout_ms, dur);
        set_failure(res, BT_ERROR_KIND_TIMEOUT,
                    retry ? bt_xasprintf("the turn took longer than %s and was stopped; %s was "
                                         "retrying: %s",
                                         dur, name, retry)
                          : bt_xasprintf("the turn took longer than %s and was stopped", dur));
        return;
    case BT_TURN_STOP_CANCEL: res->status = BT_TURN_CANCELLED; return;
    case BT_TURN_STOP_BROKEN:
        set_failure(
            res,
            t->write_error == BT_ETOOBIG ? BT_ERROR_KIND_INPUT_TOO_LARGE
                                         : BT_ERROR_KIND_CODER_CRASHED,
            bt_xasprintf("baton could not write to %s: %s", name, bt_strerror(t->write_error)));
        return;
    case BT_TURN_STOP_NONE: break;
    }
    if (t->ended)
        settle_from_end(t, res);
    else
        settle_early_exit(t, res);
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
        res->error_kind = r->end->error_kind;
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

/* ---- the last events ------------------------------------------------ */

void bt_turn_end_finish(struct bt_turn *t, struct bt_turn_result *res)
{
    /* the rest of the stream first: while an end is only tentative (or
     * drains), what the coder said last still belongs to the turn */
    bt_framer_finish(&t->framer);
    if (t->o->coder->parser->finish)
        t->o->coder->parser->finish(t->parser, &t->sink);
    if (t->pending.set && !t->ended) /* the coder left before it could retry */
        end_pending(t);
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
        err.kind = bt_error_kind_name(res->error_kind);
        err.message = res->error_message;
        bt_turn_emit(t, &err);
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
    ev.kind = bt_error_kind_name(res->error_kind);
    ev.message = res->error_message;
    ev.final_text = res->final_text;
    ev.usage = res->usage;
    ev.duration_ms = res->duration_ms;
    ev.exit_code = res->exit_code;
    ev.exit_signal = res->exit_signal;
    /* on_end may take long (a large working tree read): what came since
     * the loop is committed before it */
    bt_turn_batch(t);
    char *changes = !t->replay && t->o->on_end ? t->o->on_end(t->o->data) : NULL;
    ev.changes_json = t->replay ? t->replay->changes_json : changes;
    bt_turn_emit(t, &ev);
    free(changes);
    res->events = t->seq;
    res->coder_ended = t->ended;
}
