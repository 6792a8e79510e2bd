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

/* An elicitation form (codex mcpServer/elicitation/request, ACP
 * elicitation/create: MCP's requestedSchema) put as one question per
 * field; the schema kept with the request, not in the questions. */
#define FORM_SCHEMA                                                                                \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"title\":\"Name\"},"      \
    "\"age\":{\"type\":\"integer\",\"description\":\"How old?\",\"minimum\":0},"                   \
    "\"ratio\":{\"type\":\"number\"},\"ok\":{\"type\":\"boolean\"},"                               \
    "\"size\":{\"type\":\"string\",\"oneOf\":[{\"const\":\"s\",\"title\":\"Small\"},"              \
    "{\"const\":\"l\",\"title\":\"Large\"}]},"                                                     \
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]}}},"       \
    "\"required\":[\"name\",\"age\"]}"
#define CODEX_FORM                                                                                 \
    "{\"id\":9,\"method\":\"mcpServer/elicitation/request\",\"params\":{\"threadId\":\"t\","       \
    "\"serverName\":\"srv\",\"mode\":\"form\",\"message\":\"Tell "                                 \
    "me\",\"requestedSchema\":" FORM_SCHEMA "}}"
#define ACP_FORM                                                                                   \
    "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"elicitation/create\",\"params\":{\"sessionId\":"  \
    "\"s-1\",\"mode\":\"form\",\"message\":\"Tell me\",\"requestedSchema\":" FORM_SCHEMA "}}"
#define FORM_ANSWERS "[[\"Ada\"],[\"36\"],[\"0.5\"],[\"yes\"],[\"Large\"],[\"x\",\"y\"]]"
#define FORM_CONTENT                                                                               \
    "\"content\":{\"name\":\"Ada\",\"age\":36,\"ratio\":0.5,\"ok\":true,\"size\":\"l\","           \
    "\"tags\":[\"x\",\"y\"]}"

/* The runner's answer_problem for the held request: why (owned) or NULL. */
static char *problem(const struct bt_test_rig *r, const char *answers)
{
    assert_non_null(r->coder->runner->answer_problem);
    return r->coder->runner->answer_problem(&r->held, answers);
}

static void assert_problem(const struct bt_test_rig *r, const char *answers, const char *why)
{
    char *got = problem(r, answers);
    assert_non_null(got);
    assert_string_equal(got, why);
    free(got);
}

static void check_form(const char *coder, const char *line, const char *accepted,
                       const char *declined, const char *cancelled)
{
    struct bt_test_rig r;
    held(&r, coder, line);
    assert_string_equal(r.held.questions_json,
                        "[{\"id\":\"name\",\"header\":\"Name\",\"text\":\"Name\",\"options\":[]},"
                        "{\"id\":\"age\",\"header\":\"age\",\"text\":\"How old?\",\"options\":[]},"
                        "{\"id\":\"ratio\",\"header\":\"ratio\",\"text\":\"ratio\",\"options\":[]},"
                        "{\"id\":\"ok\",\"header\":\"ok\",\"text\":\"ok\",\"options\":"
                        "[{\"label\":\"true\"},{\"label\":\"false\"}]},"
                        "{\"id\":\"size\",\"header\":\"size\",\"text\":\"size\",\"options\":"
                        "[{\"label\":\"Small\"},{\"label\":\"Large\"}]},"
                        "{\"id\":\"tags\",\"header\":\"tags\",\"text\":\"tags\",\"options\":"
                        "[{\"label\":\"x\"},{\"label\":\"y\"}],\"multiple\":true}]");
    /* what does not fit is refused with the reason, before anything is written */
    assert_problem(&r, "[[\"Ada\"],[\"thirty\"]]", "answer 2 (age, integer) is not an integer");
    assert_problem(&r, "[[\"Ada\"],[\"3.5\"]]", "answer 2 (age, integer) is not an integer");
    assert_problem(&r, "[[\"Ada\"],[\"-1\"]]",
                   "answer 2 (age, integer) is outside the form's bounds (minimum, maximum)");
    assert_problem(&r, "[[\"Ada\"]]", "answer 2 (age) is required");
    assert_problem(&r, "[[\"Ada\"],[\"1\"],[\"1e\"]]", "answer 3 (ratio, number) is not a number");
    assert_problem(&r, "[[\"Ada\"],[\"1\"],[\"1\"],[\"maybe\"]]",
                   "answer 4 (ok, boolean) is not true or false");
    assert_problem(&r, "[[\"Ada\"],[\"1\"],[\"1\"],[\"no\"],[\"Huge\"]]",
                   "answer 5 (size, string) is not among the form's choices");
    assert_problem(&r, "[[\"Ada\"],[\"1\"],[\"1\"],[\"no\"],[\"s\"],[\"z\"]]",
                   "answer 6 (tags, array) names a choice the form does not offer");
    assert_problem(&r, "[[\"Ada\",\"Bob\"],[\"1\"]]",
                   "answer 1 (name, string) takes one answer, "
                   "not several");
    assert_int_equal(r.writes.len, 0);
    char *none = problem(&r, "[[\"Ada\"],[\"2\"]]"); /* the rest is optional */
    assert_null(none);
    decide(&r, 1, "user", FORM_ANSWERS);
    assert_string_equal(r.writes.data, accepted);
    assert_non_null(strstr(r.events.data, "approval.resolved:user_input:accept"));
    bt_test_rig_release(&r);

    held(&r, coder, line);
    decide(&r, 0, "user", NULL);
    assert_string_equal(r.writes.data, declined);
    assert_non_null(strstr(r.events.data, "approval.resolved:user_input:decline"));
    bt_test_rig_release(&r);

    held(&r, coder, line);
    decide(&r, 0, "cancel", NULL);
    assert_string_equal(r.writes.data, cancelled);
    bt_test_rig_release(&r);
}

