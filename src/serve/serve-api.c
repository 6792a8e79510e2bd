/* SPDX-License-Identifier: MIT */
/*
 * serve-api: the requests that start turns or change a conversation. A turn
 * goes to a detached worker exactly as `--detach` sends it (cmd-turn.h): the
 * prompt is stored queued, the worker takes it and reports on a pipe, which
 * the loop reads while the request waits suspended; the reply names the run
 * the worker started. When no turn starts, the queued prompt is taken back
 * (and a conversation made for it removed), so nothing is stored half.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "error.h"
#include "input.h"
#include "serve.h"
#include "service-conv.h"
#include "store.h"
#include "view.h"

#define REPORT_MS 60000 /* a worker reports within this, or is taken as failed */

enum job_kind { JOB_CREATE, JOB_SEND, JOB_RETRY };

struct bt_serve_job {
    struct bt_serve_job *next, **pprev; /* in srv->jobs */
    uv_pipe_t pipe;
    uv_timer_t timer;
    struct bt_serve *srv;
    struct bt_serve_req *req; /* NULL once the request went away */
    enum job_kind kind;
    char conv[BT_ID_SIZE];
    int64_t queued; /* the message to take back when no turn starts */
    char line[1024];
    size_t len;
    int open; /* libuv handles not yet closed */
    int answered;
    struct bt_serve_fan *fan; /* a fan-out's member: its report goes there */
    size_t index;             /* which member */
};

/* --- the body -------------------------------------------------------- */

struct body {
    cJSON *root;
    struct bt_service_turn turn;
    char *cwd; /* resolved */
    int tmux;
    int prune;           /* keep */
    const cJSON *coders; /* create: "coders", a fan-out (serve-fanout.c) */
};

static int member_is(const cJSON *m, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(m->string, *names) == 0)
            return 1;
    return 0;
}

/* Seconds as a JSON number into ms (0: none). */
static int seconds(const cJSON *v, uint64_t *ms)
{
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e9)
        return -1;
    double d = v->valuedouble * 1000.0;
    *ms = d > 0 && d < 1 ? 1 : (uint64_t)d;
    return 0;
}

/* One JSON value and nothing after it but white space (cJSON alone stops
 * at the value's end and ignores the rest). */
static cJSON *parse_json(const char *text, size_t len)
{
    const char *end = NULL;
    /* strict: a client's lone surrogate is refused, not changed (400) */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    while (root && end && end < text + len && strchr(" \t\r\n", *end))
        end++;
    if (root && end != text + len) {
        cJSON_Delete(root);
        root = NULL;
    }
    return root;
}

static const char *field(struct body *b, const cJSON *m)
{
    struct bt_service_turn *t = &b->turn;
    const char *k = m->string;
    if (strcmp(k, "prompt") == 0 || strcmp(k, "coder") == 0 || strcmp(k, "cwd") == 0) {
        if (!cJSON_IsString(m))
            return "must be a string";
        *(strcmp(k, "prompt") == 0  ? &t->prompt
          : strcmp(k, "coder") == 0 ? &t->coder
                                    : &t->cwd) = m->valuestring;
    } else if (strcmp(k, "model") == 0) {
        if (!cJSON_IsNull(m) && !cJSON_IsString(m))
            return "must be a string or null";
        t->model = cJSON_IsString(m) ? m->valuestring : NULL;
        if (t->model && bt_input_model_problem(t->model))
            return bt_input_model_problem(t->model);
    } else if (strcmp(k, "approval") == 0) {
        if (!cJSON_IsString(m) || bt_service_approval_parse(m->valuestring, &t->approval) != 0)
            return "must be \"never\", \"deny\", \"auto\" or \"ask\"";
    } else if (strcmp(k, "timeout") == 0 || strcmp(k, "idle_timeout") == 0) {
        if (seconds(m, strcmp(k, "timeout") == 0 ? &t->timeout_ms : &t->idle_timeout_ms) != 0)
            return "must be a number of seconds, 0 or more (0: no limit)";
    } else if (strcmp(k, "force") == 0 || strcmp(k, "tmux") == 0 || strcmp(k, "prune") == 0) {
        if (!cJSON_IsBool(m))
            return "must be true or false";
        *(strcmp(k, "force") == 0  ? &t->force
          : strcmp(k, "tmux") == 0 ? &b->tmux
                                   : &b->prune) = cJSON_IsTrue(m);
    } else if (strcmp(k, "snapshot") == 0) { /* false: --no-snapshot (docs/snapshots.md) */
        if (!cJSON_IsBool(m))
            return "must be true or false";
        t->no_snapshot = cJSON_IsFalse(m);
    } else if (strcmp(k, "worktree") == 0) { /* run --worktree */
        if (!cJSON_IsBool(m))
            return "must be true or false";
        t->worktree = cJSON_IsTrue(m);
    } else if (strcmp(k, "branch") == 0) { /* run --branch */
        if (!cJSON_IsString(m) || !m->valuestring[0])
            return "must be a branch name";
        t->branch = m->valuestring;
    } else if (strcmp(k, "coders") == 0) { /* run -c a,b,c */
        if (!cJSON_IsArray(m) || !m->child)
            return "must be a list of coders' names";
        for (const cJSON *c = m->child; c; c = c->next)
            if (!cJSON_IsString(c))
                return "must be a list of coders' names";
        b->coders = m;
    }
    return NULL;
}

