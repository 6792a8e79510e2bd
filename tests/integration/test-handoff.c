/* SPDX-License-Identifier: MIT */
/*
 * integration tests of `baton handoff` with the fake coder as codex: the
 * printed command line run by a shell, the tmux session (a tmux server of
 * the test's own: TMUX_TMPDIR), the transferred status and `send`'s refusal,
 * and every refusal exiting 2 with nothing changed.
 */
#include <setjmp.h>
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

#include "harness.h"
#include "store.h"

#define THREAD "01a22760-0481-7d43-b595-86e7298639e7" /* text.jsonl's thread */

/* A conversation of one completed turn; its id (caller frees). */
static char *conversation(struct ctx *c)
{
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "hand me off", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    bt_test_result_release(&res);
    /* the coder in the terminal replays nothing: it waits for input */
    setenv_kv(c, "FAKE_CODER_REPLAY=");
    return conv;
}

/* `baton ls` status column of the only conversation. */
static void assert_status(struct ctx *c, const char *status)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    if (!strstr(res.out.data, status))
        fail_msg("ls says '%s', expected %s", res.out.data, status);
    bt_test_result_release(&res);
}

/* Run a shell command with the test's environment; its exit code. */
static int shell(struct ctx *c, const char *cmd, struct bt_test_result *res)
{
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    c->env[c->nenv] = NULL;
    struct bt_test_run r = {
        .argv = argv, .env = (const char *const *)c->env, .cwd = c->dir, .timeout_s = 30};
    assert_int_equal(bt_test_exec(&r, res), 0);
    return res->exit_code;
}

static void tmux_env(struct ctx *c)
{
    char *kv = bt_xasprintf("TMUX_TMPDIR=%s", c->dir);
    setenv_kv(c, kv);
    free(kv);
}

static void kill_tmux(struct ctx *c)
{
    struct bt_test_result res;
    shell(c, "tmux kill-server 2>/dev/null; true", &res);
    bt_test_result_release(&res);
}

/* --print: `cd DIR && CODER resume THREAD`, which a shell runs as the same
 * session; printing changes nothing. */
static void test_print_runs_in_a_shell(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = conversation(c);
    char *argv_file = path_in(c, "argv"), *cwd_file = path_in(c, "cwd");
    baton(c, &res, NULL, 0, "handoff", "--print", conv, END);
    assert_int_equal(res.exit_code, 0);
    char *expect = bt_xasprintf("cd %s && %s resume " THREAD "\n", c->dir, FAKE);
    assert_string_equal(res.out.data, expect);
    char *cmd = bt_xasprintf("FAKE_CODER_ARGV=%s FAKE_CODER_CWD=%s; export FAKE_CODER_ARGV "
                             "FAKE_CODER_CWD; cd / && %s",
                             argv_file, cwd_file, res.out.data);
    bt_test_result_release(&res);
    assert_int_equal(shell(c, cmd, &res), 0);
    bt_test_result_release(&res);
    char *argv_text = bt_test_slurp(argv_file, NULL), *cwd_text = bt_test_slurp(cwd_file, NULL);
    char *want_argv = bt_xasprintf("%s\nresume\n" THREAD "\n", FAKE);
    char *want_cwd = bt_xasprintf("%s\n", c->dir);
    assert_string_equal(argv_text, want_argv);
    assert_string_equal(cwd_text, want_cwd);
    assert_status(c, "completed"); /* not transferred */
    free(want_argv);
    free(want_cwd);
    free(argv_text);
    free(cwd_text);
    free(cmd);
    free(expect);
    free(argv_file);
    free(cwd_file);
    free(conv);
}

/* --tmux: a session baton-<short id> runs the coder with baton's
 * environment in the conversation's directory; the conversation is
 * transferred, send refuses (exit 2, nothing stored) unless --force; while
 * the session runs, every handoff (--tmux, --print, plain) is refused
 * (exit 2) and no other session starts. */
