/* SPDX-License-Identifier: MIT */
/*
 * service-ask: a person answers the approval requests and questions of a
 * running turn (--approval ask). What waits is read from the stored
 * events (approval.requested without its approval.resolved); a decision
 * is stored first as a control request of kind "decision" (store.h,
 * "controls"), then the run's owner gives it to the coder on the turn's
 * loop (the "decision" line of service-control.c's table: the handlers
 * here), which records who decided in approval.resolved. A request that
 * was answered, or declined by timeout or by the stop, takes no late
 * answer: the service refuses it when it can see so, the owner when the
 * two crossed.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "json.h"
#include "service-int.h"
#include "turn.h"
#include "util.h"

/* How often a decision's wait looks whether the owner took it, in ms. */
#define DECIDE_POLL_MS 20

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void request_release(struct bt_service_request *r)
{
    free(r->request_id);
    free(r->kind);
    free(r->summary);
    free(r->questions_json);
    free(r->event_json);
}

void bt_service_requests_release(struct bt_service_requests *r)
{
    for (size_t i = 0; i < r->n; i++)
        request_release(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof(*r));
}

static char *json_dup(const cJSON *o, const char *key)
{
    const char *v = bt_json_str(o, key);
    return v ? bt_xstrdup(v) : NULL;
}

/* Drop the waiting request id, if it is there (it was resolved). */
static void drop(struct bt_service_requests *out, const char *id)
{
    for (size_t i = 0; i < out->n; i++) {
        if (strcmp(out->v[i].request_id, id) != 0)
            continue;
        request_release(&out->v[i]);
        memmove(&out->v[i], &out->v[i + 1], (out->n - i - 1) * sizeof(out->v[0]));
        out->n--;
        return;
    }
}

static int pending_event(void *data, const struct bt_store_event *ev)
{
    struct bt_service_requests *out = data;
    int requested = strcmp(ev->type, "approval.requested") == 0;
    if (!requested && strcmp(ev->type, "approval.resolved") != 0)
        return 0;
    cJSON *j = bt_json_parse(ev->data, ev->len, NULL);
    const char *id = bt_json_str(j, "request_id");
    if (id && !requested) {
        drop(out, id);
    } else if (id) {
        drop(out, id); /* a coder that reuses an id asks anew */
        out->v = bt_xrealloc(out->v, (out->n + 1) * sizeof(out->v[0]));
        struct bt_service_request *r = &out->v[out->n++];
        *r = (struct bt_service_request){
            .request_id = bt_xstrdup(id),
            .kind = json_dup(j, "kind"),
            .summary = json_dup(j, "summary"),
            .event_json = bt_xstrndup(ev->data, ev->len),
            .seq = ev->seq,
        };
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "questions");
        r->questions_json = cJSON_IsArray(q) ? cJSON_PrintUnformatted(q) : NULL;
        if (!r->kind)
            r->kind = bt_xstrdup("other");
    }
    cJSON_Delete(j);
    return 0;
}

