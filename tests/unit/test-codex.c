/* SPDX-License-Identifier: MIT */
/* Unit tests of the codex runner (argv, protocol lines, approvals) and of
 * the codex parser on hand-made lines (routing, unknowns, noise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "parser-codex-error.h"
#include "rig.h"
#include "runner-codex.h"

#define TURN_STARTED_T "{\"method\":\"turn/started\",\"params\":{\"turn\":{\"id\":\"t\"}}}"

/* The n-th (0-based) line of buf parsed as JSON. */
static cJSON *nth_line(const struct bt_buf *b, int n)
{
    const char *p = b->data;
    while (n-- > 0) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    const char *e = strchr(p, '\n');
    assert_non_null(e);
    return cJSON_ParseWithLength(p, (size_t)(e - p));
}

static void test_argv(void **state)
{
    (void)state;
    struct bt_runner_config cfg = {.prompt = "x"};
    struct bt_strv argv;
    bt_strv_init(&argv);
    assert_int_equal(bt_runner_codex.build_argv(&cfg, &argv), 0);
    assert_int_equal(argv.n, 3);
    assert_string_equal(argv.v[0], "app-server");
    assert_string_equal(argv.v[1], "--listen");
    assert_string_equal(argv.v[2], "stdio://");
    bt_strv_release(&argv);
    bt_strv_init(&argv);
    cfg.native_session_id = "--dangerously-bypass";
    assert_int_equal(bt_runner_codex.build_argv(&cfg, &argv), -EINVAL);
    bt_strv_release(&argv);
}

/* turn/steer: only once the turn has an id, with that id as the expected
 * one; its answer says taken (a turnId) or refused (an error), once. */
static void test_steer(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_start(&r);
    struct bt_buf out = BT_BUF_INIT;
    assert_int_equal(bt_runner_codex.steer(r.runner, 7, "more", &out, &r.sink), -EBUSY);
    assert_int_equal(out.len, 0);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{\"userAgent\":\"x\"}}");
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"thread\":{\"id\":\"th-1\"}}}");
    assert_int_equal(bt_runner_codex.steer(r.runner, 7, "more", &out, &r.sink), -EBUSY);
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"turn\":{\"id\":\"tu-1\"}}}");
    assert_int_equal(bt_runner_codex.steer(r.runner, 7, "more", &out, &r.sink),
                     BT_RUNNER_STEER_CONFIRM);
    assert_string_equal(out.data, "{\"id\":100,\"method\":\"turn/steer\",\"params\":{\"threadId\":"
                                  "\"th-1\",\"expectedTurnId\":\"tu-1\",\"input\":[{\"type\":"
                                  "\"text\",\"text\":\"more\"}]}}\n");
    assert_int_equal(r.steer_signals, 0); /* codex has not answered yet */
    bt_test_rig_line(&r, "{\"id\":100,\"result\":{\"turnId\":\"tu-1\"}}");
    assert_int_equal(r.steer_signals, 1);
    assert_int_equal(r.steer_key, 7);
    assert_int_equal(r.steer_taken, 1);
    /* a second steer, refused: the turn was no longer the active one */
    bt_buf_reset(&out);
    assert_int_equal(bt_runner_codex.steer(r.runner, 8, "again", &out, &r.sink), 0);
    assert_non_null(strstr(out.data, "\"id\":101,"));
    bt_test_rig_line(&r, "{\"id\":101,\"error\":{\"code\":-32600,\"message\":\"no active turn\"}}");
    assert_int_equal(r.steer_signals, 2);
    assert_int_equal(r.steer_key, 8);
    assert_int_equal(r.steer_taken, 0);
    /* a repeated answer is a protocol warning, not a second word */
    bt_test_rig_line(&r, "{\"id\":101,\"result\":{\"turnId\":\"tu-1\"}}");
    assert_int_equal(r.steer_signals, 2);
    assert_non_null(strstr(r.events.data, "warning:protocol"));
    /* after the interrupt nothing more goes in */
    struct bt_buf intr = BT_BUF_INIT;
    assert_int_equal(bt_runner_codex.interrupt(r.runner, &intr), 0);
    bt_buf_reset(&out);
    assert_int_equal(bt_runner_codex.steer(r.runner, 9, "late", &out, &r.sink), -EAGAIN);
    assert_int_equal(out.len, 0);
    bt_buf_release(&intr);
    bt_buf_release(&out);
    bt_test_rig_release(&r);
}

