/* SPDX-License-Identifier: MIT */
/*
 * acp-prompt: `baton acp`'s turns (acp-int.h). Every prompt is stored
 * queued first (as `baton send` queues one), so prompts sent close
 * together go out in the order they came; a session's thread, with its
 * own store handle, sends what waits as the next turn through the
 * conversation service, streams its events as session/update
 * notifications, and answers each prompt that went out with that turn's
 * end; after a completed turn the CLI's queued messages go too. A prompt
 * sent after a cancel or a failure goes out once that turn has ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acp-int.h"
#include "acp-map.h"
#include "coder.h"
#include "error.h"
#include "input.h"
#include "json.h"
#include "service-conv.h"
#include "service-work.h"
#include "util.h"

struct job {
    struct bt_acp *a;
    struct bt_acp_session *se;
    struct bt_store *s; /* the thread's own store handle */
    struct bt_acp_map map;
    char *error; /* the turn's error event's message (owned) */
};

/* --- the prompt's text ------------------------------------------------- */

/* Append one ContentBlock to b; a sentence (static) when baton cannot. */
static const char *add_block(struct bt_buf *b, const cJSON *block)
{
    const char *type = bt_json_str(block, "type");
    if (!type)
        return "every prompt block needs a type";
    if (b->len)
        bt_buf_adds(b, "\n\n");
    if (strcmp(type, "text") == 0) {
        const char *text = bt_json_str(block, "text");
        if (!text)
            return "a text block needs its text";
        bt_buf_adds(b, text);
    } else if (strcmp(type, "resource_link") == 0) {
        const char *uri = bt_json_str(block, "uri");
        const char *name = bt_json_str(block, "name");
        if (!uri)
            return "a resource_link block needs its uri";
        bt_buf_addf(b, "[%s](%s)", name ? name : uri, uri);
    } else if (strcmp(type, "resource") == 0) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(block, "resource");
        const char *uri = bt_json_str(r, "uri");
        const char *text = bt_json_str(r, "text");
        if (!uri || !text)
            return "baton takes embedded resources with text only (not blobs)";
        bt_buf_addf(b, "%s:\n```\n%s\n```", uri, text);
    } else {
        return "baton takes text, resource_link and text resource blocks; the coders it "
               "drives get no images or audio through it";
    }
    return NULL;
}

/* The prompt as one text; NULL with the error answered. */
static char *prompt_text(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(params, "prompt");
    if (!cJSON_IsArray(prompt)) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, "prompt (an array of content blocks) is missing",
                     0);
        return NULL;
    }
    struct bt_buf b = BT_BUF_INIT;
    const cJSON *block;
    cJSON_ArrayForEach(block, prompt)
    {
        const char *why = add_block(&b, block);
        if (why) {
            bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, why, 0);
            bt_buf_release(&b);
            return NULL;
        }
    }
    char *why = bt_input_prompt_problem(b.data, b.len);
    if (why) {
        bt_acp_error(a, id, BT_ACP_INVALID_PARAMS, why, 0);
        free(why);
        bt_buf_release(&b);
        return NULL;
    }
    return bt_buf_detach(&b, NULL);
}

/* --- a turn's events and its end ------------------------------------- */

static void on_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct job *j = data;
    (void)json;
    (void)len;
    if (ev->type == BT_EVENT_TURN_STARTED) { /* a flush's turn after the first */
        bt_acp_map_release(&j->map);
        free(j->error);
        j->error = NULL;
    }
    if (ev->type == BT_EVENT_ERROR && ev->message) {
        free(j->error);
        j->error = bt_xstrdup(ev->message);
    }
    cJSON *updates = cJSON_CreateArray(), *u;
    bt_acp_map_event(&j->map, ev, updates);
    while ((u = cJSON_DetachItemFromArray(updates, 0)) != NULL)
        bt_acp_update(j->a, j->se->id, u, 0);
    cJSON_Delete(updates);
    /* a request the turn keeps for a person (not a question: the policy
     * declines those): the editor is asked, after the tool call it names */
    if (ev->type == BT_EVENT_APPROVAL_REQUESTED && ev->request_id &&
        !(ev->approval_kind && strcmp(ev->approval_kind, "user_input") == 0) &&
        j->a->opts->approval != BT_APPROVAL_NEVER)
        bt_acp_ask(j->a, j->se, j->s, ev);
}

static int on_tick(void *data)
{
    struct job *j = data;
    return bt_acp_must_stop(j->a, j->se);
}

