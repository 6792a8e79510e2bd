/* SPDX-License-Identifier: MIT */
/*
 * integration tests of the idle watchdog: the real baton binary against the
 * fake coder replaying codex and pi that retry an unreachable endpoint
 * forever (fixtures/<coder>/<version>/unreachable.jsonl with the fake's
 * FAKE_CODER_REPEAT). Retries, noise and status lines are not progress, so
 * such a turn ends failed with the coder's own reason once --idle-timeout
 * passes; without that the fake would retry until the harness's 60 s limit.
 * Deltas are progress and keep a turn alive past the idle timeout. And the
 * durations in the messages read right at every scale.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "support.h"

#define PI_FIXTURES BT_SOURCE_DIR "/fixtures/pi/0.73.1"

/* fixtures/codex/0.171.0/unreachable.jsonl: line 23 is the last of codex's
 * "Reconnecting... waiting for network" notices before baton interrupted
 * the turn (line 24 answers that turn/interrupt). */
#define CODEX_RETRY_LINE "23"
/* fixtures/pi/0.73.1/unreachable.jsonl: lines 12-18 are one failed attempt,
 * agent_start to the auto_retry_start of the next. */
#define PI_RETRY_BLOCK "12-18"

/* The last event of a --json stream (turn.completed), parsed; the stream
 * must end with exactly one. Caller frees with cJSON_Delete. */
static cJSON *last_event(const char *out)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    assert_true(n >= 2);
    int completed = 0;
    for (size_t i = 0; i < n; i++)
        completed += strcmp(bt_test_jstr(lines[i], "type"), "turn.completed") == 0;
    assert_int_equal(completed, 1);
    cJSON *end = cJSON_Duplicate(lines[n - 1], 1);
    bt_test_lines_free(lines, n);
    assert_string_equal(bt_test_jstr(end, "type"), "turn.completed");
    return end;
}

static int count_of(const char *out, const char *type)
{
    cJSON **lines;
    size_t n = bt_test_json_lines(out, &lines);
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += strcmp(bt_test_jstr(lines[i], "type"), type) == 0;
    bt_test_lines_free(lines, n);
    return k;
}

/* The stored answer of conv's first turn, by `baton show --json`: its
 * state, error kind and error text must be these. */
static void assert_stored(struct ctx *c, const char *conv, const char *kind, const char *text)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "show", "--json", conv, END);
    assert_int_equal(res.exit_code, 0);
    cJSON *doc = cJSON_Parse(res.out.data);
    const cJSON *answer = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "messages"), 1);
    assert_non_null(answer);
    assert_string_equal(bt_test_jstr(answer, "state"), "failed");
    assert_string_equal(bt_test_jstr(answer, "error_kind"), kind);
    assert_non_null(strstr(bt_test_jstr(answer, "error"), text));
    cJSON_Delete(doc);
    bt_test_result_release(&res);
}

/* A failed turn: exit 1, kind, and the message holding every needle. */
static void assert_failed(struct ctx *c, const struct bt_test_result *res, const char *kind,
                          const char *const *needles)
{
    assert_int_equal(res->exit_code, 1);
    cJSON *end = last_event(res->out.data);
    assert_string_equal(bt_test_jstr(end, "status"), "failed");
    assert_string_equal(bt_test_jstr(end, "error_kind"), kind);
    const char *msg = bt_test_jstr(end, "error");
    assert_non_null(msg);
    for (const char *const *n = needles; *n; n++)
        if (!strstr(msg, *n))
            fail_msg("error %s lacks \"%s\"", msg, *n);
    char *conv = conversation_of(res->out.data);
    assert_stored(c, conv, kind, needles[0]);
    free(conv);
    cJSON_Delete(end);
}

/* codex retrying forever (a notice every 100 ms, ten times faster than the
 * idle timeout) ends failed with its reason as a network error. */
static void test_codex_retry_loop_ends(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "unreachable");
    setenv_kv(c, "FAKE_CODER_REPEAT=" CODEX_RETRY_LINE);
    baton(c, &res, NULL, 0, "run", "--json", "--idle-timeout", "1", "Say hello banana", END);
    static const char *const needles[] = {"Reconnecting... waiting for network",
                                          "Connection failed",
                                          "codex was retrying with no progress for 1 s", NULL};
    assert_failed(c, &res, "network_error", needles);
    assert_true(count_of(res.out.data, "warning") > 14); /* it did loop */
    bt_test_result_release(&res);
}

