/* SPDX-License-Identifier: MIT */
/*
 * coder-models: a coder's model list, asked of the installed coder
 * through its machine interface in a short-lived process (coder.h,
 * bt_coder_models; the runner's models_* ops say how).
 */
#include "coder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "framer.h"

extern char **environ;

#define MODELS_LINE_MAX ((size_t)16 << 20) /* one answer: a catalog, not a stream */

/* A listing as it is read. */
struct listing {
    const struct bt_runner_ops *ops;
    struct bt_framer framer;
    struct bt_runner_models *m;
    struct bt_buf *more; /* what to write next, during a feed */
    int rc;              /* 0 reading, 1 complete, or BT_EPROTO */
    char *why;
};

static void on_line(void *data, char *line, size_t len)
{
    struct listing *l = data;
    if (l->rc == 0)
        l->rc = l->ops->models_line(line, len, l->m, l->more, &l->why);
}

static void on_too_long(void *data, size_t dropped)
{
    (void)data;
    (void)dropped; /* not an answer this listing waits for */
}

static const struct bt_framer_ops framer_ops = {.on_line = on_line, .on_too_long = on_too_long};

static int on_stdout(void *data, const char *buf, size_t n, struct bt_buf *more)
{
    struct listing *l = data;
    l->more = more;
    bt_framer_feed(&l->framer, buf, n);
    l->more = NULL;
    return l->rc != 0;
}

#define WORDS_MAX 200 /* bytes of a coder's own words kept in a reason */

/* The first line of a coder's words (n bytes), for one line of baton's:
 * at most WORDS_MAX bytes (cut between characters, "..." then), control
 * characters as '?'. Appended to b. */
static void add_words(struct bt_buf *b, const char *s, size_t n)
{
    size_t len = 0;
    while (len < n && s[len] != '\n' && s[len] != '\r')
        len++;
    int cut = len > WORDS_MAX;
    if (cut) {
        len = WORDS_MAX;
        while (len && ((unsigned char)s[len] & 0xC0) == 0x80)
            len--; /* not inside a character */
    }
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if ((unsigned char)ch < 0x20 || ch == 0x7f)
            ch = '?';
        bt_buf_addc(b, ch);
    }
    if (cut)
        bt_buf_adds(b, "...");
}

/* What happened, for *why (owned): how the coder ended, with the start
 * of what it said on stderr. */
static char *ended_why(const struct bt_coder *c, int rc, int status, const struct bt_buf *err)
{
    struct bt_buf b = BT_BUF_INIT;
    if (rc == -ETIMEDOUT || rc == -EINTR || rc == -ECANCELED || rc == 0)
        bt_buf_addf(&b, "%s %s", c->name,
                    rc == -ETIMEDOUT   ? "did not answer in time"
                    : rc == -EINTR     ? "was stopped by a signal"
                    : rc == -ECANCELED ? "was stopped"
                                       : "ended before it answered");
    else
        bt_buf_addf(&b, "%s could not be started: %s", c->name, bt_strerror(rc));
    if (rc == 0 && status >= 0)
        bt_buf_addf(&b, " (exit status %d)", status);
    if (err->len && err->data[0] != '\n') {
        bt_buf_adds(&b, ": ");
        add_words(&b, err->data, err->len);
    }
    return bt_buf_detach(&b, NULL);
}

int bt_coder_models(const struct bt_coder *c, const char *cwd, const atomic_int *stop,
                    struct bt_runner_models *m, char **why)
{
    const struct bt_runner_ops *ops = c->runner;
    *m = (struct bt_runner_models){0};
    *why = NULL;
    if (!ops->models_argv || !ops->models_start || !ops->models_line) {
        *why = bt_xasprintf("%s cannot list its models", c->name);
        return -ENOTSUP;
    }
    struct bt_coder_exe exe;
    if (bt_coder_resolve(c, &exe) != 0) {
        *why = bt_coder_not_found(c);
        return BT_ENOTINSTALLED;
    }
    struct bt_strv argv, env;
    bt_strv_init(&argv);
    bt_strv_push(&argv, ops->bin_name);
    ops->models_argv(&argv);
    bt_coder_env(&exe, environ, NULL, &env);
    struct bt_buf input = BT_BUF_INIT, err = BT_BUF_INIT;
    ops->models_start(&input);
    struct listing l = {.ops = ops, .m = m};
    bt_framer_init(&l.framer, MODELS_LINE_MAX, &framer_ops, &l);
    struct bt_coder_command cmd = {.path = exe.path,
                                   .argv = argv.v,
                                   .env = env.v,
                                   .cwd = cwd,
                                   .bound_ms = BT_CODER_MODELS_MS,
                                   .out_max = 4096,
                                   .input = input.data ? input.data : "",
                                   .on_stdout = on_stdout,
                                   .data = &l,
                                   .stop = stop};
    int status;
    int rc = bt_coder_run(&cmd, &err, &status);
    if (rc == 0 && l.rc == 1) {
        /* complete: how it ended does not matter */
    } else if (l.rc == BT_EPROTO) {
        rc = BT_EPROTO;
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_addf(&b, "%s could not list its models: ", c->name);
        add_words(&b, l.why, strlen(l.why));
        *why = bt_buf_detach(&b, NULL);
    } else {
        *why = ended_why(c, rc, status, &err);
        rc = rc ? rc : BT_EPROTO;
    }
    if (rc)
        bt_runner_models_release(m);
    free(l.why);
    bt_framer_release(&l.framer);
    bt_buf_release(&input);
    bt_buf_release(&err);
    bt_strv_release(&argv);
    bt_strv_release(&env);
    bt_coder_exe_release(&exe);
    return rc;
}
