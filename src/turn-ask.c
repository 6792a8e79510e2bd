/* SPDX-License-Identifier: MIT */
/*
 * turn-ask: approval requests and questions answered by a person
 * (BT_APPROVAL_ASK, turn.h bt_turn_decide). The engine keeps such a
 * request instead of letting the runner answer it by policy; the loop
 * goes on meanwhile, and the answer is written when it comes, through
 * the runner's answer op (runners/runner.h). The request is declined by
 * "timeout" when the idle watchdog fires first, by "cancel" once the turn
 * is being stopped or the coder ended.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "turn-int.h"

static char *dup_or_null(const char *s)
{
    return s ? bt_xstrdup(s) : NULL;
}

static struct bt_turn_held *held_new(const struct bt_signal_request *rq)
{
    struct bt_turn_held *h = bt_xcalloc(1, sizeof(*h));
    h->rq = (struct bt_signal_request){
        .request_id = dup_or_null(rq->request_id),
        .method = dup_or_null(rq->method),
        .approval_kind = dup_or_null(rq->approval_kind),
        .summary = dup_or_null(rq->summary),
        .item_id = dup_or_null(rq->item_id),
        .params_json = dup_or_null(rq->params_json),
        .questions_json = dup_or_null(rq->questions_json),
    };
    bt_event_request_id(rq->request_id, h->id, sizeof(h->id));
    return h;
}

static void held_free(struct bt_turn_held *h)
{
    /* the strings are this copy's own (held_new): const only in the type */
    free((char *)h->rq.request_id);
    free((char *)h->rq.method);
    free((char *)h->rq.approval_kind);
    free((char *)h->rq.summary);
    free((char *)h->rq.item_id);
    free((char *)h->rq.params_json);
    free((char *)h->rq.questions_json);
    free(h);
}

/* Write the answer d to rq through the runner, then to the coder. */
static void answer(struct bt_turn *t, const struct bt_signal_request *rq,
                   const struct bt_runner_decision *d)
{
    t->o->coder->runner->answer(t->runner, rq, d, &t->wbuf, &t->sink);
    if (t->done) /* the coder is gone: the answer is for the record only */
        bt_buf_reset(&t->wbuf);
    else
        bt_turn_flush(t);
    /* approval.resolved came from no read of the coder's output, after
     * which the caller commits: it is a point to commit too */
    bt_turn_batch(t);
}

static int allowed_always(const struct bt_turn *t, const char *kind)
{
    for (size_t i = 0; i < t->always.n; i++)
        if (strcmp(t->always.v[i], kind) == 0)
            return 1;
    return 0;
}

int bt_turn_ask_hold(struct bt_turn *t, const struct bt_signal_request *rq)
{
    if (t->replay || t->o->cfg.approval != BT_APPROVAL_ASK || !rq->approval_kind ||
        !rq->request_id || !t->o->coder->runner->answer || t->stop != BT_TURN_STOP_NONE)
        return 0;
    if (t->o->cfg.ask_no_questions && bt_runner_is_question(rq))
        return 0; /* nobody there can answer one: the policy declines it */
    /* "allow always" covers approvals of its kind; a question still wants words */
    if (allowed_always(t, rq->approval_kind) && !bt_runner_is_question(rq)) {
        answer(t, rq, &(struct bt_runner_decision){.accept = 1, .by = "user"});
        return 1;
    }
    if (t->n_held == BT_TURN_HELD_MAX)
        return 0; /* the policy behind ask (deny) decides */
    t->held[t->n_held++] = held_new(rq);
    return 1;
}

/* Take request i out of the waiting list; the caller frees it. */
static struct bt_turn_held *take(struct bt_turn *t, size_t i)
{
    struct bt_turn_held *h = t->held[i];
    memmove(&t->held[i], &t->held[i + 1], (t->n_held - i - 1) * sizeof(struct bt_turn_held *));
    t->n_held--;
    return h;
}

/* What the policy behind ask says of rq when its time is up. */
static int fallback_accepts(const struct bt_turn *t, const struct bt_signal_request *rq)
{
    enum bt_approval f = t->o->cfg.ask_fallback;
    return (f == BT_APPROVAL_AUTO || f == BT_APPROVAL_NEVER) && !bt_runner_is_question(rq);
}

size_t bt_turn_ask_settle(struct bt_turn *t, const char *by)
{
    size_t n = t->n_held;
    int timeout = strcmp(by, "timeout") == 0;
    while (t->n_held) {
        struct bt_turn_held *h = take(t, 0);
        int accept = timeout && fallback_accepts(t, &h->rq);
        answer(t, &h->rq, &(struct bt_runner_decision){.accept = accept, .by = by});
        held_free(h);
    }
    return n;
}

void bt_turn_ask_release(struct bt_turn *t)
{
    while (t->n_held)
        held_free(take(t, t->n_held - 1));
    bt_strv_release(&t->always);
}

/* 1 if text is a JSON array of arrays of strings (answers_json's shape). */
static int answers_ok(const char *text)
{
    cJSON *a = cJSON_Parse(text);
    int ok = cJSON_IsArray(a);
    const cJSON *one;
    cJSON_ArrayForEach(one, a)
    {
        const cJSON *s;
        ok = ok && cJSON_IsArray(one);
        cJSON_ArrayForEach(s, one) ok = ok && cJSON_IsString(s);
    }
    cJSON_Delete(a);
    return ok;
}

int bt_turn_decide(struct bt_turn *t, const char *request_id, const struct bt_turn_decision *d)
{
    size_t i = 0;
    while (i < t->n_held && strcmp(t->held[i]->id, request_id) != 0)
        i++;
    if (i == t->n_held)
        return -ENOENT;
    const struct bt_signal_request *rq = &t->held[i]->rq;
    int question = bt_runner_is_question(rq);
    if (d->answers_json && (!question || !answers_ok(d->answers_json)))
        return -EINVAL;
    /* answers the coder could not take (a form's field of another type):
     * refused before anything is written, the request still waiting */
    const struct bt_runner_ops *ops = t->o->coder->runner;
    char *why = d->accept && question && ops->answer_problem
                    ? ops->answer_problem(rq, d->answers_json)
                    : NULL;
    if (why) {
        if (d->why)
            *d->why = why;
        else
            free(why);
        return -EINVAL;
    }
    struct bt_turn_held *h = take(t, i);
    if (d->accept && d->always && !question && !allowed_always(t, rq->approval_kind))
        bt_strv_push(&t->always, rq->approval_kind);
    answer(t, &h->rq,
           &(struct bt_runner_decision){
               .accept = d->accept, .by = "user", .answers_json = d->answers_json});
    held_free(h);
    /* the coder goes on now: the wait for the person was not the coder idling */
    if (t->stop == BT_TURN_STOP_NONE)
        bt_turn_progressed(t);
    return 0;
}
