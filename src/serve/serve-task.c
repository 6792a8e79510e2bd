/* SPDX-License-Identifier: MIT */
/*
 * serve-task: DELETE /v1/conversations/{id} and POST …/handoff, the
 * service's rm and handoff (service-conv.h), as `baton rm --yes` and
 * `baton handoff --print|--tmux` do them: one rule for both front ends;
 * and POST …/requests/{n}'s wait for the run's owner to take a decision
 * (bt_service_decide), which may refuse answers the coder cannot take.
 * Both can take long (rm runs a coder's delete command, bounded by
 * BT_CODER_COMMAND_MS; both ask tmux), so each runs in libuv's thread pool
 * (uv_queue_work) while the request waits suspended, never on the loop:
 * the loop's store handle is the loop's, so the task opens a store handle
 * of its own in $BATON_HOME, used on its thread only. The reply is made
 * on the loop when the task is done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "repo.h"
#include "serve.h"
#include "service-conv.h"
#include "service.h"
#include "store.h"

enum task_kind { TASK_RM, TASK_PRINT, TASK_TMUX, TASK_DECIDE };

struct bt_serve_task {
    uv_work_t work;
    struct bt_serve_task *next, **pprev; /* in srv->tasks */
    struct bt_serve_req *req;            /* NULL once the request went away */
    enum task_kind kind;
    char conv[BT_ID_SIZE];
    char *home; /* $BATON_HOME, for the task's own store handle */
    /* made on the thread, read on the loop */
    enum bt_service_result result;
    char *message;      /* why not OK */
    struct bt_buf body; /* OK: the reply's JSON */
    /* TASK_DECIDE: the decision (strings owned) and what became of it */
    struct bt_service_decision decision;
    int decided_rc; /* bt_service_decide's return */
};

static void unlink_task(struct bt_serve_task *t)
{
    if (t->pprev) {
        *t->pprev = t->next;
        if (t->next)
            t->next->pprev = t->pprev;
        t->pprev = NULL;
    }
    if (t->req)
        t->req->task = NULL;
    t->req = NULL;
}

static void do_rm(struct bt_store *s, struct bt_serve_task *t)
{
    struct bt_service_rm p;
    if (bt_service_rm_plan(s, t->conv, NULL, 0, &p) == 0)
        bt_service_rm(s, &p);
    t->result = p.result;
    t->message = p.message;
    p.message = NULL;
    bt_buf_adds(&t->body, "{\"removed\":");
    bt_json_quote(&t->body, t->conv, strlen(t->conv));
    bt_buf_adds(&t->body, "}\n");
    bt_service_rm_release(&p);
}

static void do_handoff(struct bt_store *s, struct bt_serve_task *t)
{
    struct bt_service_handoff h;
    int tmux = t->kind == TASK_TMUX;
    bt_service_handoff(s, t->conv, tmux ? BT_SERVICE_HANDOFF_TMUX : BT_SERVICE_HANDOFF_PRINT, &h);
    t->result = h.result;
    t->message = h.message;
    h.message = NULL;
    if (t->result == BT_SERVICE_OK) {
        char *attach = bt_xasprintf("tmux attach -t %s", h.tmux_name);
        const char *command = tmux ? attach : h.command;
        bt_buf_adds(&t->body, "{\"command\":");
        bt_json_quote(&t->body, command, strlen(command));
        bt_json_member(&t->body, "cwd", h.conv.cwd ? h.conv.cwd : "");
        bt_buf_adds(&t->body, ",\"tmux\":");
        if (tmux)
            bt_json_quote(&t->body, h.tmux_name, strlen(h.tmux_name));
        else
            bt_buf_adds(&t->body, "null");
        bt_buf_adds(&t->body, "}\n");
        free(attach);
    }
    bt_service_handoff_release(&h);
}

static void do_decide(struct bt_store *s, struct bt_serve_task *t)
{
    struct bt_service_decided out;
    t->decided_rc = bt_service_decide(s, t->conv, &t->decision, &out);
    t->message = out.message;
    if (t->decided_rc == 0) {
        bt_buf_adds(&t->body, "{\"request_id\":");
        bt_json_quote(&t->body, out.request_id, strlen(out.request_id));
        bt_buf_addf(&t->body, ",\"control\":%lld,\"taken\":%s}\n", (long long)out.control,
                    out.taken ? "true" : "false");
    }
}

/* The reply to a decision: 202 stored (taken or not yet); 400 it does not
 * fit the request; 409 nothing (more) waits: a late answer. */
