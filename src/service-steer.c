/* SPDX-License-Identifier: MIT */
/*
 * service-steer: a person's message put into a running turn (service.h
 * bt_service_steer). It is stored first as a control request of kind
 * steer; the turn's owner delivers it on the turn's loop
 * (service-control.c's table: bt_service_steer_deliver), the turn engine
 * writes it on the coder's protocol (turn.h bt_turn_steer) and says
 * whether the coder took it in (bt_service_steer_outcome). What does not
 * go into the turn (no turn runs, the coder cannot steer, the turn ended
 * first, the coder refused it, the owner died) waits as the next turn's
 * queued message: the control is finished queued and the message stored
 * in one transaction (bt_store_control_queue), so the text is never lost
 * and never both in the turn and queued.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "input.h"
#include "json.h"
#include "service-int.h"
#include "turn.h"

/* How often bt_service_steer looks whether the owner, woken through its
 * channel, has delivered its request (ms). */
#define STEER_POLL_MS 10

void bt_service_steered_release(struct bt_service_steered *out)
{
    free(out->reason);
    free(out->message);
    memset(out, 0, sizeof(*out));
}

/* {"reason": why} (owned). */
static char *reason_json(const char *why)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reason", why);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* The text of steer request c (owned), NULL if its body has none; the
 * sender's settings in *st when given, 1 in *has if there were any. */
static char *steer_text(const struct bt_store_control *c, struct bt_store_settings *st, int *has)
{
    cJSON *body = cJSON_Parse(c->body);
    const char *text = bt_json_str(body, "text");
    char *copy = text ? bt_xstrdup(text) : NULL;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(body, "settings");
    if (st && cJSON_IsObject(set)) {
        *has = 1;
        int64_t a = bt_json_count(set, "approval"), to = bt_json_count(set, "timeout_ms"),
                idle = bt_json_count(set, "idle_timeout_ms");
        st->approval = a >= 0 && a <= BT_APPROVAL_NEVER ? (int)a : BT_APPROVAL_DENY;
        st->timeout_ms = to > 0 ? (uint64_t)to : 0;
        st->idle_timeout_ms = idle > 0 ? (uint64_t)idle : 0;
        st->no_retry = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(set, "no_retry"));
    }
    cJSON_Delete(body);
    return copy;
}

/* Queue c's text as the next turn's message, saying why. */
static void queue(struct bt_store *s, const struct bt_store_control *c, const char *why)
{
    struct bt_store_settings st = {0};
    int has = 0;
    char *text = steer_text(c, &st, &has);
    if (text) {
        bt_store_control_queue(s, c->id, text, why, has ? &st : NULL, NULL);
    } else { /* stored by no baton: nothing to queue */
        char *result = reason_json("the request holds no text");
        bt_store_control_finish(s, c->id, BT_STORE_CONTROL_REFUSED, result);
        free(result);
    }
    free(text);
}

void bt_service_steer_deliver(struct bt_store *s, struct bt_turn *t,
                              const struct bt_store_control *c)
{
    char *text = steer_text(c, NULL, NULL);
    int rc = text ? bt_turn_steer(t, c->id, text) : -EINVAL;
    free(text);
    if (rc == 0)
        return; /* the engine's word comes through bt_service_steer_outcome */
    queue(s, c,
          rc == -ENOTSUP ? "the coder cannot steer a running turn"
                         : "the turn was ending: it could take nothing more");
}

void bt_service_steer_stranded(struct bt_store *s, const struct bt_store_control *c)
{
    queue(s, c, "the turn had ended");
}

void bt_service_steer_outcome(struct bt_store *s, int64_t control, int taken, const char *why)
{
    if (taken) {
        bt_store_control_finish(s, control, BT_STORE_CONTROL_DONE, "{\"steered\":true}");
        return;
    }
    struct bt_store_control c;
    if (bt_store_control_get(s, control, &c) != 0)
        return;
    queue(s, &c, why ? why : "the coder did not take it in");
    bt_store_control_release(&c);
}

/* --- the request ------------------------------------------------------ */

static int fail(struct bt_service_steered *out, int rc, char *message)
{
    out->message = message;
    return rc;
}

/* The sender's settings, kept with what it queues (service.c's rule). */
static struct bt_store_settings settings_of(const struct bt_service_turn *t)
{
    return (struct bt_store_settings){.approval = (int)t->approval,
                                      .timeout_ms = t->timeout_ms,
                                      .idle_timeout_ms = t->idle_timeout_ms,
                                      .no_retry = t->no_retry};
}

