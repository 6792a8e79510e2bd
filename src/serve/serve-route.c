/* SPDX-License-Identifier: MIT */
/*
 * serve-route: the path of a request to its handler. The path is split at
 * '/' as it came and each segment unescaped on its own: a segment that
 * unescapes to '/' or NUL, an empty one, "." or "..", never names anything
 * (404), so no spelling of a path reaches another resource. Conversation
 * ids are full ids of conversations that exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "serve.h"
#include "store.h"

#define MAX_SEGMENTS 6
#define SEGMENT_MAX 128

struct path {
    int n;
    char seg[MAX_SEGMENTS][SEGMENT_MAX];
};

enum {
    ROUTE_OPEN = 1 << 0,      /* served without the token: the page's files, the API document */
    ROUTE_NO_FIELDS = 1 << 1, /* takes no body, or a JSON object with no member */
};

struct route {
    const char *method;                            /* "GET", "POST", ... exactly */
    const char *pattern;                           /* "/v1/conversations/{id}/cancel" */
    int flags;                                     /* ROUTE_* */
    enum MHD_Result (*fn)(struct bt_serve_req *r); /* r->conv and r->arg set */
};

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescape s[0..n) into out; 0, or -1 for what names nothing. */
static int segment(const char *s, size_t n, char out[SEGMENT_MAX])
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
                return -1;
            c = hex(s[i + 1]) * 16 + hex(s[i + 2]);
            i += 2;
        }
        if (c == 0 || c == '/' || o + 1 >= SEGMENT_MAX)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return o == 0 || strcmp(out, ".") == 0 || strcmp(out, "..") == 0 ? -1 : 0;
}

static int split(const char *uri, struct path *p)
{
    size_t len = strcspn(uri, "?#");
    p->n = 0;
    if (len == 0 || uri[0] != '/')
        return -1;
    if (len == 1)
        return 0; /* "/" */
    for (size_t i = 1; i <= len;) {
        size_t n = strcspn(uri + i, "/?#");
        if (i + n > len)
            n = len - i;
        if (p->n == MAX_SEGMENTS || segment(uri + i, n, p->seg[p->n]) != 0)
            return -1;
        p->n++;
        i += n + 1;
    }
    return 0;
}

static enum MHD_Result not_found(struct bt_serve_req *r)
{
    return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "nothing is at %.200s", r->uri);
}

static enum MHD_Result not_allowed(struct bt_serve_req *r, const char *allow)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_serve_error_json(&b, "method_not_allowed", "this path takes another method");
    size_t len;
    char *data = bt_buf_detach(&b, &len);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* A body, when one came, must say it is JSON (a cross-site form cannot). */
