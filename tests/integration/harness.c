/* SPDX-License-Identifier: MIT */
/* harness: shared by the integration tests (see harness.h). */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

int setup(void **state)
{
    struct ctx *c = bt_xcalloc(1, sizeof(*c));
    c->dir = bt_test_mkdtemp(bt_test_scratch_root(BT_BINARY_DIR), "it");
    assert_non_null(c->dir);
    c->env[c->nenv++] = bt_xasprintf("BATON_HOME=%s/home", c->dir);
    c->env[c->nenv++] = bt_xstrdup("BATON_CODEX_BIN=" FAKE); /* env[1]: tests replace it */
    c->env[c->nenv++] = bt_xstrdup("NO_COLOR=1");
    /* the build tree is in baton's own repository (and BATON_CACHE may be
     * in a repository of the user's home): a turn's changes are looked for
     * in the test's, not there (src/repo.h) */
    c->env[c->nenv++] =
        bt_xasprintf("GIT_CEILING_DIRECTORIES=%s", bt_test_scratch_root(BT_BINARY_DIR));
    *state = c;
    return 0;
}

int teardown(void **state)
{
    struct ctx *c = *state;
    bt_test_rmdir(c->dir);
    free(c->dir);
    for (int i = 0; i < c->nenv; i++)
        free(c->env[i]);
    free(c);
    return 0;
}

void setenv_kv(struct ctx *c, const char *kv)
{
    size_t key = strcspn(kv, "=") + 1;
    for (int i = 0; i < c->nenv; i++) {
        if (strncmp(c->env[i], kv, key) == 0) { /* a later value replaces */
            free(c->env[i]);
            c->env[i] = bt_xstrdup(kv);
            return;
        }
    }
    assert_true(c->nenv < (int)(sizeof c->env / sizeof c->env[0]) - 1);
    c->env[c->nenv++] = bt_xstrdup(kv);
}

void replay(struct ctx *c, const char *fixture)
{
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s/%s.jsonl", FIXTURES, fixture);
    setenv_kv(c, kv);
    free(kv);
}

void replay_logged(struct ctx *c, const char *path)
{
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s", path);
    setenv_kv(c, kv);
    free(kv);
    char *log = path_in(c, "stdin.log");
    kv = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", log);
    setenv_kv(c, kv);
    free(kv);
    free(log);
}

void hold_turns(struct ctx *c, int after)
{
    char *go = path_in(c, "go");
    char *kv = bt_xasprintf("FAKE_CODER_PAUSE_FILE=%s", go);
    setenv_kv(c, kv);
    free(kv);
    kv = bt_xasprintf("FAKE_CODER_PAUSE_AFTER=%d", after);
    setenv_kv(c, kv);
    free(kv);
    free(go);
}

void release_turns(struct ctx *c)
{
    char *go = path_in(c, "go");
    FILE *f = fopen(go, "w");
    assert_non_null(f);
    fclose(f);
    free(go);
}

char *path_in(struct ctx *c, const char *name)
{
    return bt_xasprintf("%s/%s", c->dir, name);
}

void baton(struct ctx *c, struct bt_test_result *res, const char *input, int sigint_ms,
           const char *first, ...)
{
    const char *argv[24] = {BATON, first};
    size_t n = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *arg = va_arg(ap, const char *); arg && n < 23; arg = va_arg(ap, const char *))
        argv[n++] = arg;
    va_end(ap);
    argv[n] = NULL;
    c->env[c->nenv] = NULL;
    struct bt_test_run r = {.argv = argv,
                            .env = (const char *const *)c->env,
                            .cwd = c->dir,
                            .input = input,
                            .timeout_s = 60,
                            .send_sigint_after_ms = sigint_ms};
    assert_int_equal(bt_test_exec(&r, res), 0);
    assert_false(res->timed_out);
}

void run_in(struct ctx *c, const char *const *argv, struct bt_test_result *res)
{
    c->env[c->nenv] = NULL;
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)c->env, .cwd = c->dir, .timeout_s = 60};
    assert_int_equal(bt_test_exec(&r, res), 0);
    assert_false(res->timed_out);
}

pid_t baton_bg_err(struct ctx *c, const char *out, const char *err, const char *first, ...)
{
    const char *argv[16] = {BATON, first};
    size_t n = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *arg = va_arg(ap, const char *); arg && n < 15; arg = va_arg(ap, const char *))
        argv[n++] = arg;
    va_end(ap);
    argv[n] = NULL;
    c->env[c->nenv] = NULL;
    char *path = path_in(c, out), *err_path = err ? path_in(c, err) : NULL;
    pid_t pid = bt_test_spawn_bg_err(argv, (const char *const *)c->env, path, err_path);
    free(path);
    free(err_path);
    assert_true(pid > 0);
    return pid;
}

int wait_exit(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *conversation_of(const char *out)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    assert_true(n > 0);
    char *id = bt_xstrdup(bt_test_jstr(lines[0], "conversation"));
    bt_test_lines_free(lines, n);
    return id;
}
