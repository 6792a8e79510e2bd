/* SPDX-License-Identifier: MIT */
/*
 * serve-page: the web page's files, built into the binary (web.h). The
 * page holds no data, so it is served without the token; it reads the
 * token from the address's fragment, which browsers never send. A strict
 * Content-Security-Policy keeps any text that slipped through from
 * running: no inline script or style, nothing from elsewhere.
 */
#include "serve.h"
#include "web.h"

#define CSP                                                                                        \
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "              \
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

enum MHD_Result bt_serve_page(struct bt_serve_req *r, const char *path)
{
    const struct bt_web_file *f = bt_web_find(path); /* "/" is index.html */
    if (!f)
        return bt_serve_fail(r, MHD_HTTP_NOT_FOUND, "not_found", "nothing is at %.200s", path);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(f->len, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, f->content_type);
    MHD_add_response_header(resp, "Content-Security-Policy", CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}