static void test_forms(void **state)
{
    (void)state;
    check_form("codex", CODEX_FORM,
               "{\"id\":9,\"result\":{\"action\":\"accept\"," FORM_CONTENT "}}\n",
               "{\"id\":9,\"result\":{\"action\":\"decline\"}}\n",
               "{\"id\":9,\"result\":{\"action\":\"cancel\"}}\n");
    check_form("gemini", ACP_FORM,
               "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{\"action\":\"accept\"," FORM_CONTENT
               "}}\n",
               "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{\"action\":\"decline\"}}\n",
               "{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{\"action\":\"cancel\"}}\n");
}

/* A form baton cannot fill (url mode; a field of an unknown type) is its
 * message, which answers cannot accept: declined only. Other questions
 * have no such check. */
static void test_forms_unfillable(void **state)
{
    (void)state;
    struct bt_test_rig r;
    held(&r, "codex",
         "{\"id\":3,\"method\":\"mcpServer/elicitation/request\",\"params\":{\"threadId\":\"t\","
         "\"serverName\":\"srv\",\"mode\":\"url\",\"message\":\"Sign in\",\"url\":"
         "\"https://example.com\",\"elicitationId\":\"e\"}}");
    assert_string_equal(r.held.questions_json,
                        "[{\"header\":\"srv\",\"text\":\"Sign in\",\"options\":[]}]");
    assert_null(r.held.params_json);
    char *why = problem(&r, "[[\"done\"]]");
    assert_non_null(strstr(why, "is a form baton cannot fill"));
    free(why);
    bt_test_rig_release(&r);

    held(&r, "gemini",
         "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"elicitation/create\",\"params\":{"
         "\"sessionId\":\"s-1\",\"mode\":\"form\",\"message\":\"Pick\",\"requestedSchema\":{"
         "\"type\":\"object\",\"properties\":{\"f\":{\"type\":\"object\"}}}}}");
    assert_null(r.held.params_json);
    why = problem(&r, "[[\"x\"]]");
    assert_non_null(why);
    free(why);
    bt_test_rig_release(&r);

    held(&r, "codex", CODEX_QUESTION);
    assert_null(problem(&r, "[[\"Blue\"],[\"because\"]]"));
    bt_test_rig_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codex), cmocka_unit_test(test_claude),
        cmocka_unit_test(test_pi),    cmocka_unit_test(test_acp),
        cmocka_unit_test(test_forms), cmocka_unit_test(test_forms_unfillable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
