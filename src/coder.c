/* SPDX-License-Identifier: MIT */
/* coder: registry of coders, executable lookup and version probe. */
#include "coder.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "parser-claude.h"
#include "parser-codex.h"
#include "parser-pi.h"
#include "runner-pi.h"
#include "runner-claude.h"
#include "runner-codex.h"
#include "error.h"
#include "proc.h"

extern char **environ;

static const struct bt_coder coder_codex = {"codex", &bt_runner_codex, &bt_parser_codex};

static const struct bt_coder coder_pi = {"pi", &bt_runner_pi, &bt_parser_pi};

static const struct bt_coder coder_claude = {"claude", &bt_runner_claude, &bt_parser_claude};

const struct bt_coder *const bt_coders[] = {&coder_codex, &coder_pi, &coder_claude, NULL};

const struct bt_coder *bt_coder_find(const char *name)
{
    for (size_t i = 0; bt_coders[i]; i++)
        if (strcmp(bt_coders[i]->name, name) == 0)
            return bt_coders[i];
    return NULL;
}

/* A regular file baton may run (a directory passes access(X_OK) too). */
static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *bt_coder_locate(const struct bt_coder *c)
{
    const char *over = getenv(c->runner->bin_env);
    if (over && *over) {
        if (strchr(over, '/'))
            return executable(over) ? realpath(over, NULL) : NULL;
    }
    const char *name = over && *over ? over : c->runner->bin_name;
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    char *copy = bt_xstrdup(path);
    char *found = NULL;
    for (char *dir = strtok(copy, ":"); dir && !found; dir = strtok(NULL, ":")) {
        char *cand = bt_xasprintf("%s/%s", *dir ? dir : ".", name);
        if (executable(cand))
            found = realpath(cand, NULL);
        free(cand);
    }
    free(copy);
    return found;
}

int bt_coder_resolve(const struct bt_coder *c, struct bt_coder_exe *exe)
{
    *exe = (struct bt_coder_exe){0};
    bt_strv_init(&exe->env);
    char *found = bt_coder_locate(c);
    if (!found)
        return BT_ENOTINSTALLED;
    char *native = NULL;
    if (c->runner->resolve_launcher &&
        c->runner->resolve_launcher(found, &native, &exe->env) == 0) {
        exe->path = native;
        exe->launcher = found;
    } else {
        bt_strv_release(&exe->env);
        bt_strv_init(&exe->env);
        exe->path = found;
    }
    return 0;
}

void bt_coder_exe_release(struct bt_coder_exe *exe)
{
    free(exe->path);
    free(exe->launcher);
    bt_strv_release(&exe->env);
    *exe = (struct bt_coder_exe){0};
}

/* Length of the name of "NAME=VALUE" or "NAME". */
static size_t name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

static int same_name(const char *a, const char *b)
{
    size_t n = name_len(a);
    return b && name_len(b) == n && strncmp(a, b, n) == 0;
}

/* 1 if one of the n entries of list names the variable of kv. */
static int named_in(const char *kv, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (same_name(kv, list[i]))
            return 1;
    return 0;
}

void bt_coder_env(const struct bt_coder_exe *exe, char *const *env, const char *extra,
                  struct bt_strv *out)
{
    char *const *ch = exe->env.v;
    size_t n = exe->env.n;
    bt_strv_init(out);
    for (char *const *e = env; e && *e; e++)
        if (!named_in(*e, ch, n) && !same_name(*e, extra))
            bt_strv_push(out, *e);
    for (size_t i = 0; i < n; i++) /* the last change of a name wins */
        if (strchr(ch[i], '=') && !named_in(ch[i], ch + i + 1, n - i - 1) &&
            !same_name(ch[i], extra))
            bt_strv_push(out, ch[i]);
    if (extra)
        bt_strv_push(out, extra);
}

char *bt_coder_not_found(const struct bt_coder *c)
{
    const char *var = c->runner->bin_env, *over = getenv(var);
    if (over && *over && strchr(over, '/'))
        return bt_xasprintf("%s=%s is not an executable file (unset it to find '%s' on PATH)", var,
                            over, c->runner->bin_name);
    if (over && *over)
        return bt_xasprintf("%s=%s: no executable '%s' on PATH", var, over, over);
    return bt_xasprintf("%s is not installed: put '%s' on PATH or set %s", c->name,
                        c->runner->bin_name, var);
}

struct probe {
    struct bt_buf out;
    int done;
    int signo; /* a stop signal that came meanwhile */
    struct bt_proc_result res;
    uv_timer_t timer;
    uv_signal_t signals[3];
    struct bt_proc *proc;
};

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void probe_out(void *data, const char *buf, size_t n)
{
    struct probe *p = data;
    if (p->out.len < 4096)
        bt_buf_add(&p->out, buf, n);
}

static void probe_done(void *data, const struct bt_proc_result *r)
{
    struct probe *p = data;
    p->res = *r;
    p->done = 1;
    uv_timer_stop(&p->timer);
}

static void probe_timeout(uv_timer_t *t)
{
    struct probe *p = t->data;
    bt_proc_stop(p->proc, 0, 500);
}

/* Ctrl-C while the coder is asked: the probe (its own process group, out
 * of the terminal's reach) goes too, and the caller hears -EINTR. */
static void probe_signal(uv_signal_t *h, int signo)
{
    struct probe *p = h->data;
    p->signo = signo;
    if (!p->done)
        bt_proc_stop(p->proc, 0, 200);
}

int bt_coder_version(const struct bt_coder *c, const char *path, char **version)
{
    uv_loop_t loop;
    struct probe p = {.out = BT_BUF_INIT};
    char *argv[] = {(char *)path, "--version", NULL};
    struct bt_proc_options o = {
        .file = path,
        .argv = argv,
        .env = environ,
        .on_stdout = probe_out,
        .on_stderr = probe_out,
        .on_done = probe_done,
        .data = &p,
    };
    *version = NULL;
    uv_loop_init(&loop);
    uv_timer_init(&loop, &p.timer);
    p.timer.data = &p;
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++) {
        uv_signal_init(&loop, &p.signals[i]);
        p.signals[i].data = &p;
    }
    int rc = bt_proc_spawn(&loop, &o, &p.proc);
    if (rc == 0) {
        for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++)
            uv_signal_start(&p.signals[i], probe_signal, stop_signals[i]);
        uv_timer_start(&p.timer, probe_timeout, BT_CODER_PROBE_MS, 0);
        while (!p.done)
            uv_run(&loop, UV_RUN_ONCE);
        bt_proc_free(p.proc);
        rc = p.signo ? -EINTR : c->runner->parse_version(p.out.data, version);
    }
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++)
        uv_close((uv_handle_t *)&p.signals[i], NULL);
    uv_close((uv_handle_t *)&p.timer, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    bt_buf_release(&p.out);
    return rc;
}