static void test_tmux_and_transferred(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = conversation(c);
    char *argv_file = path_in(c, "argv"), *cwd_file = path_in(c, "cwd");
    char *kv1 = bt_xasprintf("FAKE_CODER_ARGV=%s", argv_file);
    char *kv2 = bt_xasprintf("FAKE_CODER_CWD=%s", cwd_file);
    setenv_kv(c, kv1);
    setenv_kv(c, kv2);
    tmux_env(c);
    baton(c, &res, NULL, 0, "handoff", "--tmux", conv, END);
    assert_int_equal(res.exit_code, 0);
    char *name = bt_xasprintf("baton-%.12s", conv);
    assert_non_null(strstr(res.err.data, name));
    bt_test_result_release(&res);
    char *argv_text = NULL;
    for (int64_t t0 = 0; !argv_text && bt_test_poll(&t0);) /* the pane starts on its own */
        argv_text = bt_test_slurp(argv_file, NULL);
    char *want = bt_xasprintf("%s\nresume\n" THREAD "\n", FAKE);
    assert_non_null(argv_text);
    assert_string_equal(argv_text, want); /* FAKE_CODER_ARGV came from baton's env */
    assert_status(c, "transferred");
    const char *again[][2] = {{"--tmux", conv}, {"--print", conv}, {conv, NULL}};
    for (size_t i = 0; i < BT_ARRAY_SIZE(again); i++) {
        baton(c, &res, NULL, 0, "handoff", again[i][0], again[i][1], END);
        assert_int_equal(res.exit_code, 2);
        char *says = bt_xasprintf("tmux session %s still runs codex", name);
        assert_non_null(strstr(res.err.data, says));
        assert_non_null(strstr(res.err.data, "tmux attach -t"));
        assert_int_equal(res.out.len, 0);
        free(says);
        bt_test_result_release(&res);
    }
    char *list = bt_xasprintf("tmux list-sessions -F '#{session_name}' | grep -c '^%s$'", name);
    assert_int_equal(shell(c, list, &res), 0);
    assert_string_equal(res.out.data, "1\n");
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "send", conv, "not while handed off", END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "handed off"));
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_null(strstr(res.out.data, "not while handed off"));
    assert_non_null(strstr(res.out.data, "\"status\":\"transferred\""));
    bt_test_result_release(&res);
    kill_tmux(c);
    replay(c, "text");
    baton(c, &res, NULL, 0, "send", "--force", conv, "take it back", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_status(c, "completed");
    free(list);
    free(want);
    free(argv_text);
    free(name);
    free(kv1);
    free(kv2);
    free(argv_file);
    free(cwd_file);
    free(conv);
}

/* Refusals exit 2 with one line and leave the conversation as it was: no
 * terminal, a running turn (queued messages: unit-store). */
static void test_refusals(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = conversation(c);
    tmux_env(c);
    baton(c, &res, NULL, 0, "handoff", conv, END); /* stdin and stdout are pipes */
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "--tmux"));
    assert_null(strchr(strchr(res.err.data, '\n') + 1, '\n')); /* one line */
    bt_test_result_release(&res);
    assert_status(c, "completed");

    replay(c, "text");
    /* the turn is held until the refusals are checked: under memcheck a
     * baton command takes over a second, longer than any fixed delay */
    hold_turns(c, 3);
    const char *argv[] = {BATON, "send", "--json", conv, "a long turn", NULL};
    c->env[c->nenv] = NULL;
    char *out = path_in(c, "bg.out");
    pid_t bg = bt_test_spawn_bg(argv, (const char *const *)c->env, out);
    for (int64_t t0 = 0; bt_test_poll(&t0);) { /* until the turn runs */
        baton(c, &res, NULL, 0, "ls", END);
        int running = strstr(res.out.data, "running") != NULL;
        bt_test_result_release(&res);
        if (running)
            break;
    }
    const char *modes[] = {"--tmux", "--print"};
    for (int i = 0; i < 2; i++) {
        baton(c, &res, NULL, 0, "handoff", modes[i], conv, END);
        assert_int_equal(res.exit_code, 2);
        assert_non_null(strstr(res.err.data, "is running"));
        assert_int_equal(res.out.len, 0);
        bt_test_result_release(&res);
    }
    release_turns(c); /* let the turn end */
    int st;
    assert_int_equal(waitpid(bg, &st, 0), bg);
    kill_tmux(c);
    free(out);
    free(conv);
}

/* One rule for --print and --tmux: while a message waits queued, both are
 * refused (exit 2, nothing printed, nothing started, still completed). */
