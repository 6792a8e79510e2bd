/* SPDX-License-Identifier: MIT */
/*
 * serve-read: the requests that read the store, through the same views as
 * the CLI's --json (view.h); the transcript's markdown rendered by
 * markdown.h.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "serve.h"
#include "store.h"
#include "markdown.h"
#include "view.h"

static enum MHD_Result reply_view(struct bt_serve_req *r, int rc, struct bt_buf *b)
{
    if (rc == 0)
        return bt_serve_reply(r, MHD_HTTP_OK, b);
    bt_buf_release(b);
    if (rc == BT_ENOTFOUND)
        return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "%s",
                             bt_store_errmsg(r->srv->store));
    return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                         bt_store_errmsg(r->srv->store));
}

enum MHD_Result bt_serve_read_coders(struct bt_serve_req *r)
{
    struct bt_buf b = BT_BUF_INIT;
    int rc = bt_view_coders(r->srv->store, &b);
    return reply_view(r, rc, &b);
}

enum MHD_Result bt_serve_read_list(struct bt_serve_req *r)
{
    const char *q = bt_serve_arg(r, "q"), *limit = bt_serve_arg(r, "limit");
    long n = 100;
    if (limit) {
        char *end;
        n = strtol(limit, &end, 10);
        if (end == limit || *end || n < 1 || n > 1000)
            return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                                 "limit takes a number from 1 to 1000");
    }
    if (q && bt_utf8_invalid_at(q, strlen(q)) < strlen(q))
        return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request", "q is not UTF-8 text");
    struct bt_buf b = BT_BUF_INIT;
    int rc = bt_view_conversations(r->srv->store, q && *q ? q : NULL, (size_t)n, &b);
    return reply_view(r, rc, &b);
}

enum MHD_Result bt_serve_read_detail(struct bt_serve_req *r)
{
    const char *conv = r->conv;
    const char *html = bt_serve_arg(r, "html");
    struct bt_buf b = BT_BUF_INIT;
    int want = html && (strcmp(html, "1") == 0 || strcmp(html, "true") == 0);
    if (html && !want && strcmp(html, "0") != 0 && strcmp(html, "false") != 0)
        return bt_serve_fail(r, MHD_HTTP_BAD_REQUEST, "bad_request",
                             "html takes 1 or 0 (true or false)");
    int rc = bt_view_conversation_detail(r->srv->store, conv, want ? bt_markdown_html : NULL, &b);
    return reply_view(r, rc, &b);
}