static void test_version(void **state)
{
    (void)state;
    char *v = NULL;
    assert_int_equal(bt_runner_codex.parse_version("codex-cli 0.171.0\n", &v), 0);
    assert_string_equal(v, "0.171.0");
    free(v);
    assert_int_equal(bt_runner_codex.parse_version("codex-cli 1.2.3-alpha.4", &v), 0);
    assert_string_equal(v, "1.2.3-alpha.4");
    free(v);
    assert_int_not_equal(bt_runner_codex.parse_version("garbage", &v), 0);
    assert_null(v);
}

static void test_handshake_new_thread(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_start(&r);
    cJSON *init = nth_line(&r.writes, 0);
    assert_string_equal(cJSON_GetObjectItem(init, "method")->valuestring, "initialize");
    assert_int_equal(cJSON_GetObjectItem(init, "id")->valueint, 1);
    assert_null(cJSON_GetObjectItem(init, "jsonrpc"));
    cJSON_Delete(init);
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{\"userAgent\":\"x\"}}");
    cJSON *note = nth_line(&r.writes, 0);
    assert_string_equal(cJSON_GetObjectItem(note, "method")->valuestring, "initialized");
    cJSON_Delete(note);
    cJSON *ts = nth_line(&r.writes, 1);
    assert_string_equal(cJSON_GetObjectItem(ts, "method")->valuestring, "thread/start");
    cJSON *p = cJSON_GetObjectItem(ts, "params");
    assert_string_equal(cJSON_GetObjectItem(p, "approvalPolicy")->valuestring, "untrusted");
    assert_string_equal(cJSON_GetObjectItem(p, "cwd")->valuestring, "/tmp");
    cJSON_Delete(ts);
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"thread\":{\"id\":\"th-1\"}}}");
    assert_string_equal(r.events.data, "session.started|");
    cJSON *turn = nth_line(&r.writes, 0);
    assert_string_equal(cJSON_GetObjectItem(turn, "method")->valuestring, "turn/start");
    cJSON *tp = cJSON_GetObjectItem(turn, "params");
    assert_string_equal(cJSON_GetObjectItem(tp, "threadId")->valuestring, "th-1");
    cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(tp, "input"), 0);
    assert_string_equal(cJSON_GetObjectItem(in, "text")->valuestring, "hi");
    cJSON_Delete(turn);
    /* interrupt needs the turn id */
    struct bt_buf intr = BT_BUF_INIT;
    assert_int_equal(bt_runner_codex.interrupt(r.runner, &intr), -ENOTSUP);
    bt_test_rig_line(
        &r, "{\"id\":3,\"result\":{\"turn\":{\"id\":\"tu-1\",\"status\":\"inProgress\"}}}");
    assert_int_equal(bt_runner_codex.interrupt(r.runner, &intr), 0);
    cJSON *ti = nth_line(&intr, 0);
    assert_string_equal(cJSON_GetObjectItem(ti, "method")->valuestring, "turn/interrupt");
    cJSON_Delete(ti);
    bt_buf_release(&intr);
    bt_test_rig_release(&r);
}

static void test_resume_thread(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, "th-9");
    bt_test_rig_start(&r);
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{}}");
    cJSON *tr = nth_line(&r.writes, 1);
    assert_string_equal(cJSON_GetObjectItem(tr, "method")->valuestring, "thread/resume");
    cJSON *p = cJSON_GetObjectItem(tr, "params");
    assert_string_equal(cJSON_GetObjectItem(p, "threadId")->valuestring, "th-9");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p, "excludeTurns")));
    cJSON_Delete(tr);
    bt_test_rig_line(&r, "{\"id\":2,\"error\":{\"code\":-32600,\"message\":\"no rollout found\"}}");
    assert_int_equal(r.ended, 1);
    assert_int_equal(r.status, BT_TURN_FAILED);
    assert_string_equal(r.error_kind, "resume_failed");
    bt_test_rig_release(&r);
}

