/* SPDX-License-Identifier: MIT */
/*
 * serve-http: one request through libmicrohttpd. The URI is kept as it came
 * (the URI log callback runs before MHD unescapes it), so routing sees
 * "%2f" and "%00" for what they are. Before any body is read: Host must be a
 * loopback name or the listen address with our port (DNS rebinding), an
 * Origin must be ours, and /v1 needs the token. Bodies are kept up to
 * BT_SERVE_BODY_MAX; past that the request is answered 413 once it is in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

#define COOKIE_NAME "baton_token"

/* host (no port) names this server: a loopback name or the listen host. */
static int own_host(const struct bt_serve *srv, const char *h, size_t n)
{
    static const char *const loop[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof loop / sizeof loop[0]; i++)
        if (strlen(loop[i]) == n && strncasecmp(h, loop[i], n) == 0)
            return 1;
    size_t ln = strlen(srv->host);
    if (ln == n && strncasecmp(h, srv->host, n) == 0)
        return 1;
    /* an IPv6 listen host appears bracketed in Host */
    return ln + 2 == n && h[0] == '[' && h[n - 1] == ']' && strncasecmp(h + 1, srv->host, ln) == 0;
}

/* "host[:port]" is ours: our name and, when a port is given, our port. */
static int own_authority(const struct bt_serve *srv, const char *a)
{
    if (!a || !*a)
        return 0;
    /* the port is required: without one, Host means port 80, not ours */
    const char *colon = strrchr(a, ':');
    if (!colon || (a[0] == '[' && colon < strchr(a, ']')))
        return 0;
    char *e;
    long port = strtol(colon + 1, &e, 10);
    if (e == colon + 1 || *e || port != srv->port || colon[1] == '+' || colon[1] == '-')
        return 0;
    return own_host(srv, a, (size_t)(colon - a));
}

static int own_origin(const struct bt_serve *srv, const char *origin)
{
    return strncmp(origin, "http://", 7) == 0 && strchr(origin + 7, '/') == NULL &&
           strchr(origin + 7, ':') != NULL && own_authority(srv, origin + 7);
}

struct header_count {
    const char *name;
    int n;
};

static enum MHD_Result count_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind, (void)value;
    struct header_count *c = cls;
    if (key && strcasecmp(key, c->name) == 0)
        c->n++;
    return MHD_YES;
}

/* How many times the request has header name: a second Host (RFC 9112,
 * 3.2: answered 400) or Origin could say another thing than the first,
 * which is the one checked. */
static int header_count(struct MHD_Connection *conn, const char *name)
{
    struct header_count c = {name, 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_one, &c);
    return c.n;
}

static int has_token(const struct bt_serve_req *r)
{
    const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    if (auth && strncasecmp(auth, "Bearer ", 7) == 0)
        return bt_serve_token_equal(auth + 7, r->srv->token);
    const char *cookie = MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, COOKIE_NAME);
    return bt_serve_token_equal(cookie, r->srv->token);
}

/* 0 when the request may go on; otherwise the reply was queued. */
static int refuse(struct bt_serve_req *r, enum MHD_Result *ret)
{
    const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
    const char *origin = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
    const char *length =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (bt_serve_conn_over(r->srv)) {
        bt_serve_sse_probe(r->srv); /* closed streams may hold slots */
        *ret = bt_serve_fail(r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                             "the server has %d connections open, its most; try again",
                             BT_SERVE_CONNECTIONS);
    } else if (header_count(r->conn, "Host") > 1 || header_count(r->conn, "Origin") > 1)
        *ret = bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                             "a request has one Host header and at most one Origin");
    else if (!own_authority(r->srv, host))
        *ret = bt_serve_fail(r, MHD_HTTP_MISDIRECTED_REQUEST, "misdirected",
                             "this server answers to 127.0.0.1:%d, localhost:%d or the address "
                             "it listens on, not '%s'",
                             r->srv->port, r->srv->port, host ? host : "");
    else if (origin && !own_origin(r->srv, origin))
        *ret = bt_serve_fail(r, MHD_HTTP_FORBIDDEN, "forbidden_origin",
                             "requests from pages of another origin (%s) are refused", origin);
    else if (!bt_serve_route_open(r->uri) && !has_token(r))
        *ret = bt_serve_fail(r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                             "this needs the token of $BATON_HOME/serve.token, as "
                             "'Authorization: Bearer TOKEN'");
    else if (length && strtoull(length, NULL, 10) > BT_SERVE_BODY_MAX)
        *ret = bt_serve_fail(r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
                             "the body is over %u bytes", BT_SERVE_BODY_MAX);
    else
        return 0;
    return 1;
}