/* What is wrong with body text (static), NULL when it is one JSON value
 * (*root) or empty (*root NULL): every request's body passes here, so
 * that none reaches cJSON with bytes it would take in silently (a NUL
 * ends its strings, bad UTF-8 is copied as it is). */
static const char *body_json(const struct bt_serve_req *r, cJSON **root)
{
    const char *text = r->body.data ? r->body.data : "";
    *root = NULL;
    if (bt_utf8_invalid_at(text, r->body.len) < r->body.len)
        return "the body is not UTF-8 text";
    if (bt_json_has_nul(text, r->body.len)) /* cJSON's strings would end at it */
        return "the body holds a NUL character";
    if (r->body.len && !(*root = parse_json(text, r->body.len)))
        return "the body is not one JSON value";
    if (*root && !cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        return "the body is not a JSON object";
    }
    return NULL;
}

cJSON *bt_serve_body_object(struct bt_serve_req *r, enum MHD_Result *ret)
{
    cJSON *root;
    const char *why = body_json(r, &root);
    if (!why && !root)
        why = "the body must be a JSON object";
    if (why)
        *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", why);
    return why ? NULL : root;
}

/* Parse r's body (may be empty when nothing is required) with the fields
 * names allows; 0, or -1 with the 400 queued in *ret. */
static int parse_body(struct bt_serve_req *r, const char *const *names, struct body *b,
                      enum MHD_Result *ret)
{
    memset(b, 0, sizeof *b);
    b->turn.approval = BT_APPROVAL_DENY;
    b->turn.idle_timeout_ms = BT_SERVICE_IDLE_TIMEOUT_MS;
    const char *key = "";
    const char *why = body_json(r, &b->root);
    for (const cJSON *m = b->root ? b->root->child : NULL; !why && m; m = m->next) {
        key = m->string;
        why = member_is(m, names) ? field(b, m) : "is not a field of this request";
    }
    if (!why)
        return 0;
    *ret = *key ? bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "\"%s\": %s", key, why)
                : bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", why);
    cJSON_Delete(b->root);
    b->root = NULL;
    return -1;
}

static void body_release(struct body *b)
{
    cJSON_Delete(b->root);
    free(b->cwd);
}

int bt_serve_body_none(struct bt_serve_req *r, enum MHD_Result *ret)
{
    static const char *const none[] = {NULL};
    struct body b;
    if (parse_body(r, none, &b, ret) != 0)
        return -1;
    body_release(&b);
    return 0;
}

/* The prompt is there and fine; 0, or -1 with the 400 queued. */
static int need_prompt(struct bt_serve_req *r, struct body *b, enum MHD_Result *ret)
{
    if (!b->turn.prompt) {
        *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "\"prompt\" is required");
        return -1;
    }
    char *why = bt_input_prompt_problem(b->turn.prompt, strlen(b->turn.prompt));
    if (why)
        *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", why);
    free(why);
    return why ? -1 : 0;
}

