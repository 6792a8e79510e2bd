/* SPDX-License-Identifier: MIT */
/*
 * The ACP coders through the baton binary with the scripted ACP agent
 * (tests/fake-coder/fake-acp.c) across turns: a later turn loads the
 * session and the replayed history is not shown, session/resume is
 * preferred when offered, an agent that can do neither fails as
 * resume_failed before anything touches the session, gemini refuses to
 * resume (its session/load damages the stored session), a `null` result
 * to session/load or session/resume is a success, Ctrl-C sends
 * session/cancel and a permission asked after it is answered cancelled,
 * and handoff --print resumes the ACP session id.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "harness.h"

#define FAKE_ACP BT_BINARY_DIR "/tests/fake-coder/fake-acp"

static int acp_setup(void **state)
{
    int rc = setup(state);
    struct ctx *c = *state;
    setenv_kv(c, "BATON_GEMINI_BIN=" FAKE_ACP);
    setenv_kv(c, "BATON_COPILOT_BIN=" FAKE_ACP);
    return rc;
}

static void assert_has(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("expected '%s' in: %s", what, text);
}

/* A first turn of coder; its conversation id (owned). */
static char *first_turn_of(struct ctx *c, const char *coder)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "run", "-c", coder, "--json", "hello", END);
    assert_int_equal(res.exit_code, 0);
    char *conv = conversation_of(res.out.data);
    assert_non_null(conv);
    bt_test_result_release(&res);
    return conv;
}

/* copilot: an agent that loads sessions (gemini refuses to, below). */
static char *first_turn(struct ctx *c)
{
    return first_turn_of(c, "copilot");
}

/* A later turn of conv, `baton send CONV --json again`, with what the agent
 * receives logged (FAKE_ACP_LOG): asserts the exit status; baton's result
 * in *res; returns the agent's log (owned). */
static char *later_turn(struct ctx *c, const char *conv, int want_exit, struct bt_test_result *res)
{
    char *log = path_in(c, "agent.log");
    char *kv = bt_xasprintf("FAKE_ACP_LOG=%s", log);
    setenv_kv(c, kv);
    free(kv);
    baton(c, res, NULL, 0, "send", conv, "--json", "again", END);
    assert_int_equal(res->exit_code, want_exit);
    size_t len;
    char *got = bt_test_slurp(log, &len);
    free(log);
    assert_non_null(got);
    return got;
}

/* A refused later turn: resume_failed, its message holding why, with
 * nothing sent but initialize (no session method that could touch the
 * stored session). */
static void assert_refused(struct ctx *c, const char *conv, const char *why)
{
    struct bt_test_result res;
    char *got = later_turn(c, conv, 1, &res);
    assert_has(res.out.data, "\"error_kind\":\"resume_failed\"");
    assert_has(res.out.data, why);
    assert_has(got, "\"method\":\"initialize\"");
    assert_null(strstr(got, "\"method\":\"session/"));
    free(got);
    bt_test_result_release(&res);
}

static void test_load_drops_replayed_history(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn(c);
    struct bt_test_result res;
    char *got = later_turn(c, conv, 0, &res);
    assert_has(res.out.data, "\"final_text\":\"Hello, world.\"");
    assert_has(res.out.data, "\"type\":\"session.started\"");
    assert_has(res.out.data, "\"resumed\":true");
    assert_null(strstr(res.out.data, "OLD ANSWER FROM HISTORY"));
    assert_has(got, "\"method\":\"session/load\"");
    assert_has(got, "\"sessionId\":\"fake-session-1\"");
    assert_null(strstr(got, "session/new"));
    free(got);
    bt_test_result_release(&res);
    free(conv);
}

static void test_resume_preferred(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn(c);
    setenv_kv(c, "FAKE_ACP_RESUME=1");
    struct bt_test_result res;
    char *got = later_turn(c, conv, 0, &res);
    assert_has(got, "\"method\":\"session/resume\"");
    assert_null(strstr(got, "session/load"));
    free(got);
    bt_test_result_release(&res);
    free(conv);
}