static void test_queued_refused(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *conv = conversation(c);
    tmux_env(c);
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_run_new rn = {.conversation = conv,
                                  .coder = "codex",
                                  .user_text = "waits",
                                  .queue = BT_STORE_QUEUE_ALWAYS};
    struct bt_store_submitted sub;
    assert_int_equal(bt_store_run_submit(s, &rn, &sub), 0);
    assert_true(sub.queued > 0);
    bt_store_submitted_release(&sub);
    bt_store_close(s);
    const char *modes[] = {"--print", "--tmux"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(modes); i++) {
        baton(c, &res, NULL, 0, "handoff", modes[i], conv, END);
        assert_int_equal(res.exit_code, 2);
        assert_non_null(strstr(res.err.data, "queued"));
        assert_int_equal(res.out.len, 0);
        bt_test_result_release(&res);
    }
    struct bt_test_result ls;
    assert_int_equal(shell(c, "tmux list-sessions 2>/dev/null | wc -l", &ls), 0);
    assert_string_equal(ls.out.data, "0\n");
    bt_test_result_release(&ls);
    assert_status(c, "completed");
    kill_tmux(c);
    free(home);
    free(conv);
}

/* rm of a conversation whose tmux session still runs: its records go, the
 * tmux session is left running and rm says so, and the coder's session
 * stays, in use there (also once `send --force` made it active again). */
static void test_rm_leaves_tmux(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *codex_home = path_in(c, "codex"), *day = path_in(c, "codex/sessions");
    char *kv = bt_xasprintf("CODEX_HOME=%s", codex_home);
    setenv_kv(c, kv);
    tmux_env(c);
    assert_int_equal(mkdir(codex_home, 0700), 0);
    assert_int_equal(mkdir(day, 0700), 0);
    char *rollout = bt_xasprintf("%s/rollout-2026-11-29T12-55-33-" THREAD ".jsonl", day);
    for (int forced = 0; forced < 2; forced++) {
        char *conv = conversation(c);
        FILE *f = fopen(rollout, "w");
        assert_non_null(f);
        fclose(f);
        baton(c, &res, NULL, 0, "handoff", "--tmux", conv, END);
        assert_int_equal(res.exit_code, 0);
        bt_test_result_release(&res);
        if (forced) {
            replay(c, "text");
            baton(c, &res, NULL, 0, "send", "--force", conv, "mine again", END);
            assert_int_equal(res.exit_code, 0);
            bt_test_result_release(&res);
            setenv_kv(c, "FAKE_CODER_REPLAY=");
        }
        char *name = bt_xasprintf("baton-%.12s", conv);
        baton(c, &res, NULL, 0, "rm", conv, END);
        assert_int_equal(res.exit_code, 0);
        assert_non_null(strstr(res.out.data, "removed conversation"));
        char *left =
            bt_xasprintf("left tmux session %s running (tmux kill-session -t %s", name, name);
        assert_non_null(strstr(res.out.data, left));
        assert_non_null(strstr(res.out.data, forced ? "still runs codex on it"
                                                    : "handed to codex's own interface"));
        assert_null(strstr(res.out.data, "removed codex session file"));
        bt_test_result_release(&res);
        char *has = bt_xasprintf("tmux has-session -t '=%s'", name);
        assert_int_equal(shell(c, has, &res), 0); /* still there */
        bt_test_result_release(&res);
        struct stat st;
        assert_int_equal(stat(rollout, &st), 0); /* the coder's session stays */
        kill_tmux(c);
        free(has);
        free(left);
        free(name);
        free(conv);
    }
    free(rollout);
    free(kv);
    free(day);
    free(codex_home);
}

/* A pi conversation whose session file is gone is refused (pi would start
 * an empty session on it without a word). */
static void test_session_file_gone(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    char *home = path_in(c, "home"), *file = path_in(c, "gone.jsonl");
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE];
    assert_int_equal(bt_store_open(home, &s, NULL), 0);
    struct bt_store_conversation_new cn = {.coder = "pi", .cwd = c->dir, .title = "pi"};
    assert_int_equal(bt_store_conversation_create(s, &cn, conv), 0);
    assert_int_equal(bt_store_conversation_set_native(s, conv, "sid", file), 0);
    bt_store_close(s);
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    baton(c, &res, NULL, 0, "handoff", "--print", conv, END);
    assert_int_equal(res.exit_code, 2);
    assert_non_null(strstr(res.err.data, "is gone"));
    assert_int_equal(res.out.len, 0);
    bt_test_result_release(&res);
    free(home);
    free(file);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_print_runs_in_a_shell), T(test_tmux_and_transferred), T(test_refusals),
        T(test_session_file_gone),     T(test_queued_refused),       T(test_rm_leaves_tmux),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
