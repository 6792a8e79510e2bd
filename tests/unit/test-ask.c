/* SPDX-License-Identifier: MIT */
/* Unit tests of each runner's answer op (runners/runner.h): the protocol
 * line written for a request a person decided under --approval ask, and
 * approval.resolved by "user", "timeout" or "cancel". The requests come
 * from each coder's own parser (the rig keeps them as the engine does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rig.h"

/* A rig of coder under ask that keeps requests, fed one line. */
static void held(struct bt_test_rig *r, const char *coder, const char *line)
{
    bt_test_rig_init(r, coder, BT_APPROVAL_ASK, NULL);
    r->hold = 1;
    bt_test_rig_line(r, line);
    assert_non_null(r->held.request_id);
    assert_int_equal(r->writes.len, 0); /* nothing is answered before a person decides */
}

static void decide(struct bt_test_rig *r, int accept, const char *by, const char *answers)
{
    struct bt_runner_decision d = {.accept = accept, .by = by, .answers_json = answers};
    bt_test_rig_answer(r, &d);
}

#define CODEX_COMMAND                                                                              \
    "{\"id\":4,\"method\":\"item/commandExecution/requestApproval\",\"params\":{\"itemId\":"       \
    "\"c1\",\"command\":\"ls\"}}"
#define CODEX_QUESTION                                                                             \
    "{\"id\":5,\"method\":\"item/tool/requestUserInput\",\"params\":{\"itemId\":\"q\","            \
    "\"questions\":[{\"id\":\"a\",\"header\":\"H\",\"question\":\"Which?\",\"options\":"           \
    "[{\"label\":\"Red\"},{\"label\":\"Blue\"}]},{\"id\":\"b\",\"question\":\"Why?\","             \
    "\"options\":null}]}}"

static void test_codex(void **state)
{
    (void)state;
    struct bt_test_rig r;
    held(&r, "codex", CODEX_COMMAND);
    decide(&r, 1, "user", NULL);
    assert_string_equal(r.writes.data, "{\"id\":4,\"result\":{\"decision\":\"accept\"}}\n");
    assert_non_null(strstr(r.events.data, "approval.resolved:command:accept"));
    bt_test_rig_release(&r);

    held(&r, "codex", CODEX_COMMAND);
    decide(&r, 0, "timeout", NULL);
    assert_string_equal(r.writes.data, "{\"id\":4,\"result\":{\"decision\":\"decline\"}}\n");
    bt_test_rig_release(&r);

    held(&r, "codex", CODEX_COMMAND);
    decide(&r, 0, "cancel", NULL);
    assert_string_equal(r.writes.data, "{\"id\":4,\"result\":{\"decision\":\"cancel\"}}\n");
    bt_test_rig_release(&r);

    /* every question by its id: a label chosen, the words typed */
    held(&r, "codex", CODEX_QUESTION);
    decide(&r, 1, "user", "[[\"Blue\"],[\"because\"]]");
    assert_string_equal(r.writes.data, "{\"id\":5,\"result\":{\"answers\":{\"a\":{\"answers\":"
                                       "[\"Blue\"]},\"b\":{\"answers\":[\"because\"]}}}}\n");
    assert_non_null(strstr(r.events.data, "approval.resolved:user_input:accept"));
    bt_test_rig_release(&r);

    /* refused by the person: codex is told so, never an empty answer */
    held(&r, "codex", CODEX_QUESTION);
    decide(&r, 0, "user", NULL);
    assert_string_equal(r.writes.data,
                        "{\"id\":5,\"result\":{\"answers\":{\"a\":{\"answers\":[\"The user "
                        "declined to answer this question.\"]},\"b\":{\"answers\":[\"The user "
                        "declined to answer this question.\"]}}}}\n");
    bt_test_rig_release(&r);
}

#define CLAUDE_BASH                                                                                \
    "{\"type\":\"control_request\",\"request_id\":\"b-1\",\"request\":{\"subtype\":"               \
    "\"can_use_tool\",\"tool_name\":\"Bash\",\"input\":{\"command\":\"touch x\"},"                 \
    "\"tool_use_id\":\"toolu_b\"}}"
#define CLAUDE_ASK                                                                                 \
    "{\"type\":\"control_request\",\"request_id\":\"ask-1\",\"request\":{\"subtype\":"             \
    "\"can_use_tool\",\"tool_name\":\"AskUserQuestion\",\"input\":{\"questions\":[{"               \
    "\"question\":\"Which database?\",\"header\":\"DB\",\"options\":[{\"label\":\"SQLite\"},"      \
    "{\"label\":\"Postgres\"}],\"multiSelect\":false},{\"question\":\"Which features?\","          \
    "\"header\":\"F\",\"options\":[{\"label\":\"Search\"},{\"label\":\"Export\"}],"                \
    "\"multiSelect\":true}]},\"tool_use_id\":\"toolu_ask\"}}"

