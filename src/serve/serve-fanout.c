/* SPDX-License-Identifier: MIT */
/*
 * serve-fanout: POST /v1/conversations with "coders" (`baton run -c
 * a,b,c`): the service makes a group and one conversation per coder, its
 * prompt queued (service-work.h, bt_service_fanout); a detached worker per
 * conversation takes it, as for one coder (serve-api.c), and the request
 * waits suspended for every worker's report. The reply names each
 * member's conversation and run, or why it did not start (what was stored
 * for it is taken back, as for one coder).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "serve.h"
#include "service-work.h"
#include "view.h"

struct bt_serve_fan {
    struct bt_serve *srv;
    struct bt_serve_req *req;       /* NULL once the request went away */
    struct bt_service_fanout made;  /* the group and its members */
    char (*run)[BT_ID_SIZE];        /* each member's run, "" when none */
    struct bt_service_outcome *why; /* why not: result, error_kind, message (owned) */
    int *stopping;                  /* the server stopped before its worker reported */
    size_t left;                    /* reports still awaited */
};

static void fan_free(struct bt_serve_fan *fan)
{
    for (size_t i = 0; fan->why && i < fan->made.n; i++)
        free(fan->why[i].message);
    free(fan->why);
    free(fan->stopping);
    free(fan->run);
    bt_service_fanout_release(&fan->made);
    free(fan);
}

/* The error kind and HTTP status of member i, which did not start. */
static const char *kind_of(const struct bt_serve_fan *fan, size_t i, unsigned *status)
{
    const struct bt_service_outcome *o = &fan->why[i];
    *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    if (fan->stopping[i]) {
        *status = MHD_HTTP_SERVICE_UNAVAILABLE;
        return "unavailable";
    }
    if (o->result == BT_SERVICE_NOT_INSTALLED || o->error_kind == BT_ERROR_KIND_AUTH_REQUIRED) {
        *status = MHD_HTTP_UNPROCESSABLE_CONTENT;
        return o->result == BT_SERVICE_NOT_INSTALLED ? "not_installed" : "auth_required";
    }
    if (o->result == BT_SERVICE_USAGE) {
        *status = MHD_HTTP_CONFLICT;
        return "conflict";
    }
    return "internal";
}

/* Why member i did not start, a sentence. */
static const char *failure(const struct bt_serve_fan *fan, size_t i)
{
    return fan->stopping[i]      ? "the server stopped before its worker reported"
           : fan->why[i].message ? fan->why[i].message
                                 : "it did not start";
}

/* {coder, conversation, run, error} of member i. */
static void member_json(struct bt_buf *b, const struct bt_serve_fan *fan, size_t i)
{
    const struct bt_service_fanned *m = &fan->made.v[i];
    bt_buf_addc(b, '{');
    bt_json_member(b, "coder", m->coder);
    bt_json_member(b, "conversation", fan->run[i][0] ? m->conversation : NULL);
    bt_json_member(b, "run", fan->run[i][0] ? fan->run[i] : NULL);
    bt_buf_adds(b, ",\"error\":");
    if (fan->run[i][0]) {
        bt_buf_adds(b, "null}");
        return;
    }
    unsigned status;
    bt_buf_addc(b, '{');
    bt_json_member(b, "kind", kind_of(fan, i, &status));
    bt_json_member(b, "message", failure(fan, i));
    bt_buf_adds(b, "}}");
}

/* The first member that did not start. */
static size_t first_failed(const struct bt_serve_fan *fan)
{
    size_t i = 0;
    while (i + 1 < fan->made.n && fan->run[i][0])
        i++;
    return i;
}

/* Every report is in: 201 {group, conversations}, or the first member's
 * refusal when none started. */