/* Answer request id with how the turn (or the attempt) ended. */
static void answer(struct job *j, const cJSON *id, int rc, const struct bt_service_outcome *out)
{
    const char *stop = out->result == BT_SERVICE_TURN ? bt_acp_stop_reason(out->status) : NULL;
    if (rc == 0 && stop) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "stopReason", stop);
        bt_acp_result(j->a, id, r, 0);
        return;
    }
    if (out->result == BT_SERVICE_CANCELLED) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "stopReason", "cancelled");
        bt_acp_result(j->a, id, r, 0);
        return;
    }
    int code = out->error_kind == BT_ERROR_KIND_AUTH_REQUIRED ? BT_ACP_AUTH_REQUIRED
                                                              : BT_ACP_INTERNAL_ERROR;
    char *msg;
    if (out->result == BT_SERVICE_TURN)
        msg = bt_xasprintf("the turn failed (%s): %s", bt_error_kind_name(out->error_kind),
                           j->error ? j->error : "the coder said no more");
    else
        msg = bt_xstrdup(out->message ? out->message : "the turn could not start");
    bt_acp_error(j->a, id, code, msg, 0);
    free(msg);
}

/* The prompts that went out as the turn that just ended: each answered
 * with its end. */
static void answer_waiting(struct job *j, struct bt_acp_waiting *w, int rc,
                           const struct bt_service_outcome *out)
{
    while (w) {
        struct bt_acp_waiting *next = w->next;
        answer(j, w->id, rc, out);
        cJSON_Delete(w->id);
        free(w);
        w = next;
    }
}

/* The same prompts when no turn of this process took them: why. */
static void refuse_waiting(struct job *j, struct bt_acp_waiting *w, const char *why)
{
    while (w) {
        struct bt_acp_waiting *next = w->next;
        bt_acp_error(j->a, w->id, BT_ACP_INTERNAL_ERROR, why, 0);
        cJSON_Delete(w->id);
        free(w);
        w = next;
    }
}

/* The editor is the person asked (acp-permission.c), unless the coder is
 * told not to ask; unanswered, --approval decides, by "timeout". The
 * prompts queued behind a turn carry it too: a turn's settings narrow to
 * those of the messages it sends (service.c). */
static enum bt_approval turn_approval(const struct bt_acp_opts *o)
{
    return o->approval != BT_APPROVAL_NEVER ? BT_APPROVAL_ASK : o->approval;
}

static struct bt_service_turn turn_of(struct job *j)
{
    const struct bt_acp_opts *o = j->a->opts;
    return (struct bt_service_turn){.approval = turn_approval(o),
                                    .ask_fallback = o->approval,
                                    .ask_no_questions = 1,
                                    .timeout_ms = o->timeout_ms,
                                    .idle_timeout_ms = o->idle_timeout_ms,
                                    .no_retry = o->no_retry,
                                    .no_snapshot = o->no_snapshot,
                                    .queue = BT_STORE_QUEUE_NEVER,
                                    .on_event = on_event,
                                    .on_tick = on_tick,
                                    .data = j};
}

/* Put w (what bt_acp_follow left: still queued, nothing running) back at
 * the head of the session's waiting prompts: the next round sends it. */
static void give_back(struct job *j, struct bt_acp_waiting *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&j->a->lock);
    struct bt_acp_waiting *end = w;
    while (end->next)
        end = end->next;
    end->next = j->se->waiting;
    j->se->waiting = w;
    pthread_mutex_unlock(&j->a->lock);
}

/* Add to *w the prompts of se->waiting that went out with run (the
 * store says so): one queued just as the turn began is in its prompt
 * while its request was added to waiting after the round took it. Once
 * no prompt is being queued, every one stored is in waiting. */
static void claim_sent(struct job *j, struct bt_acp_waiting **w, const char *run)
{
    struct bt_store_message *m = NULL;
    size_t n = 0;
    pthread_mutex_lock(&j->a->lock);
    while (j->se->queueing)
        pthread_cond_wait(&j->a->queued, &j->a->lock);
    pthread_mutex_unlock(&j->a->lock);
    if (!run[0] || bt_store_message_list(j->s, j->se->id, &m, &n) != 0)
        return;
    struct bt_acp_waiting **end = w;
    while (*end)
        end = &(*end)->next;
    pthread_mutex_lock(&j->a->lock);
    for (struct bt_acp_waiting **p = &j->se->waiting; *p;) {
        int sent = 0;
        for (size_t i = 0; i < n && !sent; i++)
            sent = m[i].id == (*p)->msg && m[i].state != BT_STORE_MSG_QUEUED &&
                   strcmp(m[i].run, run) == 0;
        if (!sent) {
            p = &(*p)->next;
            continue;
        }
        *end = *p;
        *p = (*p)->next;
        (*end)->next = NULL;
        end = &(*end)->next;
    }
    pthread_mutex_unlock(&j->a->lock);
    bt_store_message_list_free(m, n);
}

/* What the turn of run changed, as one tool call before its prompts are
 * answered (bt_acp_changes). */
