/* SPDX-License-Identifier: MIT */
/*
 * serve-cli: DELETE /v1/conversations/{id} and POST …/handoff are what
 * `baton rm --yes` and `baton handoff --print|--tmux` do, so the server
 * runs those commands (the baton beside it) rather than a second copy of
 * their rules: which session files of which coder go, which coder deletes
 * its own sessions, when a handoff is refused. The command runs while the
 * request waits suspended; its exit code and last stderr line make the
 * reply.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "serve.h"
#include "store.h"

enum cli_kind { CLI_RM, CLI_PRINT, CLI_TMUX };

struct bt_serve_cli {
    struct bt_serve_cli *next, **pprev; /* in srv->clis */
    uv_process_t proc;
    uv_pipe_t out, err;
    struct bt_buf obuf, ebuf;
    struct bt_serve *srv;
    struct bt_serve_req *req; /* NULL once the request went away */
    enum cli_kind kind;
    char conv[BT_ID_SIZE];
    int64_t status;
    int pending; /* exit, stdout EOF, stderr EOF */
    int open;    /* handles not yet closed */
};

static void cli_closed(uv_handle_t *h)
{
    struct bt_serve_cli *c = h->data;
    if (--c->open == 0) {
        bt_buf_release(&c->obuf);
        bt_buf_release(&c->ebuf);
        free(c);
    }
}

static void cli_unlink(struct bt_serve_cli *c)
{
    if (c->pprev) {
        *c->pprev = c->next;
        if (c->next)
            c->next->pprev = c->pprev;
        c->pprev = NULL;
    }
    if (c->req)
        c->req->cli = NULL;
    c->req = NULL;
}

/* The last line of stderr without the "baton: " of the CLI's messages. */
static const char *last_line(struct bt_buf *b)
{
    while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
        b->data[--b->len] = '\0';
    if (!b->len)
        return "";
    char *line = strrchr(b->data, '\n');
    line = line ? line + 1 : b->data;
    return strncmp(line, "baton: ", 7) == 0 ? line + 7 : line;
}

static void reply_ok(struct bt_serve_cli *c)
{
    struct bt_buf b = BT_BUF_INIT;
    if (c->kind == CLI_RM) {
        bt_buf_adds(&b, "{\"removed\":");
        bt_json_quote(&b, c->conv, strlen(c->conv));
    } else {
        char name[64];
        snprintf(name, sizeof name, "baton-%.12s", c->conv);
        while (c->obuf.len && c->obuf.data[c->obuf.len - 1] == '\n')
            c->obuf.data[--c->obuf.len] = '\0';
        bt_buf_adds(&b, "{\"command\":");
        if (c->kind == CLI_TMUX) {
            char *attach = bt_xasprintf("tmux attach -t %s", name);
            bt_json_quote(&b, attach, strlen(attach));
            free(attach);
        } else {
            bt_json_quote(&b, c->obuf.data ? c->obuf.data : "", c->obuf.len);
        }
        struct bt_store_conversation conv = {0};
        bt_store_conversation_get(c->srv->store, c->conv, &conv);
        bt_json_member(&b, "cwd", conv.cwd ? conv.cwd : "");
        bt_store_conversation_release(&conv);
        bt_buf_adds(&b, ",\"tmux\":");
        if (c->kind == CLI_TMUX)
            bt_json_quote(&b, name, strlen(name));
        else
            bt_buf_adds(&b, "null");
    }
    bt_buf_adds(&b, "}\n");
    bt_serve_reply_later(c->req, MHD_HTTP_OK, &b);
}

static void answer(struct bt_serve_cli *c)
{
    if (c->req) {
        const char *msg = last_line(&c->ebuf);
        if (c->status == 0)
            reply_ok(c);
        else if (c->status == BT_EXIT_USAGE)
            bt_serve_fail_later(c->req, MHD_HTTP_CONFLICT, "conflict", "%s", msg);
        else if (c->status == BT_EXIT_NOT_INSTALLED)
            bt_serve_fail_later(c->req, MHD_HTTP_UNPROCESSABLE_CONTENT, "not_installed", "%s", msg);
        else
            bt_serve_fail_later(c->req, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "%s",
                                *msg ? msg : "the command failed");
    }
    cli_unlink(c);
    uv_close((uv_handle_t *)&c->proc, cli_closed);
    uv_close((uv_handle_t *)&c->out, cli_closed);
    uv_close((uv_handle_t *)&c->err, cli_closed);
}

