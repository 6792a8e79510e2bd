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

static int is(const struct bt_serve_req *r, const char *m)
{
    return strcmp(r->method, m) == 0;
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

/* The methods a path under /v1/conversations/ID takes, NULL for no path. */
static const char *allowed(const struct path *p)
{
    if (p->n == 3)
        return "GET, DELETE";
    const char *what = p->seg[3];
    if (p->n == 5 && strcmp(what, "queue") == 0)
        return "DELETE";
    if (p->n == 6 && strcmp(what, "turns") == 0 && strcmp(p->seg[5], "diff") == 0)
        return "GET";
    if (p->n != 4)
        return NULL;
    if (strcmp(what, "events") == 0 || strcmp(what, "diff") == 0)
        return "GET";
    if (strcmp(what, "keep") == 0)
        return "POST";
    if (strcmp(what, "messages") == 0 || strcmp(what, "cancel") == 0 ||
        strcmp(what, "retry") == 0 || strcmp(what, "handoff") == 0)
        return "POST";
    return NULL;
}

static int method_in(const struct bt_serve_req *r, const char *allow)
{
    size_t n = strlen(r->method);
    for (const char *p = allow; (p = strstr(p, r->method)) != NULL; p += n)
        if ((p == allow || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* /v1/conversations/ID[/...]: a path and method it takes, then ID must be
 * a conversation. */
static enum MHD_Result conversation(struct bt_serve_req *r, const struct path *p)
{
    const char *allow = allowed(p), *id = p->seg[2];
    if (!allow)
        return not_found(r);
    if (!method_in(r, allow))
        return not_allowed(r, allow);
    if (bt_serve_recover(r->srv))
        bt_serve_sse_wake(r->srv, NULL);
    struct bt_store_conversation c = {0};
    int rc = bt_id_valid(id) ? bt_store_conversation_get(r->srv->store, id, &c) : BT_ENOTFOUND;
    bt_store_conversation_release(&c);
    if (rc == BT_ENOTFOUND)
        return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "no conversation '%s'", id);
    if (rc)
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                             bt_store_errmsg(r->srv->store));
    const char *what = p->n > 3 ? p->seg[3] : "";
    enum MHD_Result ret;
    int fieldless = (p->n == 3 && !is(r, "GET")) || p->n == 5 || strcmp(what, "cancel") == 0;
    if (fieldless && bt_serve_body_none(r, &ret) != 0)
        return ret;
    if (p->n == 3)
        return is(r, "GET") ? bt_serve_read_detail(r, id) : bt_serve_cli_remove(r, id);
    if (p->n == 5)
        return bt_serve_api_unqueue(r, id, p->seg[4]);
    if (p->n == 6)
        return bt_serve_work_diff(r, id, p->seg[4]);
    if (strcmp(what, "diff") == 0)
        return bt_serve_work_diff(r, id, NULL);
    if (strcmp(what, "keep") == 0)
        return bt_serve_work_keep(r, id);
    if (strcmp(what, "events") == 0)
        return bt_serve_sse_conversation(r, id);
    if (strcmp(what, "messages") == 0)
        return bt_serve_api_send(r, id);
    if (strcmp(what, "cancel") == 0)
        return bt_serve_api_cancel(r, id);
    if (strcmp(what, "retry") == 0)
        return bt_serve_api_retry(r, id);
    return bt_serve_api_handoff(r, id);
}

static enum MHD_Result v1(struct bt_serve_req *r, const struct path *p)
{
    const char *top = p->n > 1 ? p->seg[1] : "";
    if (p->n == 2 && strcmp(top, "coders") == 0)
        return is(r, "GET") ? bt_serve_read_coders(r) : not_allowed(r, "GET");
    if (p->n == 2 && strcmp(top, "events") == 0)
        return is(r, "GET") ? bt_serve_sse_all(r) : not_allowed(r, "GET");
    if (p->n == 2 && strcmp(top, "login") == 0)
        return is(r, "POST") ? login(r) : not_allowed(r, "POST");
    if (p->n == 2 && strcmp(top, "openapi.json") == 0)
        return is(r, "GET") ? bt_serve_page(r, "/openapi.json") : not_allowed(r, "GET");
    if (p->n == 2 && strcmp(top, "conversations") == 0)
        return is(r, "GET")    ? bt_serve_read_list(r)
               : is(r, "POST") ? bt_serve_api_create(r)
                               : not_allowed(r, "GET, POST");
    if (p->n >= 3 && strcmp(top, "conversations") == 0)
        return conversation(r, p);
    if (p->n == 2 && strcmp(top, "groups") == 0)
        return is(r, "GET") ? bt_serve_work_groups(r) : not_allowed(r, "GET");
    if (p->n == 3 && strcmp(top, "groups") == 0)
        return is(r, "GET") ? bt_serve_work_group(r, p->seg[2]) : not_allowed(r, "GET");
    return not_found(r);
}

int bt_serve_route_open(const char *uri)
{
    struct path p;
    if (split(uri, &p) != 0)
        return 0;
    if (p.n >= 1 && strcmp(p.seg[0], "v1") == 0)
        return p.n == 2 && strcmp(p.seg[1], "openapi.json") == 0;
    return p.n <= 1;
}

enum MHD_Result bt_serve_route(struct bt_serve_req *r)
{
    struct path p;
    if (split(r->uri, &p) != 0)
        return not_found(r);
    if (!json_body_ok(r))
        return bt_serve_fail(r, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
                             "a request body must be JSON, sent as application/json");
    if (p.n >= 1 && strcmp(p.seg[0], "v1") == 0)
        return v1(r, &p);
    if (p.n > 1)
        return not_found(r);
    if (!is(r, "GET") && !is(r, "HEAD"))
        return not_allowed(r, "GET, HEAD");
    char path[SEGMENT_MAX + 1];
    snprintf(path, sizeof path, "/%s", p.n == 1 ? p.seg[0] : "");
    return bt_serve_page(r, path);
}