static void send_changes(struct job *j, const char *run)
{
    struct bt_store_run r = {0};
    if (run[0] && bt_store_run_get(j->s, run, &r) == 0) {
        cJSON *u = bt_acp_changes(j->s, j->se->id, run, r.turn);
        if (u)
            bt_acp_update(j->a, j->se->id, u, 0);
    }
    bt_store_run_release(&r);
}

/* Turn after turn, what waits goes out as the next turn (the prompts of
 * this session, joined in the order they came, and after a completed turn
 * what the CLI queued too), until nothing waits. A prompt sent after a
 * cancel or a failure goes out as well: it was typed after it. */
static void run_queue(struct job *j)
{
    int completed = 0;
    int64_t others = 0;
    for (;;) {
        pthread_mutex_lock(&j->a->lock);
        while (j->se->queueing) /* a prompt being queued goes with this round */
            pthread_cond_wait(&j->a->queued, &j->a->lock);
        if (atomic_load(&j->a->stopping)) { /* what waits stays queued: nothing lost */
            j->se->running = 0;
            pthread_mutex_unlock(&j->a->lock);
            return;
        }
        struct bt_acp_waiting *w = j->se->waiting;
        j->se->waiting = NULL;
        if (!w && (!completed || others <= 0)) {
            j->se->running = 0;
            pthread_mutex_unlock(&j->a->lock);
            return;
        }
        if (w) /* sent after the cancel of the turn before: not cancelled */
            atomic_store(&j->se->cancel, 0);
        pthread_mutex_unlock(&j->a->lock);
        struct bt_service_turn t = turn_of(j);
        struct bt_service_outcome out;
        int rc = bt_service_flush(j->s, j->se->id, &t, &out);
        if (rc == BT_ENOTFOUND) {
            /* another process runs the conversation, or its turn took
             * these prompts and may have ended already: the store says
             * which, and how it went */
            give_back(j, bt_acp_follow(j->a, j->se, j->s, w));
        } else {
            claim_sent(j, &w, out.run);
            if (rc == 0 && out.result == BT_SERVICE_TURN)
                send_changes(j, out.run);
            answer_waiting(j, w, rc, &out);
        }
        completed = rc == 0 && out.completed;
        others = out.waiting;
        free(out.message);
    }
}

static void *prompt_main(void *arg)
{
    struct job *j = arg;
    char *home = bt_store_default_home(), *err = NULL;
    int rc = home ? bt_store_open(home, &j->s, &err) : -ENOENT;
    if (rc) {
        char *why = bt_xasprintf("cannot open the store: %s; the prompt waits queued",
                                 err ? err : bt_strerror(rc));
        pthread_mutex_lock(&j->a->lock);
        struct bt_acp_waiting *w = j->se->waiting;
        j->se->waiting = NULL;
        j->se->running = 0;
        pthread_mutex_unlock(&j->a->lock);
        refuse_waiting(j, w, why);
        free(why);
    } else {
        run_queue(j);
    }
    free(home);
    free(err);
    bt_store_close(j->s);
    bt_acp_map_release(&j->map);
    free(j->error);
    free(j);
    return NULL;
}

/* --- the main thread's side ------------------------------------------- */

/* The first prompt stores the conversation (the session's id, coder,
 * model, directory), once its coder is known to be installed. Returns 0,
 * or -1 with the error answered. */
static int store_session(struct bt_acp *a, const cJSON *id, struct bt_acp_session *se,
                         const char *text)
{
    /* the service checks the coder and stores it (in a worktree of its
     * own when asked) */
    struct bt_service_turn t = {.coder = se->coder,
                                .model = se->model,
                                .cwd = se->cwd,
                                .prompt = text,
                                .worktree = se->worktree};
    struct bt_service_outcome out;
    if (bt_service_conversation_new(a->store, &t, se->id, &out) != 0) {
        int asked = out.result == BT_SERVICE_USAGE; /* no repository, the branch exists */
        bt_acp_error(a, id, asked ? BT_ACP_INVALID_PARAMS : BT_ACP_INTERNAL_ERROR,
                     out.message ? out.message : "the conversation could not be stored", 0);
        free(out.message);
        return -1;
    }
    free(out.message);
    struct bt_store_conversation made = {0};
    pthread_mutex_lock(&a->lock);
    if (se->worktree && bt_store_conversation_get(a->store, se->id, &made) == 0) {
        free(se->cwd); /* its turns run in the worktree */
        se->cwd = bt_xstrdup(made.cwd);
    }
    se->stored = 1;
    pthread_mutex_unlock(&a->lock);
    bt_store_conversation_release(&made);
    return 0;
}

/* Queue text behind the session's running turn (as `baton send` does);
 * the running thread answers it. Called with the lock, which it drops
 * while it writes the store (the thread may be writing it too). */