static int json_body_ok(const struct bt_serve_req *r)
{
    if (r->body.len == 0 && r->dropped == 0)
        return 1;
    const char *ct =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n = ct ? strcspn(ct, "; ") : 0;
    return ct && n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

static enum MHD_Result login(struct bt_serve_req *r)
{
    enum MHD_Result ret;
    if (bt_serve_body_none(r, &ret) != 0)
        return ret;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    char *cookie = bt_xasprintf("baton_token=%s; HttpOnly; SameSite=Strict; Path=/", r->srv->token);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    free(cookie);
    ret = MHD_queue_response(r->conn, MHD_HTTP_NO_CONTENT, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result openapi(struct bt_serve_req *r)
{
    return bt_serve_page(r, "/openapi.json");
}

static enum MHD_Result page(struct bt_serve_req *r)
{
    char path[SEGMENT_MAX + 1];
    snprintf(path, sizeof path, "/%s", r->arg);
    return bt_serve_page(r, path);
}

/* Every route: a request goes to the first whose method and pattern it
 * matches. A pattern is literal segments and parameters: {id} is a
 * conversation's full id (checked to exist before the handler runs, into
 * r->conv), {n}, {gid} (a group's id) and {file} any one segment (into
 * r->arg); {file} never is
 * "v1", so no path under /v1 is a page's file. A path some pattern matches
 * with another method gets 405 with every method that path takes. */
static const struct route routes[] = {
    {"GET", "/", ROUTE_OPEN, page},
    {"HEAD", "/", ROUTE_OPEN, page},
    {"GET", "/{file}", ROUTE_OPEN, page},
    {"HEAD", "/{file}", ROUTE_OPEN, page},
    {"GET", "/v1/openapi.json", ROUTE_OPEN, openapi},
    {"POST", "/v1/login", 0, login},
    {"GET", "/v1/coders", 0, bt_serve_read_coders},
    {"GET", "/v1/events", 0, bt_serve_sse_all},
    {"GET", "/v1/conversations", 0, bt_serve_read_list},
    {"POST", "/v1/conversations", 0, bt_serve_api_create},
    {"GET", "/v1/conversations/{id}", 0, bt_serve_read_detail},
    {"DELETE", "/v1/conversations/{id}", ROUTE_NO_FIELDS, bt_serve_api_remove},
    {"GET", "/v1/conversations/{id}/events", 0, bt_serve_sse_conversation},
    {"POST", "/v1/conversations/{id}/messages", 0, bt_serve_api_send},
    {"POST", "/v1/conversations/{id}/cancel", ROUTE_NO_FIELDS, bt_serve_api_cancel},
    {"POST", "/v1/conversations/{id}/steer", 0, bt_serve_api_steer},
    {"GET", "/v1/conversations/{id}/requests", 0, bt_serve_ask_list},
    {"POST", "/v1/conversations/{id}/requests/{n}", 0, bt_serve_ask_decide},
    {"POST", "/v1/conversations/{id}/retry", 0, bt_serve_api_retry},
    {"POST", "/v1/conversations/{id}/handoff", 0, bt_serve_api_handoff},
    {"DELETE", "/v1/conversations/{id}/queue/{n}", ROUTE_NO_FIELDS, bt_serve_api_unqueue},
    {"GET", "/v1/conversations/{id}/diff", 0, bt_serve_work_diff},
    {"GET", "/v1/conversations/{id}/turns/{n}/diff", 0, bt_serve_work_turn_diff},
    {"POST", "/v1/conversations/{id}/keep", 0, bt_serve_work_keep},
    {"GET", "/v1/groups", 0, bt_serve_work_groups},
    {"GET", "/v1/groups/{gid}", 0, bt_serve_work_group},
};

/* pattern matches p; its {id} and {n}/{file} segments are set in *id and
 * *arg (pointers into p). */
static int match(const char *pattern, const struct path *p, const char **id, const char **arg)
{
    int i = 0;
    *id = *arg = NULL;
    for (const char *s = pattern + 1; *s; i++) {
        size_t n = strcspn(s, "/");
        if (i == p->n)
            return 0;
        const char *seg = p->seg[i];
        if (n == 4 && strncmp(s, "{id}", 4) == 0)
            *id = seg;
        else if ((n == 3 && strncmp(s, "{n}", 3) == 0) || (n == 5 && strncmp(s, "{gid}", 5) == 0) ||
                 (n == 6 && strncmp(s, "{file}", 6) == 0 && strcmp(seg, "v1") != 0))
            *arg = seg;
        else if (strlen(seg) != n || strncmp(s, seg, n) != 0)
            return 0;
        s += n + (s[n] == '/');
    }
    return i == p->n;
}

/* The route for r's method and path, NULL with *allow (owned) the methods
 * the path takes ("" when none). */
static const struct route *find(const struct bt_serve_req *r, const struct path *p, char **allow,
                                const char **id, const char **arg)
{
    struct bt_buf b = BT_BUF_INIT;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!match(routes[i].pattern, p, id, arg))
            continue;
        if (strcmp(routes[i].method, r->method) == 0) {
            bt_buf_release(&b);
            *allow = NULL;
            return &routes[i];
        }
        if (!strstr(b.data, routes[i].method))
            bt_buf_addf(&b, "%s%s", b.len ? ", " : "", routes[i].method);
    }
    *allow = bt_buf_detach(&b, NULL);
    return NULL;
}

/* {id}: recover what died first (so neither a stream nor a busy check
 * waits on a dead worker), then the conversation must exist. 0, or -1
 * with the reply queued in *ret. */
static int need_conversation(struct bt_serve_req *r, const char *id, enum MHD_Result *ret)
{
    if (bt_serve_recover(r->srv))
        bt_serve_sse_wake(r->srv, NULL);
    struct bt_store_conversation c = {0};
    int rc = bt_id_valid(id) ? bt_store_conversation_get(r->srv->store, id, &c) : BT_ENOTFOUND;
    bt_store_conversation_release(&c);
    if (rc == BT_ENOTFOUND)
        *ret = bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "no conversation '%s'", id);
    else if (rc)
        *ret = bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                             bt_store_errmsg(r->srv->store));
    else
        snprintf(r->conv, sizeof r->conv, "%s", id);
    return rc ? -1 : 0;
}

int bt_serve_route_open(const char *uri)
{
    struct path p;
    if (split(uri, &p) != 0)
        return 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const char *id, *arg;
        if ((routes[i].flags & ROUTE_OPEN) && match(routes[i].pattern, &p, &id, &arg))
            return 1;
    }
    return 0;
}

enum MHD_Result bt_serve_route(struct bt_serve_req *r)
{
    struct path p;
    if (split(r->uri, &p) != 0)
        return not_found(r);
    if (!json_body_ok(r))
        return bt_serve_fail(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                             "a request body must be JSON, sent as application/json");
    char *allow;
    const char *id, *arg;
    const struct route *rt = find(r, &p, &allow, &id, &arg);
    if (!rt) {
        enum MHD_Result ret = *allow ? not_allowed(r, allow) : not_found(r);
        free(allow);
        return ret;
    }
    enum MHD_Result ret;
    if (id && need_conversation(r, id, &ret) != 0)
        return ret;
    if ((rt->flags & ROUTE_NO_FIELDS) && bt_serve_body_none(r, &ret) != 0)
        return ret;
    snprintf(r->arg, sizeof r->arg, "%s", arg ? arg : "");
    return rt->fn(r);
}
