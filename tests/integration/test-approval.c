/* SPDX-License-Identifier: MIT */
/*
 * integration tests of the requests a coder sends after baton began
 * stopping the turn (docs/events.md, "After the stop"), through the baton
 * binary and tests/fake-coder as codex: Ctrl-C on `baton run` and `baton
 * cancel` from another process (the store's cancel request, as a stopping
 * API call of `baton serve` makes it) both stop the turn with
 * turn/interrupt; the command approval codex asks after that is answered
 * decision "cancel" under --approval auto, and approval.resolved says
 * by "cancel". (The --timeout and idle watchdog stops, and claude, pi and
 * ACP, are corpus cases: tests/corpus/cases/approval-*.case.)
 *
 * The replay is fixtures/codex/0.171.0/interrupt.jsonl with the request
 * after the answer to turn/interrupt: the fake coder writes the answer
 * only once baton sent the interrupt, so the request comes after the stop
 * whatever the timing. The tests wait for the store to show the turn
 * running, never for a time.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "store.h"

/* What codex asks after the interrupt, and what baton must answer. */
#define LATE_REQUEST                                                                               \
    "{\"id\":0,\"method\":\"item/commandExecution/requestApproval\",\"params\":{\"threadId\":"     \
    "\"01a22760-3e66-7010-9409-0da68a302a36\",\"turnId\":\"01a22760-3ea4-7e81-a1fe-"               \
    "a0b8ae18c78e\",\"itemId\":\"call_late\",\"command\":\"touch "                                 \
    "after-stop\",\"cwd\":\"/tmp\"}}\n"
#define CANCEL_ANSWER "{\"id\":0,\"result\":{\"decision\":\"cancel\"}}\n"
#define RESOLVED_BY_CANCEL "\"item_id\":\"call_late\",\"decision\":\"decline\",\"by\":\"cancel\""

/* The replay: interrupt.jsonl with LATE_REQUEST after its line 14 (the
 * answer to turn/interrupt), and FAKE_CODER_LOG_STDIN to see the answer. */
static void late_request_replay(struct ctx *c)
{
    FILE *in = fopen(FIXTURES "/interrupt.jsonl", "r");
    char *path = path_in(c, "late.jsonl");
    FILE *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[8192];
    for (int n = 1; fgets(line, sizeof(line), in); n++) {
        fputs(line, out);
        if (n == 14)
            fputs(LATE_REQUEST, out);
    }
    fclose(in);
    fclose(out);
    replay_logged(c, path);
    free(path);
}

static int count_deltas(void *data, const struct bt_store_event *ev)
{
    *(int *)data += strcmp(ev->type, "item.delta") == 0;
    return 0;
}

/* Wait until the only conversation's run is running, its process group
 * recorded and both deltas stored (the turn id is known by then); its
 * conversation id (caller frees). */
static char *wait_running(struct ctx *c)
{
    char *home = path_in(c, "home");
    struct bt_store *s = NULL;
    char *conv = NULL;
    for (int64_t t0 = 0; !conv && bt_test_poll(&t0);) {
        if (!s && bt_store_open(home, &s, NULL) != 0)
            continue;
        struct bt_store_conversation *v = NULL;
        size_t n = 0;
        if (bt_store_conversation_list(s, 0, &v, &n) != 0 || n != 1) {
            bt_store_conversation_list_free(v, n);
            continue;
        }
        struct bt_store_run r;
        if (bt_store_run_last(s, v[0].id, &r) == 0) {
            int deltas = 0;
            assert_int_equal(bt_store_event_each(s, r.id, 1, count_deltas, &deltas), 0);
            if (r.state == BT_STORE_RUN_RUNNING && r.pgid > 0 && deltas >= 2)
                conv = bt_xstrdup(v[0].id);
            bt_store_run_release(&r);
        }
        bt_store_conversation_list_free(v, n);
    }
    if (s)
        bt_store_close(s);
    free(home);
    assert_non_null(conv);
    return conv;
}

/* What baton wrote to the coder holds the cancelling answer. */
static void assert_cancel_answer(struct ctx *c)
{
    char *log = path_in(c, "stdin.log");
    char *text = bt_test_slurp(log, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"method\":\"turn/interrupt\""));
    assert_non_null(strstr(text, CANCEL_ANSWER));
    assert_true(strstr(text, "turn/interrupt") < strstr(text, CANCEL_ANSWER));
    free(text);
    free(log);
}

/* Ctrl-C on `baton run --approval auto`: the request codex sends after
 * the interrupt is cancelled, not accepted; the turn ends cancelled. */
static void test_after_ctrl_c(void **state)
{
    struct ctx *c = *state;
    late_request_replay(c);
    pid_t pid = baton_bg(c, "out", "run", "--json", "--approval", "auto", "[[slow]]", END);
    char *conv = wait_running(c);
    assert_int_equal(kill(pid, SIGINT), 0);
    assert_int_equal(wait_exit(pid), 130);
    char *path = path_in(c, "out");
    char *out = bt_test_slurp(path, NULL);
    assert_non_null(out);
    assert_non_null(strstr(out, RESOLVED_BY_CANCEL));
    assert_null(strstr(out, "\"decision\":\"accept\""));
    assert_non_null(strstr(out, "\"status\":\"cancelled\""));
    assert_cancel_answer(c);
    free(out);
    free(path);
    free(conv);
}

/* `baton cancel CONV` from another process: the same. */
static void test_after_baton_cancel(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    late_request_replay(c);
    pid_t pid = baton_bg(c, "out", "run", "--json", "--approval", "auto", "[[slow]]", END);
    char *conv = wait_running(c);
    baton(c, &res, NULL, 0, "cancel", conv, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    assert_int_equal(wait_exit(pid), 130);
    char *path = path_in(c, "out");
    char *out = bt_test_slurp(path, NULL);
    assert_non_null(out);
    assert_non_null(strstr(out, RESOLVED_BY_CANCEL));
    assert_non_null(strstr(out, "\"status\":\"cancelled\""));
    assert_cancel_answer(c);
    free(out);
    free(path);
    free(conv);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_after_ctrl_c),
        T(test_after_baton_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