/* --- the worker's report --------------------------------------------- */

static void job_closed(uv_handle_t *h)
{
    struct bt_serve_job *job = h->data;
    if (--job->open == 0)
        free(job);
}

static void job_close(struct bt_serve_job *job)
{
    if (job->pprev) {
        *job->pprev = job->next;
        if (job->next)
            job->next->pprev = job->pprev;
        job->pprev = NULL;
    }
    if (job->req)
        job->req->job = NULL;
    job->req = NULL;
    uv_read_stop((uv_stream_t *)&job->pipe);
    uv_timer_stop(&job->timer);
    uv_close((uv_handle_t *)&job->pipe, job_closed);
    uv_close((uv_handle_t *)&job->timer, job_closed);
}

/* No turn started: take back what was stored for it. */
static void take_back(struct bt_serve_job *job)
{
    bt_service_take_back(job->srv->store, job->conv, job->queued, job->kind == JOB_CREATE);
}

/* 201 {conversation, run}: the conversation as GET shows it, the run's id. */
static void reply_created(struct bt_serve_job *job, const char *run)
{
    struct bt_serve_req *r = job->req;
    struct bt_store *s = job->srv->store;
    struct bt_store_conversation c = {0};
    if (bt_store_conversation_get(s, job->conv, &c) != 0) {
        bt_serve_fail_later(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                            bt_store_errmsg(s));
    } else {
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_adds(&b, "{\"conversation\":");
        bt_view_conversation(&b, &c);
        bt_buf_adds(&b, ",\"run\":");
        bt_json_quote(&b, run, strlen(run));
        bt_buf_adds(&b, "}\n");
        r->location = bt_xasprintf("/v1/conversations/%s", job->conv);
        bt_serve_reply_later(r, MHD_HTTP_CREATED, &b);
    }
    bt_store_conversation_release(&c);
}

/* 202 {"state":"started","run":RUN|null} */
static void reply_started(struct bt_serve_job *job, const char *run)
{
    if (job->kind == JOB_CREATE && run) {
        reply_created(job, run);
        return;
    }
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"state\":\"started\",\"run\":");
    if (run)
        bt_json_quote(&b, run, strlen(run));
    else
        bt_buf_adds(&b, "null");
    bt_buf_adds(&b, "}\n");
    bt_serve_reply_later(job->req, MHD_HTTP_ACCEPTED, &b);
}

/* No turn started: the status and kind of what the worker said. */
static void reply_refused(struct bt_serve_job *job, const struct bt_service_outcome *o)
{
    const char *msg = o->message ? o->message : "";
    if (!job->req)
        return;
    if (o->result == BT_SERVICE_NOT_INSTALLED)
        bt_serve_fail_later(job->req, MHD_HTTP_UNPROCESSABLE_CONTENT, "not_installed", "%s", msg);
    else if (o->error_kind == BT_ERROR_KIND_AUTH_REQUIRED)
        bt_serve_fail_later(job->req, MHD_HTTP_UNPROCESSABLE_CONTENT, "auth_required", "%s", msg);
    else if (o->result == BT_SERVICE_USAGE)
        bt_serve_fail_later(job->req, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
    else
        bt_serve_fail_later(job->req, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", msg);
}

static void job_answer(struct bt_serve_job *job)
{
    if (job->answered)
        return;
    job->answered = 1;
    job->line[job->len] = '\0';
    job->line[strcspn(job->line, "\n")] = '\0';
    struct bt_service_outcome o = {0};
    int started = bt_service_worker_line(job->line, &o) == 0;
    if (job->fan) { /* a fan-out's member: its run, or why none started */
        int ran = started && o.run[0];
        if (!ran) {
            if (o.result == BT_SERVICE_OK) /* "end 0": no turn of its own either */
                o.result = BT_SERVICE_FAILED;
            take_back(job);
        }
        bt_serve_fan_report(job->fan, job->index, ran ? o.run : NULL, &o);
    } else if (started && o.run[0]) {
        if (job->req)
            reply_started(job, o.run);
    } else if (started && job->kind != JOB_CREATE) {
        if (job->req) /* another turn took the queue meanwhile: it goes with that one */
            reply_started(job, NULL);
    } else {
        take_back(job);
        reply_refused(job, &o);
    }
    free(o.message);
    job_close(job);
}

static void job_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    struct bt_serve_job *job = h->data;
    *buf = uv_buf_init(job->line + job->len, (unsigned)(sizeof job->line - 1 - job->len));
}

static void job_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    struct bt_serve_job *job = st->data;
    if (n > 0)
        job->len += (size_t)n;
    if (n < 0 || memchr(job->line, '\n', job->len) || job->len + 1 >= sizeof job->line)
        job_answer(job);
}