int bt_service_pending(struct bt_store *s, const char *conv, struct bt_service_requests *out)
{
    memset(out, 0, sizeof(*out));
    struct bt_store_run run;
    int rc = bt_store_run_last(s, conv, &run);
    if (rc == BT_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    if (run.state == BT_STORE_RUN_RUNNING) {
        memcpy(out->run, run.id, sizeof(out->run));
        rc = bt_store_event_each(s, run.id, 1, pending_event, out);
    }
    bt_store_run_release(&run);
    if (rc)
        bt_service_requests_release(out);
    return rc;
}

/* 1 if s is text an answer can be: UTF-8, not only blanks (an empty
 * answer is no answer: the person declines instead). A string from the
 * command line or the API may be neither; the coder would get it as it
 * is. */
static int answer_text_ok(const char *s)
{
    size_t n = strlen(s);
    if (bt_utf8_invalid_at(s, n) < n)
        return 0;
    for (; *s; s++)
        if (!strchr(" \t\r\n", *s))
            return 1;
    return 0;
}

/* 1 if text is a JSON array of non-empty arrays of answer texts, as many
 * as the questions or fewer, in all at most a prompt's bound. */
static int answers_fit(const char *text, const char *questions_json)
{
    if (strlen(text) > BT_SERVICE_PROMPT_MAX)
        return 0;
    cJSON *a = cJSON_Parse(text);
    cJSON *q = questions_json ? cJSON_Parse(questions_json) : NULL;
    int ok = cJSON_IsArray(a) && cJSON_GetArraySize(a) >= 1 &&
             cJSON_GetArraySize(a) <= (q ? cJSON_GetArraySize(q) : 1);
    const cJSON *one;
    cJSON_ArrayForEach(one, a)
    {
        const cJSON *str;
        ok = ok && cJSON_IsArray(one) && cJSON_GetArraySize(one) >= 1;
        cJSON_ArrayForEach(str, one) ok =
            ok && cJSON_IsString(str) && answer_text_ok(str->valuestring);
    }
    cJSON_Delete(a);
    cJSON_Delete(q);
    return ok;
}

/* The waiting request d names (or the only one); NULL with out->message. */
static const struct bt_service_request *choose(const struct bt_service_requests *w,
                                               const char *conv,
                                               const struct bt_service_decision *d,
                                               struct bt_service_decided *out)
{
    if (!w->run[0]) {
        out->message = bt_xasprintf("no turn of %s is running: nothing waits for an answer", conv);
        return NULL;
    }
    if (d->request_id) {
        for (size_t i = 0; i < w->n; i++)
            if (strcmp(w->v[i].request_id, d->request_id) == 0)
                return &w->v[i];
        out->message = bt_xasprintf("request %s of %s does not wait for an answer (it was "
                                    "answered, declined by timeout or by the stop, or never asked)",
                                    d->request_id, conv);
        return NULL;
    }
    if (w->n == 1)
        return &w->v[0];
    out->message =
        w->n ? bt_xasprintf("%zu requests of %s wait: name one (see `baton approve %s --list`)",
                            w->n, conv, conv)
             : bt_xasprintf("nothing of %s waits for an answer", conv);
    return NULL;
}

/* Whether d fits request r; NULL, or why not (static text). */
static const char *misfit(const struct bt_service_request *r, const struct bt_service_decision *d)
{
    int question = strcmp(r->kind, "user_input") == 0;
    if (d->answers_json && !question)
        return "is no question: it is allowed or denied, not answered";
    if (question && d->accept && !d->answers_json)
        return "is a question: it takes answers (`baton answer`), or a refusal";
    if (d->answers_json && !answers_fit(d->answers_json, r->questions_json))
        return "takes one answer per question, no more: an array with a non-empty array of "
               "strings per question, each UTF-8 text that is not blank (to give no answer, "
               "decline it)";
    return NULL;
}

/* The control's body: {request_id, accept, always, answers?}. Owned. */
static char *decision_body(const char *request_id, const struct bt_service_decision *d)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "request_id", request_id);
    cJSON_AddBoolToObject(b, "accept", d->accept);
    cJSON_AddBoolToObject(b, "always", d->accept && d->always);
    if (d->answers_json)
        cJSON_AddItemToObject(b, "answers", cJSON_Parse(d->answers_json));
    char *text = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    return text;
}

/* Wait up to wait_ms for the owner to finish control id: 0 with
 * out->taken, or refused (out->message its reason): -EINVAL when the
 * answers did not fit (the request still waits), else -EALREADY. */
static int await(struct bt_store *s, unsigned wait_ms, struct bt_service_decided *out)
{
    int wrong = 0; /* the answers did not fit */
    for (unsigned waited = 0;; waited += DECIDE_POLL_MS) {
        struct bt_store_control c;
        if (bt_store_control_get(s, out->control, &c) != 0)
            return 0; /* stored; reading it back failed: it still counts */
        enum bt_store_control_state st = c.state;
        if (st == BT_STORE_CONTROL_REFUSED) {
            cJSON *r = c.result ? cJSON_Parse(c.result) : NULL;
            const char *why = bt_json_str(r, "reason");
            out->message = bt_xasprintf("request %s was not answered: %s", out->request_id,
                                        why ? why : "the turn's owner refused it");
            wrong = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "misfit"));
            cJSON_Delete(r);
        }
        bt_store_control_release(&c);
        if (st == BT_STORE_CONTROL_REFUSED)
            return wrong ? -EINVAL : -EALREADY;
        out->taken = st == BT_STORE_CONTROL_DONE;
        if (out->taken || waited >= wait_ms)
            return 0;
        sleep_ms(DECIDE_POLL_MS);
    }
}