/* JSON-RPC lets a result be null: an agent that answers session/load or
 * session/resume so has the session loaded, and the turn goes on. */
static void test_null_session_result(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn(c);
    setenv_kv(c, "FAKE_ACP_NULL_RESULT=1");
    for (int resume = 0; resume < 2; resume++) {
        if (resume)
            setenv_kv(c, "FAKE_ACP_RESUME=1");
        struct bt_test_result res;
        char *got = later_turn(c, conv, 0, &res);
        assert_has(got, resume ? "\"method\":\"session/resume\"" : "\"method\":\"session/load\"");
        assert_has(res.out.data, "\"resumed\":true");
        assert_has(res.out.data, "\"status\":\"completed\"");
        assert_has(res.out.data, "\"final_text\":\"Hello, world.\"");
        assert_null(strstr(res.out.data, "resume_failed"));
        free(got);
        bt_test_result_release(&res);
    }
    free(conv);
}

static void test_no_resume_capability(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn(c);
    setenv_kv(c, "FAKE_ACP_NO_LOAD=1");
    assert_refused(c, conv, "neither session/resume nor session/load");
    free(conv);
}

/* gemini's session/load resets or later deletes the session it loads
 * (docs/acp.md): a later turn is refused, naming the handoff to gemini's
 * own UI. */
static void test_gemini_refuses_resume(void **state)
{
    struct ctx *c = *state;
    char *conv = first_turn_of(c, "gemini");
    assert_refused(c, conv, "baton handoff");
    free(conv);
}

/* Wait until the file out holds what (60 s at most): the agent's first
 * chunk arrived, so the turn is under way. Never a fixed delay: under
 * memcheck baton takes seconds to get there. */
static void wait_output(struct ctx *c, const char *out, const char *what)
{
    char *path = path_in(c, out);
    for (int i = 0; i < 600; i++) {
        char *text = bt_test_slurp(path, NULL);
        int found = text && strstr(text, what);
        free(text);
        if (found)
            break;
        assert_true(i < 599);
        struct timespec ts = {.tv_nsec = 100000000L};
        nanosleep(&ts, NULL);
    }
    free(path);
}

static void test_ctrl_c_cancels(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    pid_t pid =
        baton_bg(c, "out", "run", "-c", "gemini", "--json", "--approval", "auto", "[cancel]", END);
    wait_output(c, "out", "\"type\":\"item.delta\"");
    assert_int_equal(kill(pid, SIGINT), 0);
    assert_int_equal(wait_exit(pid), 130);
    char *path = path_in(c, "out");
    char *out = bt_test_slurp(path, NULL);
    assert_non_null(out);
    assert_has(out, "\"status\":\"cancelled\"");
    assert_has(out, "\"decision\":\"decline\"");
    char *conv = conversation_of(out);
    free(out);
    free(path);
    /* the agent's stderr: the answer it got after session/cancel */
    baton(c, &res, NULL, 0, "show", conv, "--debug", END);
    assert_has(res.out.data, "permission after cancel: cancelled");
    bt_test_result_release(&res);
    free(conv);
}

/* A first turn of coder, then `baton handoff CONV --print` shows want. */
static void assert_handoff_prints(struct ctx *c, const char *coder, const char *want)
{
    char *conv = first_turn_of(c, coder);
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "handoff", conv, "--print", END);
    assert_int_equal(res.exit_code, 0);
    assert_has(res.out.data, want);
    bt_test_result_release(&res);
    free(conv);
}

static void test_handoff_print(void **state)
{
    struct ctx *c = *state;
    assert_handoff_prints(c, "copilot", "fake-acp --resume=fake-session-1");
    /* gemini's own UI does resume it */
    assert_handoff_prints(c, "gemini", "fake-acp --resume=fake-session-");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load_drops_replayed_history, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_preferred, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_session_result, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_resume_capability, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_gemini_refuses_resume, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_cancels, acp_setup, teardown),
        cmocka_unit_test_setup_teardown(test_handoff_print, acp_setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