static void job_timeout(uv_timer_t *t)
{
    job_answer(t->data);
}

/* Start the worker (mode flush or retry) and read its report: the job,
 * or NULL with *rc when the worker could not start (what was stored for
 * it is taken back). */
static struct bt_serve_job *job_start(struct bt_serve *srv, enum job_kind kind, const char *conv,
                                      int64_t queued, const struct bt_service_turn *t, int *rc)
{
    int fd = -1;
    *rc = bt_service_worker_start(kind == JOB_RETRY ? "retry" : "flush", conv, t, &fd);
    struct bt_serve_job *job = bt_xcalloc(1, sizeof *job);
    job->srv = srv;
    job->kind = kind;
    job->queued = queued;
    memcpy(job->conv, conv, BT_ID_SIZE);
    if (*rc != 0) {
        take_back(job);
        free(job);
        return NULL;
    }
    uv_pipe_init(&srv->loop, &job->pipe, 0);
    uv_timer_init(&srv->loop, &job->timer);
    job->pipe.data = job->timer.data = job;
    job->open = 2;
    job->next = srv->jobs;
    if (job->next)
        job->next->pprev = &job->next;
    job->pprev = &srv->jobs;
    srv->jobs = job;
    uv_pipe_open(&job->pipe, fd);
    uv_read_start((uv_stream_t *)&job->pipe, job_alloc, job_read);
    uv_timer_start(&job->timer, job_timeout, REPORT_MS, 0);
    return job;
}

/* Start the worker and wait for its report, the request suspended. */
static enum MHD_Result start_worker(struct bt_serve_req *r, enum job_kind kind, const char *conv,
                                    int64_t queued, const struct bt_service_turn *t)
{
    int rc;
    struct bt_serve_job *job = job_start(r->srv, kind, conv, queued, t, &rc);
    if (!job)
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal",
                             "cannot start a worker: %s", bt_strerror(rc));
    job->req = r;
    r->job = job;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    return MHD_YES;
}

/* A fan-out's member (bt_serve_member_start_fn): its worker, whose report
 * goes to the fan-out. */
static int start_member(struct bt_serve *srv, struct bt_serve_fan *fan, size_t index,
                        const char *conv, int64_t queued, const struct bt_service_turn *t)
{
    int rc;
    struct bt_serve_job *job = job_start(srv, JOB_CREATE, conv, queued, t, &rc);
    if (job) {
        job->fan = fan;
        job->index = index;
    }
    return rc;
}

void bt_serve_api_forget(struct bt_serve_req *r)
{
    bt_serve_fan_forget(r);
    if (r->job)
        r->job->req = NULL; /* the report is still read: a failed start is taken back */
    r->job = NULL;
}

void bt_serve_api_stop(struct bt_serve *srv)
{
    while (srv->jobs) {
        struct bt_serve_job *job = srv->jobs;
        job->answered = 1;
        if (job->fan) /* the turn may still start: nothing is taken back */
            bt_serve_fan_report(job->fan, job->index, NULL, NULL);
        else if (job->req)
            bt_serve_fail_later(job->req, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                                "the server is stopping; the turn may still start in its worker");
        job_close(job);
    }
}

/* --- the handlers ---------------------------------------------------- */