int bt_service_decide(struct bt_store *s, const char *conv, const struct bt_service_decision *d,
                      struct bt_service_decided *out)
{
    memset(out, 0, sizeof(*out));
    struct bt_service_requests w;
    int rc = bt_service_pending(s, conv, &w);
    if (rc) {
        out->message = bt_xasprintf("cannot read the turn of %s: %s", conv, bt_store_errmsg(s));
        return rc;
    }
    const struct bt_service_request *r = choose(&w, conv, d, out);
    const char *why = r ? misfit(r, d) : NULL;
    if (!r) {
        rc = w.n > 1 && !d->request_id ? -EINVAL : BT_ENOTFOUND;
    } else if (why) {
        out->message = bt_xasprintf("request %s of %s %s", r->request_id, conv, why);
        rc = -EINVAL;
    } else {
        snprintf(out->request_id, sizeof(out->request_id), "%s", r->request_id);
        char *body = decision_body(r->request_id, d);
        rc = bt_store_control_add(s, conv, w.run, "decision", body, &out->control);
        free(body);
        if (rc == -EALREADY || rc == BT_ENOTFOUND)
            out->message = bt_xasprintf("the turn of %s ended before the answer", conv);
        else if (rc)
            out->message = bt_xasprintf("cannot store the answer: %s", bt_store_errmsg(s));
        if (rc == BT_ENOTFOUND)
            rc = -EALREADY;
    }
    if (rc == 0)
        bt_service_control_wake(s, w.run); /* else its owner reads it within 1 s */
    bt_service_requests_release(&w);
    if (rc == 0)
        rc = await(s, d->wait_ms, out);
    return rc;
}

/* --- the owner's side: the "decision" handlers of service-control.c ------- */

/* misfit_answer: the answer was wrong, not late (the request still waits) */
static void finish_refused(struct bt_store *s, int64_t id, const char *why, int misfit_answer)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reason", why);
    if (misfit_answer)
        cJSON_AddBoolToObject(o, "misfit", 1);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    bt_store_control_finish(s, id, BT_STORE_CONTROL_REFUSED, text);
    free(text);
}

void bt_service_decision_deliver(struct bt_store *s, struct bt_turn *t,
                                 const struct bt_store_control *c)
{
    cJSON *b = cJSON_Parse(c->body);
    const char *id = bt_json_str(b, "request_id");
    const cJSON *answers = cJSON_GetObjectItemCaseSensitive(b, "answers");
    char *answers_json = answers ? cJSON_PrintUnformatted(answers) : NULL;
    char *why = NULL;
    struct bt_turn_decision d = {
        .accept = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "accept")),
        .always = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "always")),
        .answers_json = answers_json,
        .why = &why,
    };
    int rc = id ? bt_turn_decide(t, id, &d) : -EINVAL;
    if (rc == 0)
        bt_store_control_finish(s, c->id, BT_STORE_CONTROL_DONE,
                                d.accept ? "{\"decision\":\"accept\"}"
                                         : "{\"decision\":\"decline\"}");
    else if (rc == -ENOENT)
        finish_refused(s, c->id,
                       "it no longer waits (answered, declined by timeout, or the turn is "
                       "stopping)",
                       0);
    else
        finish_refused(s, c->id, why ? why : "the answer does not fit the request", 1);
    free(why);
    free(answers_json);
    cJSON_Delete(b);
}

void bt_service_decision_stranded(struct bt_store *s, const struct bt_store_control *c)
{
    finish_refused(s, c->id, "the turn had ended", 0);
}