/* No turn to steer: text waits as the next turn's message, at once. */
static int queue_now(struct bt_store *s, const struct bt_store_conversation *conv, const char *text,
                     const struct bt_service_turn *t, const char *why,
                     struct bt_service_steered *out)
{
    struct bt_store_settings st = settings_of(t);
    struct bt_store_run_new o = {.conversation = conv->id,
                                 .coder = conv->coder,
                                 .model = conv->model,
                                 .user_text = text,
                                 .queue = BT_STORE_QUEUE_ALWAYS,
                                 .max_prompt = BT_SERVICE_PROMPT_MAX,
                                 .settings = &st};
    struct bt_store_submitted sub;
    int rc = bt_store_run_submit(s, &o, &sub);
    if (rc == 0) {
        out->state = BT_STORE_CONTROL_QUEUED;
        out->queue_no = sub.queue_no;
        out->reason = bt_xstrdup(why);
    }
    bt_store_submitted_release(&sub);
    return rc ? fail(out, rc, bt_xasprintf("cannot queue the message: %s", bt_store_errmsg(s))) : 0;
}

static void nap(unsigned ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait up to wait_ms for control id to leave pending; fill out. */
static int await(struct bt_store *s, int64_t id, uint64_t wait_ms, struct bt_service_steered *out)
{
    int64_t until = bt_mono_ms() + (int64_t)wait_ms;
    for (;;) {
        struct bt_store_control c;
        int rc = bt_store_control_get(s, id, &c);
        if (rc)
            return fail(out, rc, bt_xasprintf("cannot read the request: %s", bt_store_errmsg(s)));
        out->state = c.state;
        if (c.state == BT_STORE_CONTROL_QUEUED || c.state == BT_STORE_CONTROL_REFUSED) {
            cJSON *r = cJSON_Parse(c.result ? c.result : "{}");
            const char *why = bt_json_str(r, "reason");
            const cJSON *no = cJSON_GetObjectItemCaseSensitive(r, "queue_no");
            out->reason = why ? bt_xstrdup(why) : NULL;
            out->queue_no = cJSON_IsNumber(no) ? (int64_t)no->valuedouble : 0;
            cJSON_Delete(r);
        }
        bt_store_control_release(&c);
        if (out->state != BT_STORE_CONTROL_PENDING || bt_mono_ms() >= until)
            return 0;
        nap(STEER_POLL_MS);
    }
}

/* The request's body: {"text", "settings": {approval, timeout_ms,
 * idle_timeout_ms, no_retry}} (owned). */
static char *body_of(const char *text, const struct bt_service_turn *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", text);
    cJSON *st = cJSON_AddObjectToObject(o, "settings");
    cJSON_AddNumberToObject(st, "approval", (double)t->approval);
    cJSON_AddNumberToObject(st, "timeout_ms", (double)t->timeout_ms);
    cJSON_AddNumberToObject(st, "idle_timeout_ms", (double)t->idle_timeout_ms);
    cJSON_AddBoolToObject(st, "no_retry", t->no_retry);
    char *body = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return body;
}

int bt_service_steer(struct bt_store *s, const char *conv_id, const char *text,
                     const struct bt_service_turn *t, uint64_t wait_ms,
                     struct bt_service_steered *out)
{
    memset(out, 0, sizeof(*out));
    char *problem = bt_input_prompt_problem(text, strlen(text));
    if (problem)
        return fail(out, -EINVAL, problem);
    struct bt_store_conversation conv;
    int rc = bt_store_conversation_get(s, conv_id, &conv);
    if (rc)
        return fail(out, rc, bt_xasprintf("no conversation %s", conv_id));
    if (conv.status == BT_STORE_CONV_TRANSFERRED) {
        bt_store_conversation_release(&conv);
        return fail(
            out, -EPERM,
            bt_xasprintf("conversation %s was handed off to its coder's terminal UI", conv_id));
    }
    const struct bt_coder *coder = bt_coder_find(conv.coder);
    if (conv.last_run_state != BT_STORE_RUN_RUNNING) {
        rc = queue_now(s, &conv, text, t, "no turn was running", out);
    } else if (!coder || !bt_coder_steers(coder)) {
        char *why = bt_xasprintf("%s cannot steer a running turn", conv.coder);
        rc = queue_now(s, &conv, text, t, why, out);
        free(why);
    } else {
        memcpy(out->run, conv.last_run, sizeof(out->run));
        char *body = body_of(text, t);
        rc = bt_store_control_add(s, conv.id, conv.last_run, "steer", body, &out->control);
        free(body);
        if (rc == -EALREADY) /* the turn ended meanwhile */
            rc = queue_now(s, &conv, text, t, "the turn had ended", out);
        else if (rc)
            rc = fail(out, rc, bt_xasprintf("cannot store the steer: %s", bt_store_errmsg(s)));
        else {
            bt_service_control_wake(s, conv.last_run); /* else its owner reads it within 1 s */
            rc = await(s, out->control, wait_ms, out);
        }
    }
    bt_store_conversation_release(&conv);
    return rc;
}