/* The query of uri holds an escaped NUL: MHD unescapes its parameters
 * into C strings, so "?q=a%00b" would be read as "a", the rest dropped
 * unseen (as a NUL in a body is refused, serve-api.c). */
static int query_nul(const char *uri)
{
    const char *q = strchr(uri, '?');
    return q && (strstr(q, "%00") != NULL);
}

void *bt_serve_http_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct bt_serve_req *r = bt_xcalloc(1, sizeof *r);
    r->srv = cls;
    r->conn = c;
    r->uri = bt_xstrdup(uri ? uri : "");
    r->uri_at = uri;
    r->uri_len = uri ? strlen(uri) : 0;
    bt_buf_init(&r->body);
    return r;
}

static void take_body(struct bt_serve_req *r, const char *upload, size_t n)
{
    if (r->open) { /* 272 bodies of 4 MiB to / held 1 GiB without a token */
        r->dropped += n;
        r->too_large |= r->dropped > BT_SERVE_BODY_MAX;
        return;
    }
    if (r->too_large || r->body.len + n > BT_SERVE_BODY_MAX) {
        r->too_large = 1; /* read on, so the 413 reaches the client */
        bt_buf_release(&r->body);
        return;
    }
    bt_buf_add(&r->body, upload, n);
}

enum MHD_Result bt_serve_http_access(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version, const char *upload,
                                     size_t *upload_size, void **con_cls)
{
    (void)cls, (void)c, (void)url, (void)version;
    struct bt_serve_req *r = *con_cls;
    enum MHD_Result ret = MHD_YES;
    if (r->reply) { /* resumed with the reply a worker's report made */
        ret = MHD_queue_response(r->conn, r->reply_status, r->reply);
        MHD_destroy_response(r->reply);
        r->reply = NULL;
        return ret;
    }
    if (r->suspended)
        return MHD_YES;
    if (!r->started) {
        r->started = 1;
        r->method = method;
        /* MHD ends the request target where the version begins; a NUL
         * before that would hide the rest of the path from us */
        if (version && r->uri_at && version > r->uri_at &&
            (size_t)(version - r->uri_at) != r->uri_len + 1)
            return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "the request target holds a NUL byte");
        if (r->uri_len > BT_SERVE_URI_MAX)
            return bt_serve_fail(r, MHD_HTTP_URI_TOO_LONG, "uri_too_long",
                                 "the request target is over %u bytes", BT_SERVE_URI_MAX);
        if (query_nul(r->uri))
            return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "a query parameter holds a NUL byte (%%00)");
        r->open = bt_serve_route_open(r->uri);
        return refuse(r, &ret) ? ret : MHD_YES;
    }
    if (*upload_size) {
        take_body(r, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    bt_serve_conn_request_in(c); /* no deadline while it is answered */
    if (r->too_large)
        return bt_serve_fail(r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
                             "the body is over %u bytes", BT_SERVE_BODY_MAX);
    return bt_serve_route(r);
}

void bt_serve_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)toe;
    struct bt_serve_req *r = *con_cls;
    bt_serve_conn_request_done(c);
    if (!r)
        return;
    bt_serve_api_forget(r);
    bt_serve_task_forget(r);
    if (r->reply)
        MHD_destroy_response(r->reply);
    bt_buf_release(&r->body);
    free(r->location);
    free(r->uri);
    free(r);
    *con_cls = NULL;
}