/* A server request whose id equals one of ours is a request, not a reply. */
static void test_request_routed_by_method(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, "{\"id\":2,\"method\":\"item/commandExecution/requestApproval\","
                         "\"params\":{\"itemId\":\"c1\",\"command\":\"rm -rf /\"}}");
    assert_string_equal(r.events.data,
                        "approval.requested:command:|approval.resolved:command:decline|");
    cJSON *ans = nth_line(&r.writes, 0);
    assert_int_equal(cJSON_GetObjectItem(ans, "id")->valueint, 2);
    cJSON *res = cJSON_GetObjectItem(ans, "result");
    assert_string_equal(cJSON_GetObjectItem(res, "decision")->valuestring, "decline");
    cJSON_Delete(ans);
    bt_test_rig_release(&r);
}

static void test_auto_accepts_and_legacy_words(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_AUTO, NULL);
    bt_test_rig_line(&r, "{\"id\":\"s-1\",\"method\":\"execCommandApproval\",\"params\":{}}");
    cJSON *ans = nth_line(&r.writes, 0);
    assert_string_equal(cJSON_GetObjectItem(ans, "id")->valuestring, "s-1");
    cJSON *res = cJSON_GetObjectItem(ans, "result");
    assert_string_equal(cJSON_GetObjectItem(res, "decision")->valuestring, "approved");
    cJSON_Delete(ans);
    bt_test_rig_release(&r);
}

/* The "result" of the n-th line baton wrote, as JSON text (caller frees). */
static char *result_of(const struct bt_test_rig *r, int n)
{
    cJSON *ans = nth_line(&r->writes, n);
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(ans, "result"));
    cJSON_Delete(ans);
    return text;
}

/* Once the turn is being stopped, every request is declined in its
 * cancelling form under auto: cancel, the legacy abort, an elicitation's
 * cancel; a question is answered that nobody can answer (a policy never
 * answers one; under --approval ask the engine puts it to a person:
 * unit-ask). */
static void test_after_the_stop_and_questions(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_AUTO, NULL);
    bt_test_rig_line(&r, "{\"id\":1,\"method\":\"item/tool/requestUserInput\",\"params\":"
                         "{\"itemId\":\"q\",\"questions\":[{\"id\":\"a\",\"header\":\"H\","
                         "\"question\":\"Why?\",\"options\":null}]}}");
    char *res = result_of(&r, 0);
    assert_string_equal(res, "{\"answers\":{\"a\":{\"answers\":[\"" BT_RUNNER_NO_ANSWER "\"]}}}");
    free(res);
    r.stopping = 1;
    bt_test_rig_line(&r, "{\"id\":2,\"method\":\"item/commandExecution/requestApproval\","
                         "\"params\":{\"itemId\":\"c1\",\"command\":\"ls\"}}");
    bt_test_rig_line(&r, "{\"id\":3,\"method\":\"execCommandApproval\",\"params\":{}}");
    bt_test_rig_line(&r, "{\"id\":4,\"method\":\"mcpServer/elicitation/request\","
                         "\"params\":{\"serverName\":\"s\",\"message\":\"Name?\"}}");
    res = result_of(&r, 1);
    assert_string_equal(res, "{\"decision\":\"cancel\"}");
    free(res);
    res = result_of(&r, 2);
    assert_string_equal(res, "{\"decision\":\"abort\"}");
    free(res);
    res = result_of(&r, 3);
    assert_string_equal(res, "{\"action\":\"cancel\"}");
    free(res);
    assert_string_equal(r.events.data,
                        "approval.requested:user_input:|approval.resolved:user_input:decline|"
                        "approval.requested:command:|approval.resolved:command:decline|"
                        "approval.requested:command:|approval.resolved:command:decline|"
                        "approval.requested:user_input:|approval.resolved:user_input:decline|");
    r.stopping = 0; /* before the stop, auto accepts */
    bt_test_rig_line(&r, "{\"id\":5,\"method\":\"item/commandExecution/requestApproval\","
                         "\"params\":{\"itemId\":\"c2\",\"command\":\"ls\"}}");
    res = result_of(&r, 4);
    assert_string_equal(res, "{\"decision\":\"accept\"}");
    free(res);
    bt_test_rig_release(&r);
}

static void test_unknown_request_gets_error(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_AUTO, NULL);
    bt_test_rig_line(&r, "{\"id\":5,\"method\":\"future/thing\",\"params\":{}}");
    cJSON *ans = nth_line(&r.writes, 0);
    assert_non_null(cJSON_GetObjectItem(ans, "error"));
    cJSON_Delete(ans);
    assert_string_equal(r.events.data, "warning:unsupported_request|");
    bt_test_rig_release(&r);
}