static void reply(struct bt_serve_fan *fan)
{
    struct bt_serve_req *r = fan->req;
    size_t started = 0, first = first_failed(fan);
    int stopping = 0;
    for (size_t i = 0; i < fan->made.n; i++) {
        started += fan->run[i][0] != '\0';
        stopping |= fan->stopping[i];
    }
    if (stopping) {
        bt_serve_fail_later(r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                            "the server is stopping; the turns may still start in their workers");
        return;
    }
    if (!started) {
        unsigned status;
        const char *kind = kind_of(fan, first, &status);
        bt_serve_fail_later(r, status, kind, "%s", failure(fan, first));
        return;
    }
    struct bt_service_group g;
    if (bt_service_group_show(fan->srv->store, fan->made.group, &g) != 0) {
        bt_service_group_release(&g);
        bt_serve_fail_later(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                            bt_store_errmsg(fan->srv->store));
        return;
    }
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"group\":");
    bt_view_group(&b, &g);
    bt_buf_adds(&b, ",\"conversations\":[");
    for (size_t i = 0; i < fan->made.n; i++) {
        if (i)
            bt_buf_addc(&b, ',');
        member_json(&b, fan, i);
    }
    bt_buf_adds(&b, "]}\n");
    bt_service_group_release(&g);
    r->location = bt_xasprintf("/v1/groups/%s", fan->made.group);
    bt_serve_reply_later(r, MHD_HTTP_CREATED, &b);
}

void bt_serve_fan_report(struct bt_serve_fan *fan, size_t index, const char *run,
                         const struct bt_service_outcome *o)
{
    if (run) {
        snprintf(fan->run[index], BT_ID_SIZE, "%s", run);
    } else if (!o) {
        fan->stopping[index] = 1;
    } else {
        fan->why[index] = *o;
        fan->why[index].message = o->message ? bt_xstrdup(o->message) : NULL;
    }
    if (--fan->left) /* the others' reports are still read */
        return;
    if (fan->req) {
        fan->req->fan = NULL;
        reply(fan);
    }
    fan_free(fan);
}

void bt_serve_fan_forget(struct bt_serve_req *r)
{
    if (r->fan)
        r->fan->req = NULL;
    r->fan = NULL;
}

/* A worker for each member made; those not made, or whose worker could
 * not start, have their reason now. */
static void start_members(struct bt_serve_req *r, struct bt_serve_fan *fan,
                          const struct bt_service_turn *t, bt_serve_member_start_fn start)
{
    for (size_t i = 0; i < fan->made.n; i++) {
        const struct bt_service_fanned *m = &fan->made.v[i];
        if (!m->conversation[0]) { /* the service said why */
            fan->why[i].result = m->result;
            fan->why[i].message = bt_xstrdup(m->message ? m->message : "it could not start");
            continue;
        }
        int rc = start(r->srv, fan, i, m->conversation, m->queued, t);
        if (rc == 0) {
            fan->left++;
            continue;
        }
        fan->why[i].result = BT_SERVICE_FAILED;
        fan->why[i].message = bt_xasprintf("cannot start a worker: %s", bt_strerror(rc));
    }
}

enum MHD_Result bt_serve_fan_create(struct bt_serve_req *r, const struct bt_service_turn *t,
                                    const struct cJSON *coders, bt_serve_member_start_fn start)
{
    size_t n = 0;
    for (const cJSON *c = coders->child; c; c = c->next)
        n++;
    const char **names = bt_xcalloc(n, sizeof *names);
    n = 0;
    for (const cJSON *c = coders->child; c; c = c->next)
        names[n++] = c->valuestring;
    struct bt_serve_fan *fan = bt_xcalloc(1, sizeof *fan);
    fan->srv = r->srv;
    int rc = bt_service_fanout(r->srv->store, t, names, n, &fan->made);
    free(names);
    if (rc != 0) {
        enum MHD_Result ret =
            fan->made.result == BT_SERVICE_USAGE
                ? bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "%s", fan->made.message)
            : fan->made.result == BT_SERVICE_NOT_INSTALLED
                ? bt_serve_fail(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "not_installed", "%s",
                                fan->made.message)
                : bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                                fan->made.message);
        fan_free(fan);
        return ret;
    }
    n = fan->made.n;
    fan->run = bt_xcalloc(n, sizeof *fan->run);
    fan->why = bt_xcalloc(n, sizeof *fan->why);
    fan->stopping = bt_xcalloc(n, sizeof *fan->stopping);
    start_members(r, fan, t, start); /* reports come on the loop, never now */
    if (fan->left == 0) {            /* no worker started */
        size_t i = first_failed(fan);
        unsigned status;
        const char *kind = kind_of(fan, i, &status);
        enum MHD_Result ret = bt_serve_fail(r, status, kind, "%s", failure(fan, i));
        fan_free(fan);
        return ret;
    }
    fan->req = r;
    r->fan = fan;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    return MHD_YES;
}
