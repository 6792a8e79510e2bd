/* SPDX-License-Identifier: MIT */
/* rm-util: shared by the `baton rm` tests (see rm-util.h). */
#include "rm-util.h"

#include <setjmp.h>
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "store.h"

int file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* mkdir -p */
void make_dirs(const char *path)
{
    char *p = bt_xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0700);
            *s = '/';
        }
    }
    mkdir(p, 0700);
    free(p);
}

/* The coders' directories of this test, whatever the caller's are. */
void rm_coder_env(struct ctx *c)
{
    char *kv[] = {bt_xasprintf("TMUX_TMPDIR=%s", c->dir),
                  bt_xasprintf("CODEX_HOME=%s/codex", c->dir),
                  bt_xasprintf("PI_CODING_AGENT_DIR=%s/pi", c->dir),
                  bt_xstrdup("PI_CODING_AGENT_SESSION_DIR="),
                  bt_xasprintf("HOME=%s", c->dir),
                  bt_xasprintf("CLAUDE_CONFIG_DIR=%s/claude", c->dir),
                  bt_xasprintf("GEMINI_CLI_HOME=%s/gemini", c->dir),
                  bt_xasprintf("COPILOT_HOME=%s/copilot", c->dir)};
    for (size_t i = 0; i < BT_ARRAY_SIZE(kv); i++) {
        setenv_kv(c, kv[i]);
        free(kv[i]);
    }
}

int rm_setup(void **state)
{
    int rc = setup(state);
    if (rc == 0)
        rm_coder_env(*state);
    return rc;
}

/* A conversation of coder with the native session given, made through the
 * store (as a run of the coder would leave it), handed off if transferred. */
void planted_as(struct ctx *c, const char *coder, const char *sid, const char *path,
                int transferred, char id[BT_ID_SIZE])
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_conversation_new cn = {.coder = coder, .cwd = c->dir, .title = "planted"};
    assert_int_equal(bt_store_conversation_create(s, &cn, id), 0);
    assert_int_equal(bt_store_conversation_set_native(s, id, sid, path), 0);
    if (transferred)
        assert_int_equal(bt_store_conversation_set_status(s, id, BT_STORE_CONV_TRANSFERRED), 0);
    bt_store_close(s);
    free(home);
}

void planted(struct ctx *c, const char *coder, const char *sid, const char *path,
             char id[BT_ID_SIZE])
{
    planted_as(c, coder, sid, path, 0, id);
}

/* 1 if conversation id is still in the store. */
int conversation_exists(struct ctx *c, const char *id)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_conversation conv;
    int rc = bt_store_conversation_get(s, id, &conv);
    if (rc == 0)
        bt_store_conversation_release(&conv);
    bt_store_close(s);
    free(home);
    assert_true(rc == 0 || rc == BT_ENOTFOUND);
    return rc == 0;
}

/* `baton rm id` with stdin not a terminal: exit 0, the conversation gone,
 * the output in res (caller releases). */
void rm_ok(struct ctx *c, const char *id, struct bt_test_result *res)
{
    baton(c, res, NULL, 0, "rm", id, END);
    if (res->exit_code != 0)
        fail_msg("rm exited %d: %s", res->exit_code, res->err.data);
    assert_false(conversation_exists(c, id));
    assert_null(strstr(res->err.data, "[y/N]"));
}

void assert_has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("'%s' is not in:\n%s", part, text);
}

/* baton args... with the variables named in unset removed from the
 * environment (env -u). */
void baton_without(struct ctx *c, struct bt_test_result *res, const char *const *unset,
                   const char *const *args)
{
    const char *argv[32] = {"/usr/bin/env"};
    size_t n = 1;
    for (; *unset; unset++) {
        argv[n++] = "-u";
        argv[n++] = *unset;
    }
    argv[n++] = BATON;
    for (; *args; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    c->env[c->nenv] = NULL;
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)c->env, .cwd = c->dir, .timeout_s = 60};
    assert_int_equal(bt_test_exec(&r, res), 0);
}

/* Run baton args... on a new pseudo-terminal (its stdin, stdout and
 * stderr), typing answer once the question "[y/N] " shows (NULL: type
 * nothing). *out gets all the terminal showed (caller frees). Returns the
 * exit code. A baton that never ends is killed after 30 s and fails the
 * test. */
int baton_pty(struct ctx *c, const char *answer, char **out, const char *first, ...)
{
    const char *argv[16] = {BATON, first};
    size_t n = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a = va_arg(ap, const char *); a && n < 15; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < c->nenv; i++)
            putenv(c->env[i]);
        if (chdir(c->dir) == 0)
            execv(BATON, (char *const *)argv);
        _exit(127);
    }
    struct bt_buf b = BT_BUF_INIT;
    int typed = answer == NULL, ended = 0;
    for (int ticks = 0; ticks < 300 && !ended; ticks++) { /* 300 x 100 ms: the hang guard */
        struct pollfd p = {.fd = master, .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue;
        char buf[4096];
        ssize_t k = read(master, buf, sizeof buf);
        if (k <= 0) { /* EIO: every end of the terminal's other side is closed */
            ended = 1;
            continue;
        }
        bt_buf_add(&b, buf, (size_t)k);
        if (!typed && strstr(b.data, "[y/N] ")) {
            assert_int_equal(write(master, answer, strlen(answer)), (ssize_t)strlen(answer));
            typed = 1;
        }
    }
    int st;
    if (ended) {
        assert_int_equal(waitpid(pid, &st, 0), pid);
    } else {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        close(master);
        fail_msg("baton on a terminal did not end; it showed:\n%s", b.data ? b.data : "");
    }
    close(master);
    *out = bt_buf_detach(&b, NULL);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