static void test_claude(void **state)
{
    (void)state;
    struct bt_test_rig r;
    held(&r, "claude", CLAUDE_BASH);
    decide(&r, 1, "user", NULL);
    assert_string_equal(r.writes.data,
                        "{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\","
                        "\"request_id\":\"b-1\",\"response\":{\"behavior\":\"allow\","
                        "\"updatedInput\":{\"command\":\"touch x\"}}}}\n");
    bt_test_rig_release(&r);

    held(&r, "claude", CLAUDE_BASH);
    decide(&r, 0, "timeout", NULL);
    assert_string_equal(r.writes.data,
                        "{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\","
                        "\"request_id\":\"b-1\",\"response\":{\"behavior\":\"deny\",\"message\":"
                        "\"nobody answered in time, so this is declined\"}}}\n");
    bt_test_rig_release(&r);

    /* AskUserQuestion: its input back with the answers by question text */
    held(&r, "claude", CLAUDE_ASK);
    decide(&r, 1, "user", "[[\"Postgres\"],[\"Search\",\"Export\"]]");
    assert_non_null(
        strstr(r.writes.data, "\"behavior\":\"allow\",\"updatedInput\":{\"questions\":"));
    assert_non_null(strstr(r.writes.data, "\"answers\":{\"Which database?\":\"Postgres\","
                                          "\"Which features?\":\"Search, Export\"}}"));
    assert_non_null(strstr(r.events.data, "approval.resolved:user_input:accept"));
    bt_test_rig_release(&r);
}

static void test_pi(void **state)
{
    (void)state;
    struct bt_test_rig r;
    held(&r, "pi",
         "{\"type\":\"extension_ui_request\",\"id\":\"u1\",\"method\":\"select\",\"title\":"
         "\"Pick\",\"options\":[\"A\",\"B\"]}");
    decide(&r, 1, "user", "[[\"B\"]]");
    assert_string_equal(r.writes.data,
                        "{\"type\":\"extension_ui_response\",\"id\":\"u1\",\"value\":\"B\"}\n");
    bt_test_rig_release(&r);

    held(&r, "pi",
         "{\"type\":\"extension_ui_request\",\"id\":\"u2\",\"method\":\"input\",\"title\":"
         "\"Name?\"}");
    decide(&r, 1, "user", "[[\"Ada\"]]");
    assert_string_equal(r.writes.data,
                        "{\"type\":\"extension_ui_response\",\"id\":\"u2\",\"value\":\"Ada\"}\n");
    bt_test_rig_release(&r);

    held(&r, "pi",
         "{\"type\":\"extension_ui_request\",\"id\":\"u3\",\"method\":\"confirm\",\"title\":"
         "\"Go?\"}");
    decide(&r, 1, "user", NULL);
    assert_string_equal(r.writes.data,
                        "{\"type\":\"extension_ui_response\",\"id\":\"u3\",\"confirmed\":true}\n");
    bt_test_rig_release(&r);

    held(&r, "pi",
         "{\"type\":\"extension_ui_request\",\"id\":\"u3\",\"method\":\"confirm\",\"title\":"
         "\"Go?\"}");
    decide(&r, 0, "timeout", NULL);
    assert_string_equal(r.writes.data,
                        "{\"type\":\"extension_ui_response\",\"id\":\"u3\",\"cancelled\":true}\n");
    assert_non_null(strstr(r.events.data, "approval.resolved:other:decline"));
    bt_test_rig_release(&r);
}

#define ACP_PERMISSION                                                                             \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/request_permission\",\"params\":{"         \
    "\"sessionId\":\"s-1\",\"toolCall\":{\"toolCallId\":\"c1\",\"title\":\"rm -rf x\","            \
    "\"kind\":\"execute\"},\"options\":[{\"optionId\":\"a1\",\"name\":\"Always\",\"kind\":"        \
    "\"allow_always\"},{\"optionId\":\"o1\",\"name\":\"Once\",\"kind\":\"allow_once\"},"           \
    "{\"optionId\":\"r1\",\"name\":\"No\",\"kind\":\"reject_once\"}]}}"

static void test_acp(void **state)
{
    (void)state;
    static const struct {
        int accept;
        const char *by, *line;
    } cases[] = {
        {1, "user",
         "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"outcome\":{\"outcome\":\"selected\","
         "\"optionId\":\"o1\"}}}\n"},
        {0, "user",
         "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"outcome\":{\"outcome\":\"selected\","
         "\"optionId\":\"r1\"}}}\n"},
        {0, "cancel",
         "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"outcome\":{\"outcome\":"
         "\"cancelled\"}}}\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bt_test_rig r;
        held(&r, "gemini", ACP_PERMISSION);
        decide(&r, cases[i].accept, cases[i].by, NULL);
        assert_string_equal(r.writes.data, cases[i].line);
        bt_test_rig_release(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codex),
        cmocka_unit_test(test_claude),
        cmocka_unit_test(test_pi),
        cmocka_unit_test(test_acp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