static void queue_behind(struct bt_acp *a, const cJSON *id, struct bt_acp_session *se, char *text)
{
    se->queueing++;
    pthread_mutex_unlock(&a->lock);
    struct bt_service_turn t = {.prompt = text,
                                .approval = turn_approval(a->opts),
                                .timeout_ms = a->opts->timeout_ms,
                                .idle_timeout_ms = a->opts->idle_timeout_ms,
                                .no_retry = a->opts->no_retry,
                                .no_snapshot = a->opts->no_snapshot,
                                .queue = BT_STORE_QUEUE_ALWAYS};
    struct bt_service_outcome out;
    int rc = bt_service_send(a->store, se->id, &t, &out);
    pthread_mutex_lock(&a->lock);
    if (rc == 0 && out.queued > 0) {
        struct bt_acp_waiting *w = bt_xcalloc(1, sizeof(*w)), **end = &se->waiting;
        w->id = cJSON_Duplicate(id, 1);
        w->msg = out.queued;
        while (*end)
            end = &(*end)->next;
        *end = w;
    } else {
        /* the session's conversation went (baton rm, DELETE): as for an
         * unknown session, resource not found */
        int gone = rc == BT_ENOTFOUND && out.result == BT_SERVICE_USAGE;
        bt_acp_error(a, id, gone ? BT_ACP_NOT_FOUND : BT_ACP_INTERNAL_ERROR,
                     out.message ? out.message : "the prompt could not be queued", 1);
    }
    se->queueing--;
    pthread_cond_broadcast(&a->queued);
    free(out.message);
    free(text);
}

void bt_acp_prompt(struct bt_acp *a, const cJSON *id, const cJSON *params)
{
    struct bt_acp_session *se = bt_acp_session_of(a, id, params);
    char *text = se ? prompt_text(a, id, params) : NULL;
    if (!text)
        return;
    pthread_mutex_lock(&a->lock);
    int running = se->running;
    if (running)
        queue_behind(a, id, se, text); /* the running thread sends it */
    pthread_mutex_unlock(&a->lock);
    if (running)
        return;
    if (se->joinable) { /* the last thread is done (running is 0): collect it */
        pthread_join(se->thread, NULL);
        se->joinable = 0;
    }
    if (!se->stored && store_session(a, id, se, text) != 0) {
        free(text);
        return;
    }
    /* every prompt goes through the queue, so prompts sent close together
     * go out in the order they came */
    pthread_mutex_lock(&a->lock);
    se->running = 1; /* only this thread starts threads */
    queue_behind(a, id, se, text);
    int queued = se->waiting != NULL;
    se->running = queued;
    pthread_mutex_unlock(&a->lock);
    if (!queued)
        return; /* answered with why */
    struct job *j = bt_xcalloc(1, sizeof(*j));
    *j = (struct job){.a = a, .se = se};
    bt_acp_map_init(&j->map);
    if (pthread_create(&se->thread, NULL, prompt_main, j) != 0) {
        pthread_mutex_lock(&a->lock);
        struct bt_acp_waiting *w = se->waiting;
        se->waiting = NULL;
        se->running = 0;
        pthread_mutex_unlock(&a->lock);
        refuse_waiting(j, w, "cannot start a thread for the turn; the prompt waits queued");
        free(j);
        return;
    }
    se->joinable = 1;
}

void bt_acp_cancel(struct bt_acp *a, const cJSON *params)
{
    const char *sid = bt_json_str(params, "sessionId");
    if (!sid)
        return; /* a notification gets no answer, not even an error */
    pthread_mutex_lock(&a->lock);
    struct bt_acp_session *se = bt_acp_session_find(a, sid);
    struct bt_acp_waiting *w = se ? se->waiting : NULL;
    if (se && se->running) {
        atomic_store(&se->cancel, 1);
        se->waiting = NULL;
    } else {
        w = NULL;
    }
    pthread_mutex_unlock(&a->lock);
    /* the prompts it queued are taken back: cancel ends all of them */
    while (w) {
        struct bt_acp_waiting *next = w->next;
        (void)bt_service_take_back(a->store, sid, w->msg, 0); /* a turn took it: cancelled too */
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "stopReason", "cancelled");
        bt_acp_result(a, w->id, r, 0);
        cJSON_Delete(w->id);
        free(w);
        w = next;
    }
}

void bt_acp_prompt_stop_all(struct bt_acp *a)
{
    pthread_mutex_lock(&a->lock);
    /* not each session's cancel: a turn sent after a cancel clears that */
    atomic_store(&a->stopping, 1);
    pthread_mutex_unlock(&a->lock);
    for (struct bt_acp_session *se = a->sessions; se; se = se->next)
        if (se->joinable) {
            pthread_join(se->thread, NULL);
            se->joinable = 0;
        }
}