static void test_unknowns_and_noise(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, "Starting codex banner");
    bt_test_rig_line(&r, "\x1b[2K\x1b[1G{\"method\":\"thread/status/changed\",\"params\":{}}");
    bt_test_rig_line(&r, "{\"method\":\"brand/new\",\"params\":{}}");
    bt_test_rig_line(&r, "{\"method\":\"item/started\",\"params\":{\"item\":{\"type\":\"hologram\","
                         "\"id\":\"h1\"}}}");
    bt_test_rig_line(&r, "{not json");
    assert_string_equal(r.events.data,
                        "warning:noise|warning:unknown_method|"
                        "warning:unknown_item|item.started/other|warning:invalid_json|");
    bt_test_rig_release(&r);
}

/* A response nobody asked for, or a second one, must not drive the
 * handshake (found by fuzz-parser-codex: a repeated thread response leaked). */
static void test_unsolicited_and_repeated_responses(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{}}"); /* before initialize was sent */
    assert_int_equal(r.writes.len, 0);
    bt_test_rig_start(&r);
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{}}");
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"thread\":{\"id\":\"th-1\"}}}");
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"thread\":{\"id\":\"th-2\"}}}");
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{}}");
    assert_int_equal(r.writes.len, 0); /* no second thread/start or turn/start */
    assert_string_equal(r.events.data, "warning:protocol|session.started|warning:protocol|"
                                       "warning:protocol|");
    bt_test_rig_release(&r);
}

/* Only this turn's turn/completed ends it (the id comes from turn/start's
 * response or turn/started). */
static void test_foreign_turn_completed_ignored(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"early\","
                         "\"status\":\"completed\",\"items\":[]}}}");
    bt_test_rig_line(&r, TURN_STARTED_T);
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"other\","
                         "\"status\":\"completed\",\"items\":[]}}}");
    assert_int_equal(r.ended, 0);
    assert_string_equal(r.events.data, "warning:protocol|warning:protocol|");
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"t\","
                         "\"status\":\"completed\",\"items\":[]}}}");
    assert_int_equal(r.ended, 1);
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    bt_test_rig_release(&r);
}

/* Token counts that are not non-negative integers are unknown, and sums
 * saturate instead of overflowing. */
static void test_usage_counts_validated(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, TURN_STARTED_T);
    const char *big = "{\"method\":\"thread/tokenUsage/updated\",\"params\":{\"turnId\":\"t\","
                      "\"tokenUsage\":{\"last\":{\"inputTokens\":9000000000000000000,"
                      "\"outputTokens\":-5,\"cachedInputTokens\":2.5,"
                      "\"reasoningOutputTokens\":1e300,\"totalTokens\":7},"
                      "\"modelContextWindow\":100}}}";
    bt_test_rig_line(&r, big);
    bt_test_rig_line(&r, big);
    assert_string_equal(r.events.data, "usage|usage|");
    assert_int_equal(r.usage.input_tokens, BT_UNKNOWN);        /* beyond 2^53 */
    assert_int_equal(r.usage.output_tokens, BT_UNKNOWN);       /* negative */
    assert_int_equal(r.usage.cached_input_tokens, BT_UNKNOWN); /* fractional */
    assert_int_equal(r.usage.reasoning_tokens, BT_UNKNOWN);
    assert_int_equal(r.usage.context_tokens, 7);
    assert_int_equal(r.usage.context_window, 100);
    bt_test_rig_line(&r, "{\"method\":\"thread/tokenUsage/updated\",\"params\":{\"turnId\":\"t\","
                         "\"tokenUsage\":{\"last\":{\"inputTokens\":9007199254740992}}}}");
    bt_test_rig_line(&r, "{\"method\":\"thread/tokenUsage/updated\",\"params\":{\"turnId\":\"t\","
                         "\"tokenUsage\":{\"last\":{\"inputTokens\":5}}}}");
    assert_int_equal(r.usage.input_tokens, 9007199254740997LL);
    bt_test_rig_release(&r);
}

static void test_unknown_turn_status_is_failure(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, TURN_STARTED_T);
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"t\","
                         "\"status\":\"kindaDone\",\"items\":[]}}}");
    assert_int_equal(r.ended, 1);
    assert_int_equal(r.status, BT_TURN_FAILED);
    assert_string_equal(r.error_kind, "protocol_mismatch");
    bt_test_rig_release(&r);
}