static void step(struct bt_serve_cli *c)
{
    if (--c->pending == 0)
        answer(c);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    struct bt_serve_cli *c = p->data;
    c->status = sig ? 128 + sig : status;
    step(c);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    struct bt_serve_cli *c = h->data;
    struct bt_buf *b = h == (uv_handle_t *)&c->out ? &c->obuf : &c->ebuf;
    bt_buf_grow(b, 4096);
    *buf = uv_buf_init(b->data + b->len, 4096);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    (void)buf;
    struct bt_serve_cli *c = s->data;
    struct bt_buf *b = s == (uv_stream_t *)&c->out ? &c->obuf : &c->ebuf;
    if (n > 0 && b->len + (size_t)n < (1u << 20)) { /* a bounded message */
        b->len += (size_t)n;
        b->data[b->len] = '\0';
    }
    if (n < 0) {
        uv_read_stop(s);
        step(c);
    }
}

static enum MHD_Result run(struct bt_serve_req *r, enum cli_kind kind, const char *conv)
{
    enum MHD_Result ret;
    if (bt_serve_busy(r, conv, &ret))
        return ret;
    struct bt_serve_cli *c = bt_xcalloc(1, sizeof *c);
    const char *cmd = kind == CLI_RM ? "rm" : "handoff";
    const char *how = kind == CLI_RM ? "--yes" : kind == CLI_TMUX ? "--tmux" : "--print";
    char *args[] = {(char *)r->srv->baton, (char *)cmd, (char *)how, "--", (char *)conv, NULL};
    c->srv = r->srv;
    c->kind = kind;
    memcpy(c->conv, conv, BT_ID_SIZE);
    uv_pipe_init(&r->srv->loop, &c->out, 0);
    uv_pipe_init(&r->srv->loop, &c->err, 0);
    c->proc.data = c->out.data = c->err.data = c;
    uv_stdio_container_t io[3] = {
        {.flags = UV_IGNORE},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->out},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->err}};
    uv_process_options_t o = {
        .exit_cb = on_exit_cb, .file = r->srv->baton, .args = args, .stdio_count = 3, .stdio = io};
    int rc = uv_spawn(&r->srv->loop, &c->proc, &o);
    c->open = 3;
    if (rc != 0) {
        uv_close((uv_handle_t *)&c->proc, cli_closed);
        uv_close((uv_handle_t *)&c->out, cli_closed);
        uv_close((uv_handle_t *)&c->err, cli_closed);
        return bt_serve_fail(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "cannot run %s: %s",
                             r->srv->baton, uv_strerror(rc));
    }
    c->pending = 3;
    uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&c->err, on_alloc, on_read);
    c->req = r;
    r->cli = c;
    c->next = r->srv->clis;
    if (c->next)
        c->next->pprev = &c->next;
    c->pprev = &r->srv->clis;
    r->srv->clis = c;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    return MHD_YES;
}

enum MHD_Result bt_serve_cli_remove(struct bt_serve_req *r, const char *conv)
{
    return run(r, CLI_RM, conv);
}

enum MHD_Result bt_serve_cli_handoff(struct bt_serve_req *r, const char *conv, int tmux)
{
    return run(r, tmux ? CLI_TMUX : CLI_PRINT, conv);
}

void bt_serve_cli_forget(struct bt_serve_req *r)
{
    if (r->cli)
        r->cli->req = NULL;
    r->cli = NULL;
}

void bt_serve_cli_stop(struct bt_serve *srv)
{
    while (srv->clis) {
        struct bt_serve_cli *c = srv->clis;
        if (c->req)
            bt_serve_fail_later(c->req, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                                "the server is stopping; the command may still finish");
        cli_unlink(c); /* the command goes on; its handles close */
        uv_close((uv_handle_t *)&c->proc, cli_closed);
        uv_close((uv_handle_t *)&c->out, cli_closed);
        uv_close((uv_handle_t *)&c->err, cli_closed);
    }
}
