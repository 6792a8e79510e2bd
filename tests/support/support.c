/* SPDX-License-Identifier: MIT */
/* support: helpers for integration and live tests (see support.h). */
#define _GNU_SOURCE /* pipe2, nftw, execvpe */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

/* environ with the "K=V" overrides applied; the array is caller's. */
static char **merged_env(const char *const *extra)
{
    size_t n = 0, m = 0;
    while (environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = bt_xcalloc(n + m + 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t klen = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int replaced = 0;
        for (size_t j = 0; j < m && !replaced; j++)
            replaced = strncmp(extra[j], environ[i], klen) == 0 && extra[j][klen] == '=';
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++)
        env[k++] = (char *)extra[j];
    return env;
}

/* argv with the words of $BATON_TEST_WRAPPER (split on spaces) in front
 * when argv[0] is the baton binary; argv itself otherwise. Called in the
 * child between fork and exec: what it allocates goes with the exec. */
static char *const *wrapped_argv(const char *const *argv)
{
    const char *w = getenv("BATON_TEST_WRAPPER");
    size_t len = strlen(argv[0]);
    if (!w || !*w || len < 6 || strcmp(argv[0] + len - 6, "/baton") != 0)
        return (char *const *)argv;
    size_t n = 0, nw = 0;
    while (argv[n])
        n++;
    char *words = bt_xstrdup(w);
    char **av = bt_xcalloc(strlen(w) / 2 + 1 + n + 1, sizeof(char *));
    for (char *t = strtok(words, " \t"); t; t = strtok(NULL, " \t"))
        av[nw++] = t;
    memcpy(av + nw, argv, n * sizeof(char *));
    return av;
}

/* Exec argv (wrapped as above) with the "K=V" overrides; _exit(127) if it
 * cannot. execvpe: the wrapper's first word may be a bare command name. */
_Noreturn static void exec_with(const char *const *argv, const char *const *extra)
{
    char *const *av = wrapped_argv(argv);
    execvpe(av[0], av, merged_env(extra));
    _exit(127);
}

static void child(const struct bt_test_run *r, int in, int out, int err)
{
    setpgid(0, 0);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (r->cwd && chdir(r->cwd) != 0)
        _exit(126);
    exec_with(r->argv, r->env);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pump stdin/stdout/stderr until both outputs reach EOF. */
static void pump(const struct bt_test_run *r, pid_t pid, int in, int out, int err,
                 struct bt_test_result *res)
{
    size_t in_off = 0, in_len = r->input ? strlen(r->input) : 0;
    int64_t deadline = now_ms() + 1000LL * (r->timeout_s ? r->timeout_s : 120);
    int64_t sigint_at = r->send_sigint_after_ms > 0 ? now_ms() + r->send_sigint_after_ms : 0;
    struct pollfd p[3] = {{out, POLLIN, 0}, {err, POLLIN, 0}, {in, POLLOUT, 0}};
    if (in_len == 0) {
        close(in);
        p[2].fd = -1;
    }
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        int64_t now = now_ms();
        if (sigint_at && now >= sigint_at) {
            kill(pid, r->signal ? r->signal : SIGINT);
            sigint_at = 0;
        }
        if (now >= deadline && !res->timed_out) {
            res->timed_out = 1;
            kill(-pid, SIGKILL);
        }
        if (poll(p, 3, 50) < 0 && errno != EINTR)
            break;
        char buf[65536];
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(p[i].fd, buf, sizeof(buf));
            if (n > 0) {
                bt_buf_add(i == 0 ? &res->out : &res->err, buf, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(p[i].fd);
                p[i].fd = -1;
            }
        }
        if (p[2].fd >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t n = write(in, r->input + in_off, in_len - in_off);
            if (n > 0)
                in_off += (size_t)n;
            if (n < 0 || in_off == in_len) {
                close(in);
                p[2].fd = -1;
            }
        }
    }
    if (p[2].fd >= 0)
        close(in);
}

int bt_test_exec(const struct bt_test_run *r, struct bt_test_result *res)
{
    int in[2], out[2], err[2];
    memset(res, 0, sizeof(*res));
    bt_buf_init(&res->out);
    bt_buf_init(&res->err);
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        child(r, in[0], out[1], err[1]);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    signal(SIGPIPE, SIG_IGN);
    pump(r, pid, in[1], out[0], err[0], res);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    res->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

void bt_test_result_release(struct bt_test_result *res)
{
    bt_buf_release(&res->out);
    bt_buf_release(&res->err);
}

pid_t bt_test_spawn_bg_err(const char *const *argv, const char *const *env, const char *out_path,
                           const char *err_path)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(fd, 1);
    int err = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
    if (err > 2) {
        dup2(err, 2);
        close(err);
    }
    exec_with(argv, env);
}

pid_t bt_test_spawn_bg(const char *const *argv, const char *const *env, const char *out_path)
{
    return bt_test_spawn_bg_err(argv, env, out_path, NULL);
}

size_t bt_test_json_lines(const char *text, cJSON ***lines)
{
    size_t n = 0;
    *lines = NULL;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        *lines = bt_xrealloc(*lines, (n + 1) * sizeof(cJSON *));
        (*lines)[n++] = cJSON_ParseWithLength(p, len);
        p += len + (e ? 1 : 0);
    }
    return n;
}

void bt_test_lines_free(cJSON **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    free(lines);
}

const char *bt_test_scratch_root(const char *build)
{
    static char root[4096];
    const char *cache = getenv("BATON_CACHE");
    if (root[0])
        return root;
    if (!cache || !*cache) {
        snprintf(root, sizeof root, "%s", build);
        return root;
    }
    if (cache[0] != '/' || strlen(cache) + sizeof "/scratch" > sizeof root) {
        fprintf(stderr, "test: BATON_CACHE=%s is not an absolute path\n", cache);
        abort();
    }
    /* the cache may not exist yet: make it and scratch, as mkdir -p */
    snprintf(root, sizeof root, "%s/scratch", cache);
    for (char *p = root + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(root, 0700);
        *p = '/';
    }
    if (mkdir(root, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "test: cannot make %s: %s\n", root, strerror(errno));
        abort();
    }
    return root;
}

char *bt_test_mkdtemp(const char *base, const char *prefix)
{
    char *path = bt_xasprintf("%s/%s-XXXXXX", base, prefix);
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void bt_test_rmdir(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *bt_test_slurp(const char *path, size_t *len)
{
    return bt_read_file(path, len);
}

const char *bt_test_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int bt_test_poll(int64_t *t0)
{
    if (!*t0) {
        *t0 = bt_mono_ms();
        return 1;
    }
    if (bt_mono_ms() - *t0 >= BT_TEST_WAIT_MS)
        return 0;
    usleep(BT_TEST_POLL_MS * 1000);
    return 1;
}

void bt_test_give_up(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fail_msg("%s", msg);
    abort(); /* fail_msg leaves the test by longjmp and does not come back */
}