static void use_pi(struct ctx *c, const char *fixture)
{
    char *kv = bt_xasprintf("FAKE_CODER_REPLAY=%s/%s.jsonl", PI_FIXTURES, fixture);
    setenv_kv(c, kv);
    free(kv);
    setenv_kv(c, "BATON_PI_BIN=" FAKE);
    setenv_kv(c, "FAKE_CODER_VERSION=0.73.1");
}

/* pi retrying attempt after attempt (each a few lines, one zero usage
 * among them) ends the same way, with pi's reason. */
static void test_pi_retry_loop_ends(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    use_pi(c, "unreachable");
    setenv_kv(c, "FAKE_CODER_REPEAT=" PI_RETRY_BLOCK);
    setenv_kv(c, "FAKE_CODER_DELAY_MS=20");
    baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "--idle-timeout", "1", "Say hello banana",
          END);
    static const char *const needles[] = {"Connection error.",
                                          "pi was retrying with no progress for 1 s", NULL};
    assert_failed(c, &res, "network_error", needles);
    assert_true(count_of(res.out.data, "warning") > 3); /* more attempts than recorded */
    bt_test_result_release(&res);
}

/* pi giving up by itself after its attempts: the kind is still a network
 * error, not a model error. */
static void test_pi_gives_up_network_error(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    use_pi(c, "unreachable");
    baton(c, &res, NULL, 0, "run", "-c", "pi", "--json", "Say hello banana", END);
    static const char *const needles[] = {"Connection error.", NULL};
    assert_failed(c, &res, "network_error", needles);
    bt_test_result_release(&res);
}

/* A status notification over and over (line 19 of text.jsonl:
 * thread/status/changed, after turn/start) is not progress either. */
static void test_status_lines_are_not_progress(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_REPEAT=19");
    baton(c, &res, NULL, 0, "run", "--json", "--idle-timeout", "1", "Say hello banana", END);
    static const char *const needles[] = {"codex made no progress for 1 s and was stopped", NULL};
    assert_failed(c, &res, "stalled", needles);
    bt_test_result_release(&res);
}

/* Deltas are progress: 30 of them 100 ms apart (3 s) outlast a 1 s idle
 * timeout and the turn completes. */
static void test_deltas_keep_the_turn_alive(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_REPEAT=11x30"); /* the first item/agentMessage/delta */
    baton(c, &res, NULL, 0, "run", "--json", "--idle-timeout", "1", "Say hello banana", END);
    assert_int_equal(res.exit_code, 0);
    cJSON *end = last_event(res.out.data);
    assert_string_equal(bt_test_jstr(end, "status"), "completed");
    assert_true(count_of(res.out.data, "item.delta") >= 35);
    cJSON_Delete(end);
    bt_test_result_release(&res);
}

/* --idle-timeout 0.001 and --timeout 0.25 are said as 1 ms and 0.25 s. */
static void test_durations_read_right(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "text");
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=0");
    baton(c, &res, NULL, 0, "run", "--json", "--idle-timeout", "0.001", "x", END);
    static const char *const idle[] = {"codex made no progress for 1 ms and was stopped", NULL};
    assert_failed(c, &res, "stalled", idle);
    bt_test_result_release(&res);
    baton(c, &res, NULL, 0, "run", "--json", "--timeout", "0.25", "x", END);
    static const char *const total[] = {"the turn took longer than 0.25 s and was stopped", NULL};
    assert_failed(c, &res, "timeout", total);
    bt_test_result_release(&res);
}

/* --timeout during a retry loop: the timeout, with the coder's reason. */
static void test_timeout_tells_the_retry(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    replay(c, "unreachable");
    setenv_kv(c, "FAKE_CODER_REPEAT=" CODEX_RETRY_LINE);
    baton(c, &res, NULL, 0, "run", "--json", "--timeout", "1", "Say hello banana", END);
    static const char *const needles[] = {"the turn took longer than 1 s and was stopped",
                                          "codex was retrying: Reconnecting... waiting for network",
                                          NULL};
    assert_failed(c, &res, "timeout", needles);
    bt_test_result_release(&res);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_codex_retry_loop_ends),      T(test_pi_retry_loop_ends),
        T(test_pi_gives_up_network_error),  T(test_status_lines_are_not_progress),
        T(test_deltas_keep_the_turn_alive), T(test_durations_read_right),
        T(test_timeout_tells_the_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
