/* SPDX-License-Identifier: MIT */
/* coder-exe: finding a coder's executable (through its launcher), its
 * environment and its version on this machine (coder.h). */
#include "coder.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "error.h"
#include "proc.h"

extern char **environ;

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
    if (!found) {
        bt_coder_exe_release(exe); /* empty, as coder.h promises: nothing to free */
        return BT_ENOTINSTALLED;
    }
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

char *bt_coder_names(int installed)
{
    struct bt_buf b = BT_BUF_INIT;
    for (const struct bt_coder *const *c = bt_coders; *c; c++) {
        char *path = installed ? bt_coder_locate(*c) : NULL;
        if (!installed || path)
            bt_buf_addf(&b, "%s%s", b.len ? ", " : "", (*c)->name);
        free(path);
    }
    return bt_buf_detach(&b, NULL);
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

char *bt_coder_not_installed(const struct bt_coder *c)
{
    char *why = bt_coder_not_found(c), *others = bt_coder_names(1);
    /* what the user can take instead (`baton coders` says more) */
    char *out = *others ? bt_xasprintf("%s; installed: %s", why, others)
                        : bt_xasprintf("%s; no coder is installed", why);
    free(why);
    free(others);
    return out;
}

/* One bt_coder_run: what came, and how it ended. */
struct probe {
    const struct bt_coder_command *cmd;
    struct bt_buf out;
    size_t out_max;
    int done;
    int signo;     /* a stop signal that came meanwhile */
    int timedout;  /* stopped at its bound */
    int said;      /* on_stdout had all it wanted */
    int cancelled; /* cmd->stop was set */
    struct bt_proc_result res;
    uv_timer_t timer;
    uv_timer_t watch; /* looks at cmd->stop */
    uv_signal_t signals[3];
    struct bt_proc *proc;
};

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void probe_keep(struct probe *p, const char *buf, size_t n)
{
    if (p->out.len < p->out_max)
        bt_buf_add(&p->out, buf, n < p->out_max - p->out.len ? n : p->out_max - p->out.len);
}

static void probe_out(void *data, const char *buf, size_t n)
{
    probe_keep(data, buf, n);
}

/* What the command says, to cmd->on_stdout; once it has said all that is
 * wanted, its stdin closes (most commands end at EOF) and it is stopped
 * if it has not ended a second later. */
static void probe_stdout(void *data, const char *buf, size_t n)
{
    struct probe *p = data;
    if (p->said)
        return;
    struct bt_buf more = BT_BUF_INIT;
    p->said = p->cmd->on_stdout(p->cmd->data, buf, n, &more);
    if (more.len && bt_proc_write(p->proc, more.data, more.len) != 0)
        p->said = 1; /* it reads no more: nothing more to hear */
    bt_buf_release(&more);
    if (p->said) {
        bt_proc_close_stdin(p->proc);
        bt_proc_stop(p->proc, 1000, 500);
    }
}

static void probe_watch(uv_timer_t *t)
{
    struct probe *p = t->data;
    if (!p->done && !p->cancelled && atomic_load(p->cmd->stop)) {
        p->cancelled = 1;
        bt_proc_stop(p->proc, 0, 200);
    }
}

static void probe_done(void *data, const struct bt_proc_result *r)
{
    struct probe *p = data;
    p->res = *r;
    p->done = 1;
    uv_timer_stop(&p->timer);
    uv_timer_stop(&p->watch);
}

static void probe_timeout(uv_timer_t *t)
{
    struct probe *p = t->data;
    p->timedout = 1;
    bt_proc_stop(p->proc, 0, 500);
}

/* Ctrl-C while the coder runs: the command (its own process group, out of
 * the terminal's reach) goes too, and the caller hears -EINTR. */
static void probe_signal(uv_signal_t *h, int signo)
{
    struct probe *p = h->data;
    p->signo = signo;
    if (!p->done)
        bt_proc_stop(p->proc, 0, 200);
}

/* Start cmd on loop with p's handles. */
static int probe_start(uv_loop_t *loop, const struct bt_coder_command *cmd, struct probe *p)
{
    struct bt_proc_options o = {
        .file = cmd->path,
        .argv = cmd->argv,
        .env = cmd->env ? cmd->env : environ,
        .cwd = cmd->cwd,
        .stdin_pipe = cmd->input != NULL,
        .on_stdout = cmd->on_stdout ? probe_stdout : probe_out,
        .on_stderr = probe_out,
        .on_done = probe_done,
        .data = p,
    };
    /* the signals are watched before the command starts: one that comes
     * while it starts (a slow baton, under memcheck) is heard, not the
     * default action that would end baton */
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++)
        uv_signal_start(&p->signals[i], probe_signal, stop_signals[i]);
    int rc = bt_proc_spawn(loop, &o, &p->proc);
    if (rc == 0 && cmd->input && bt_proc_write(p->proc, cmd->input, strlen(cmd->input)) != 0)
        bt_proc_stop(p->proc, 0, 200); /* gone at once: it hears nothing */
    if (rc == 0) {
        uv_timer_start(&p->timer, probe_timeout, cmd->bound_ms, 0);
        if (cmd->stop)
            uv_timer_start(&p->watch, probe_watch, 0, BT_CODER_STOP_LOOK_MS);
    }
    return rc;
}

int bt_coder_run(const struct bt_coder_command *cmd, struct bt_buf *out, int *status)
{
    uv_loop_t loop;
    struct probe p = {.cmd = cmd, .out = BT_BUF_INIT, .out_max = cmd->out_max};
    *status = -1;
    uv_loop_init(&loop);
    uv_timer_init(&loop, &p.timer);
    uv_timer_init(&loop, &p.watch);
    p.timer.data = p.watch.data = &p;
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++) {
        uv_signal_init(&loop, &p.signals[i]);
        p.signals[i].data = &p;
    }
    int rc = probe_start(&loop, cmd, &p);
    if (rc == 0) {
        while (!p.done)
            uv_run(&loop, UV_RUN_ONCE);
        bt_proc_free(p.proc);
        *status = p.res.term_signal ? 128 + p.res.term_signal : (int)p.res.exit_status;
        rc = p.signo ? -EINTR : p.cancelled ? -ECANCELED : p.said ? 0 : p.timedout ? -ETIMEDOUT : 0;
    }
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++)
        uv_close((uv_handle_t *)&p.signals[i], NULL);
    uv_close((uv_handle_t *)&p.timer, NULL);
    uv_close((uv_handle_t *)&p.watch, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    bt_buf_add(out, p.out.data, p.out.len);
    bt_buf_release(&p.out);
    return rc;
}

int bt_coder_version(const struct bt_coder *c, const char *path, char **version)
{
    char *argv[] = {(char *)path, "--version", NULL};
    struct bt_coder_command cmd = {
        .path = path, .argv = argv, .bound_ms = BT_CODER_PROBE_MS, .out_max = 4096};
    struct bt_buf out = BT_BUF_INIT;
    int status;
    *version = NULL;
    int rc = bt_coder_run(&cmd, &out, &status);
    /* stopped at its bound, the output is what it is: seldom a version */
    if (rc == 0 || rc == -ETIMEDOUT)
        rc = c->runner->parse_version(out.data, version);
    bt_buf_release(&out);
    return rc;
}
