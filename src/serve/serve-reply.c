/* SPDX-License-Identifier: MIT */
/*
 * serve-reply: what every handler answers with (serve.h): a JSON reply or
 * error object now, or later for a suspended request, a query argument,
 * and the busy check. The bottom of the server: it calls no other serve
 * file, so the handlers, the route table above them and the loop above
 * that use it one way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "store.h"

static struct MHD_Response *json_response(const struct bt_serve_req *r, struct bt_buf *body)
{
    size_t len = 0;
    char *data = body && body->data ? bt_buf_detach(body, &len) : NULL;
    struct MHD_Response *resp =
        data ? MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE)
             : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (data)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->location)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
    return resp;
}

enum MHD_Result bt_serve_reply(struct bt_serve_req *r, unsigned status, struct bt_buf *body)
{
    struct MHD_Response *resp = json_response(r, body);
    enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

void bt_serve_error_json(struct bt_buf *b, const char *kind, const char *message)
{
    bt_buf_adds(b, "{\"error\":{");
    bt_buf_adds(b, "\"kind\":");
    bt_json_quote(b, kind, strlen(kind));
    bt_buf_adds(b, ",\"message\":");
    bt_json_quote(b, message, strlen(message));
    bt_buf_adds(b, "}}\n");
}

static BT_PRINTF(3, 0) void error_body(struct bt_buf *b, const char *kind, const char *fmt,
                                       va_list ap)
{
    struct bt_buf msg = BT_BUF_INIT;
    bt_buf_vaddf(&msg, fmt, ap);
    bt_serve_error_json(b, kind, msg.data ? msg.data : "");
    bt_buf_release(&msg);
}

enum MHD_Result bt_serve_fail(struct bt_serve_req *r, unsigned status, const char *kind,
                              const char *fmt, ...)
{
    struct bt_buf b = BT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    error_body(&b, kind, fmt, ap);
    va_end(ap);
    return bt_serve_reply(r, status, &b);
}

void bt_serve_reply_later(struct bt_serve_req *r, unsigned status, struct bt_buf *body)
{
    if (r->reply)
        MHD_destroy_response(r->reply);
    r->reply = json_response(r, body);
    r->reply_status = status;
    if (r->suspended) {
        r->suspended = 0;
        MHD_resume_connection(r->conn);
    }
}

void bt_serve_fail_later(struct bt_serve_req *r, unsigned status, const char *kind, const char *fmt,
                         ...)
{
    struct bt_buf b = BT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    error_body(&b, kind, fmt, ap);
    va_end(ap);
    bt_serve_reply_later(r, status, &b);
}

const char *bt_serve_arg(const struct bt_serve_req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

int bt_serve_busy(struct bt_serve_req *r, const char *conv, enum MHD_Result *ret)
{
    struct bt_store_run last = {0};
    int busy =
        bt_store_run_last(r->srv->store, conv, &last) == 0 && last.state == BT_STORE_RUN_RUNNING;
    if (busy)
        *ret =
            bt_serve_fail(r, MHD_HTTP_CONFLICT, "busy", "run %s of %s is running", last.id, conv);
    bt_store_run_release(&last);
    return busy;
}