/* A refusal of the service (nothing was stored) as its reply. */
static enum MHD_Result service_refused(struct bt_serve_req *r, int rc,
                                       const struct bt_service_outcome *out)
{
    const char *msg = out->message ? out->message : bt_strerror(rc);
    switch (out->result) {
    case BT_SERVICE_NOT_INSTALLED:
        return bt_serve_fail(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "not_installed", "%s", msg);
    case BT_SERVICE_USAGE:
        return rc == BT_ENOTFOUND ? bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", msg)
                                  : bt_serve_fail(r, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
    default: return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", msg);
    }
}

static const char *const CREATE_FIELDS[] = {"coder",    "coders",   "model",   "cwd",
                                            "prompt",   "approval", "timeout", "idle_timeout",
                                            "snapshot", "worktree", "branch",  NULL};
static const char *const SEND_FIELDS[] = {"prompt", "approval", "timeout", "idle_timeout",
                                          "force",  "snapshot", NULL};
static const char *const RETRY_FIELDS[] = {"approval", "timeout",  "idle_timeout",
                                           "force",    "snapshot", NULL};
static const char *const HANDOFF_FIELDS[] = {"tmux", NULL};
static const char *const STEER_FIELDS[] = {"prompt", "approval", "timeout", "idle_timeout", NULL};
static const char *const KEEP_FIELDS[] = {"prune", NULL};

int bt_serve_body_keep(struct bt_serve_req *r, int *prune, enum MHD_Result *ret)
{
    struct body b;
    if (parse_body(r, KEEP_FIELDS, &b, ret) != 0)
        return -1;
    *prune = b.prune;
    body_release(&b);
    return 0;
}

enum MHD_Result bt_serve_api_create(struct bt_serve_req *r)
{
    struct body b;
    enum MHD_Result ret;
    if (parse_body(r, CREATE_FIELDS, &b, &ret) != 0)
        return ret;
    if (need_prompt(r, &b, &ret) != 0)
        goto out;
    char *why = !b.turn.cwd            ? bt_xstrdup("\"cwd\" is required")
                : b.turn.cwd[0] != '/' ? bt_xstrdup("\"cwd\" must be an absolute path")
                                       : bt_input_cwd(b.turn.cwd, &b.cwd);
    if (why) {
        ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", why);
        free(why);
        goto out;
    }
    b.turn.cwd = b.cwd;
    if (b.turn.branch && !b.turn.worktree) {
        ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                            "\"branch\" names the branch of \"worktree\": give both");
        goto out;
    }
    if (b.coders) {
        ret = b.turn.coder ? bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                           "give \"coder\" or \"coders\", not both")
                           : bt_serve_fan_create(r, &b.turn, b.coders, start_member);
        goto out;
    }
    if (!b.turn.coder)
        b.turn.coder = bt_coders[0]->name;
    if (!bt_coder_find(b.turn.coder)) {
        ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                            "unknown coder '%s' (GET /v1/coders lists them)", b.turn.coder);
        goto out;
    }
    b.turn.queue = BT_STORE_QUEUE_ALWAYS;
    struct bt_service_outcome o = {0};
    int rc = bt_service_run(r->srv->store, &b.turn, &o);
    ret = rc ? service_refused(r, rc, &o)
             : start_worker(r, JOB_CREATE, o.conversation, o.queued, &b.turn);
    free(o.message);
out:
    body_release(&b);
    return ret;
}

static enum MHD_Result reply_queued(struct bt_serve_req *r, int64_t n)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b, "{\"state\":\"queued\",\"n\":%lld}\n", (long long)n);
    return bt_serve_reply(r, MHD_HTTP_ACCEPTED, &b);
}

enum MHD_Result bt_serve_api_send(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    struct body b;
    enum MHD_Result ret;
    if (parse_body(r, SEND_FIELDS, &b, &ret) != 0)
        return ret;
    if (need_prompt(r, &b, &ret) == 0) {
        b.turn.queue = BT_STORE_QUEUE_ALWAYS;
        struct bt_service_outcome o = {0};
        int rc = bt_service_send(r->srv->store, conv, &b.turn, &o);
        if (rc)
            ret = service_refused(r, rc, &o);
        else if (o.busy) /* the running turn's owner sends it next */
            ret = reply_queued(r, o.queue_no);
        else
            ret = start_worker(r, JOB_SEND, conv, o.queued, &b.turn);
        free(o.message);
    }
    body_release(&b);
    return ret;
}