static void test_failed_turn_kind(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, TURN_STARTED_T);
    bt_test_rig_line(&r, "{\"method\":\"error\",\"params\":{\"error\":{\"message\":\"retrying\"},"
                         "\"willRetry\":true,\"threadId\":\"a\",\"turnId\":\"b\"}}");
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"id\":\"t\","
                         "\"status\":\"failed\",\"items\":[],\"error\":{\"message\":\"too long\","
                         "\"codexErrorInfo\":\"contextWindowExceeded\"}}}}");
    assert_string_equal(r.events.data, "warning:retry|");
    assert_int_equal(r.status, BT_TURN_FAILED);
    assert_string_equal(r.error_kind, "context_exceeded");
    bt_test_rig_release(&r);
}

/* A sub-agent's thread on the same connection (its own threadId): its turn
 * is an item of kind subagent, its usage is not the turn's, its
 * turn/started and turn/completed neither set nor end the turn. */
static void test_subagent_thread_kept_apart(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "codex", BT_APPROVAL_DENY, NULL);
    bt_test_rig_start(&r);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{\"userAgent\":\"x\"}}");
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"thread\":{\"id\":\"T\"}}}");
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"turn\":{\"id\":\"t\"}}}");
    bt_buf_reset(&r.events);
    bt_test_rig_line(&r, "{\"method\":\"thread/started\",\"params\":{\"thread\":{\"id\":\"C\","
                         "\"parentThreadId\":\"T\",\"agentNickname\":\"Ada\"}}}");
    bt_test_rig_line(&r, "{\"method\":\"turn/started\",\"params\":{\"threadId\":\"C\","
                         "\"turn\":{\"id\":\"ct\"}}}");
    bt_test_rig_line(&r, "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"C\","
                         "\"turnId\":\"ct\",\"item\":{\"type\":\"agentMessage\",\"id\":\"m\","
                         "\"text\":\"child\"}}}");
    bt_test_rig_line(&r,
                     "{\"method\":\"thread/tokenUsage/updated\",\"params\":{\"threadId\":"
                     "\"C\",\"turnId\":\"ct\",\"tokenUsage\":{\"last\":{\"outputTokens\":5}}}}");
    bt_test_rig_line(&r, "{\"method\":\"error\",\"params\":{\"threadId\":\"C\",\"error\":"
                         "{\"message\":\"child failed\"},\"willRetry\":false}}");
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"C\","
                         "\"turn\":{\"id\":\"ct\",\"status\":\"failed\"}}}");
    assert_int_equal(r.ended, 0);
    assert_string_equal(r.events.data, "item.started/subagent|item.completed/message:"
                                       "completed|warning:coder|item.completed/subagent:failed|");
    /* the parent's own turn still ends it, completed (the child's error is
     * not the turn's) */
    bt_test_rig_line(&r, "{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"T\","
                         "\"turn\":{\"id\":\"t\",\"status\":\"completed\"}}}");
    assert_int_equal(r.ended, 1);
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    bt_test_rig_release(&r);
}

static void test_thread_gone_words(void **state)
{
    (void)state;
    assert_true(bt_codex_thread_gone("no rollout found for thread id 019a"));
    assert_true(bt_codex_thread_gone("Thread not found: 019a"));
    assert_false(bt_codex_thread_gone("stream disconnected before completion"));
    assert_false(bt_codex_thread_gone(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_steer),
        cmocka_unit_test(test_handshake_new_thread),
        cmocka_unit_test(test_resume_thread),
        cmocka_unit_test(test_request_routed_by_method),
        cmocka_unit_test(test_auto_accepts_and_legacy_words),
        cmocka_unit_test(test_after_the_stop_and_questions),
        cmocka_unit_test(test_unknown_request_gets_error),
        cmocka_unit_test(test_unknowns_and_noise),
        cmocka_unit_test(test_unsolicited_and_repeated_responses),
        cmocka_unit_test(test_foreign_turn_completed_ignored),
        cmocka_unit_test(test_usage_counts_validated),
        cmocka_unit_test(test_unknown_turn_status_is_failure),
        cmocka_unit_test(test_failed_turn_kind),
        cmocka_unit_test(test_subagent_thread_kept_apart),
        cmocka_unit_test(test_thread_gone_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