static void decide_done(struct bt_serve_task *t)
{
    int rc = t->decided_rc;
    const char *msg = t->message ? t->message : bt_strerror(rc);
    if (rc == 0)
        bt_serve_reply_later(t->req, MHD_HTTP_ACCEPTED, &t->body);
    else if (rc == -EINVAL)
        bt_serve_fail_later(t->req, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", msg);
    else if (rc == BT_ENOTFOUND || rc == -EALREADY)
        bt_serve_fail_later(t->req, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
    else
        bt_serve_fail_later(t->req, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", msg);
}

/* On a thread of the pool: the operation, on a store handle of its own. */
static void task_work(uv_work_t *w)
{
    struct bt_serve_task *t = w->data;
    struct bt_store *s = NULL;
    char *err = NULL;
    int rc = bt_store_open(t->home, &s, &err);
    if (rc) {
        t->result = BT_SERVICE_FAILED;
        t->message =
            bt_xasprintf("cannot open the store in %s: %s", t->home, err ? err : bt_strerror(rc));
    } else if (t->kind == TASK_RM) {
        do_rm(s, t);
    } else if (t->kind == TASK_DECIDE) {
        do_decide(s, t);
    } else {
        do_handoff(s, t);
    }
    free(err);
    bt_store_close(s);
}

/* On the loop: the reply, unless the request went away. */
static void task_done(uv_work_t *w, int status)
{
    struct bt_serve_task *t = w->data;
    if (t->req && status == 0 && t->kind == TASK_DECIDE && t->result == BT_SERVICE_OK) {
        decide_done(t);
    } else if (t->req && status == 0) {
        const char *msg = t->message ? t->message : "the operation failed";
        switch (t->result) {
        case BT_SERVICE_OK: bt_serve_reply_later(t->req, MHD_HTTP_OK, &t->body); break;
        case BT_SERVICE_USAGE:
            bt_serve_fail_later(t->req, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
            break;
        case BT_SERVICE_NOT_INSTALLED:
            bt_serve_fail_later(t->req, MHD_HTTP_UNPROCESSABLE_CONTENT, "not_installed", "%s", msg);
            break;
        default: bt_serve_fail_later(t->req, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s", msg);
        }
    }
    unlink_task(t);
    bt_buf_release(&t->body);
    free(t->message);
    free(t->home);
    free((char *)t->decision.request_id); /* owned copies: const only in the type */
    free((char *)t->decision.answers_json);
    free(t);
}

static enum MHD_Result start(struct bt_serve_req *r, enum task_kind kind,
                             const struct bt_service_decision *d)
{
    enum MHD_Result ret;
    if (kind != TASK_DECIDE && bt_serve_busy(r, r->conv, &ret))
        return ret;
    struct bt_serve_task *t = bt_xcalloc(1, sizeof *t);
    if (d) {
        t->decision = *d;
        t->decision.request_id = d->request_id ? bt_xstrdup(d->request_id) : NULL;
        t->decision.answers_json = d->answers_json ? bt_xstrdup(d->answers_json) : NULL;
    }
    t->work.data = t;
    t->kind = kind;
    memcpy(t->conv, r->conv, BT_ID_SIZE);
    t->home = bt_xstrdup(bt_store_home(r->srv->store));
    bt_buf_init(&t->body);
    bt_repo_start(); /* on the loop's thread, not the pool's (repo.h) */
    int rc = uv_queue_work(&r->srv->loop, &t->work, task_work, task_done);
    if (rc != 0) {
        free(t->home);
        free((char *)t->decision.request_id);
        free((char *)t->decision.answers_json);
        free(t);
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal",
                             "cannot start the operation: %s", uv_strerror(rc));
    }
    t->req = r;
    r->task = t;
    t->next = r->srv->tasks;
    if (t->next)
        t->next->pprev = &t->next;
    t->pprev = &r->srv->tasks;
    r->srv->tasks = t;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    return MHD_YES;
}

enum MHD_Result bt_serve_task_remove(struct bt_serve_req *r)
{
    return start(r, TASK_RM, NULL);
}

enum MHD_Result bt_serve_task_handoff(struct bt_serve_req *r, int tmux)
{
    return start(r, tmux ? TASK_TMUX : TASK_PRINT, NULL);
}

enum MHD_Result bt_serve_task_decide(struct bt_serve_req *r, const struct bt_service_decision *d)
{
    return start(r, TASK_DECIDE, d);
}

void bt_serve_task_forget(struct bt_serve_req *r)
{
    if (r->task)
        r->task->req = NULL; /* the task goes on; its reply is dropped */
    r->task = NULL;
}

void bt_serve_task_stop(struct bt_serve *srv)
{
    while (srv->tasks) {
        struct bt_serve_task *t = srv->tasks;
        if (t->req)
            bt_serve_fail_later(t->req, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                                "the server is stopping; the operation may still finish");
        unlink_task(t);                  /* the loop's last run waits for it, then frees it */
        uv_cancel((uv_req_t *)&t->work); /* one not started yet does not start */
    }
}