/* A steer: stored for the running turn's owner, who puts it into the turn
 * or queues it; the reply does not wait (the server's one thread): 202
 * with the steer's state (view.h bt_view_steered), "pending" while the
 * owner has not taken it, "queued" at once when no turn runs or the coder
 * cannot steer. turn.steered on the event stream says it went in. */
enum MHD_Result bt_serve_api_steer(struct bt_serve_req *r)
{
    struct body b;
    enum MHD_Result ret;
    if (parse_body(r, STEER_FIELDS, &b, &ret) != 0)
        return ret;
    if (need_prompt(r, &b, &ret) == 0) {
        struct bt_service_steered st;
        int rc = bt_service_steer(r->srv->store, r->conv, b.turn.prompt, &b.turn, 0, &st);
        const char *msg = st.message ? st.message : bt_strerror(rc);
        if (rc == -EPERM)
            ret = bt_serve_fail(r, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
        else if (rc == -EINVAL)
            ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", msg);
        else if (rc)
            ret = bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", msg);
        if (rc == 0) {
            struct bt_buf out = BT_BUF_INIT;
            bt_view_steered(&out, r->conv, &st);
            bt_buf_addc(&out, '\n');
            ret = bt_serve_reply(r, MHD_HTTP_ACCEPTED, &out);
        }
        bt_service_steered_release(&st);
    }
    body_release(&b);
    return ret;
}

enum MHD_Result bt_serve_api_retry(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    struct body b;
    enum MHD_Result ret;
    if (parse_body(r, RETRY_FIELDS, &b, &ret) != 0)
        return ret;
    if (!bt_serve_busy(r, conv, &ret))
        ret = start_worker(r, JOB_RETRY, conv, 0, &b.turn);
    body_release(&b);
    return ret;
}

enum MHD_Result bt_serve_api_cancel(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    struct bt_service_outcome o = {0};
    enum MHD_Result ret;
    if (bt_service_cancel(r->srv->store, conv, &o) != 0) {
        ret = o.result == BT_SERVICE_USAGE
                  ? bt_serve_fail(r, MHD_HTTP_CONFLICT, "conflict", "%s", o.message)
                  : bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", o.message);
    } else {
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_adds(&b, "{\"run\":");
        bt_json_quote(&b, o.run, strlen(o.run));
        bt_buf_adds(&b, "}\n");
        ret = bt_serve_reply(r, MHD_HTTP_ACCEPTED, &b);
    }
    free(o.message);
    return ret;
}

enum MHD_Result bt_serve_api_unqueue(struct bt_serve_req *r)
{
    const char *conv = r->conv, *n = r->arg;
    char *end;
    long long v = strtoll(n, &end, 10);
    if (end == n || *end || v <= 0 || n[0] == '+' || n[0] == '0')
        return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found",
                             "a queued message is named by its queue number, 1 or more");
    struct bt_service_outcome o = {0};
    enum MHD_Result ret = MHD_YES;
    if (bt_service_unqueue(r->srv->store, conv, v, &o) != 0) /* no #N, or sent already */
        ret = o.result == BT_SERVICE_USAGE
                  ? bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "%s", o.message)
                  : bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", o.message);
    free(o.message);
    if (o.result != BT_SERVICE_OK)
        return ret;
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addf(&b, "{\"removed\":%lld}\n", v);
    return bt_serve_reply(r, MHD_HTTP_OK, &b);
}

enum MHD_Result bt_serve_api_handoff(struct bt_serve_req *r)
{
    struct body b;
    enum MHD_Result ret;
    if (parse_body(r, HANDOFF_FIELDS, &b, &ret) != 0)
        return ret;
    ret = bt_serve_task_handoff(r, b.tmux);
    body_release(&b);
    return ret;
}

enum MHD_Result bt_serve_api_remove(struct bt_serve_req *r)
{
    return bt_serve_task_remove(r);
}
