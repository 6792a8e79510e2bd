/* SPDX-License-Identifier: MIT */
/* Unit tests of the ACP runner and parser (runners/runner-acp.h,
 * parsers/parser-acp.h) through the gemini, opencode and copilot coders:
 * argv and handoff, the handshake and the resume rule, permission answers
 * by policy, the update mapping, stop reasons and error kinds, unknowns. */
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

#include "coder.h"
#include "error.h"
#include "rig.h"
#include "runner-acp.h"

#define INIT_LOAD                                                                                  \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":"       \
    "{\"loadSession\":true}}}"
#define INIT_RESUME                                                                                \
    "{\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{\"loadSession\":true,"     \
    "\"sessionCapabilities\":{\"resume\":{}}}}}"
#define INIT_NONE "{\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}"
#define NEW_SESSION "{\"id\":2,\"result\":{\"sessionId\":\"s-1\"}}"
#define UPDATE(u)                                                                                  \
    "{\"method\":\"session/update\",\"params\":{\"sessionId\":\"s-1\",\"update\":" u "}}"
#define CHUNK(kind, text)                                                                          \
    UPDATE("{\"sessionUpdate\":\"" kind "\",\"content\":{\"type\":\"text\",\"text\":\"" text "\"}" \
           "}")
#define PERMISSION(id)                                                                             \
    "{\"id\":" id ",\"method\":\"session/request_permission\",\"params\":{\"sessionId\":\"s-1\","  \
    "\"toolCall\":{\"toolCallId\":\"c1\",\"title\":\"rm -rf x\",\"kind\":\"execute\"},"            \
    "\"options\":[{\"optionId\":\"a1\",\"name\":\"Always\",\"kind\":\"allow_always\"},"            \
    "{\"optionId\":\"o1\",\"name\":\"Once\",\"kind\":\"allow_once\"},{\"optionId\":\"r1\","        \
    "\"name\":\"No\",\"kind\":\"reject_once\"}]}}"

/* Every ACP case begins with the initialize request written. */
static void rig_init(struct bt_test_rig *r, const char *coder, enum bt_approval a,
                     const char *resume)
{
    bt_test_rig_init(r, coder, a, resume);
    bt_test_rig_start(r);
}

/* The last line written, parsed. */
static cJSON *last_write(const struct bt_test_rig *r)
{
    const char *end = r->writes.data + r->writes.len - 1;
    assert_true(r->writes.len > 0 && *end == '\n');
    const char *p = end;
    while (p > r->writes.data && p[-1] != '\n')
        p--;
    return cJSON_ParseWithLength(p, (size_t)(end - p));
}

static const char *jstr(const cJSON *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", path);
    const cJSON *v = o;
    for (char *k = strtok(buf, "."); k && v; k = strtok(NULL, "."))
        v = cJSON_GetObjectItemCaseSensitive(v, k);
    return v && cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The handshake up to the prompt, on a new session. */
static void rig_to_prompt(struct bt_test_rig *r)
{
    bt_test_rig_line(r, INIT_LOAD);
    bt_test_rig_line(r, NEW_SESSION);
    cJSON *m = last_write(r);
    assert_string_equal(jstr(m, "method"), "session/prompt");
    cJSON_Delete(m);
}

static void test_argv_and_handoff(void **state)
{
    (void)state;
    static const struct {
        const char *coder, *model, *argv, *handoff;
    } cases[] = {
        {"gemini", "m1", "--acp --model=m1", "--resume=s-1 --model=m1"},
        {"opencode", "p/m", "acp", "--session=s-1 --model=p/m"},
        {"copilot", NULL, "--acp --no-auto-update", "--resume=s-1"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        const struct bt_coder *c = bt_coder_find(cases[i].coder);
        assert_non_null(c);
        struct bt_runner_config cfg = {.prompt = "x", .model = cases[i].model};
        struct bt_strv argv;
        struct bt_buf joined = BT_BUF_INIT;
        bt_strv_init(&argv);
        assert_int_equal(c->runner->build_argv(&cfg, &argv), 0);
        for (size_t k = 0; k < argv.n; k++)
            bt_buf_addf(&joined, "%s%s", k ? " " : "", argv.v[k]);
        assert_string_equal(joined.data, cases[i].argv);
        bt_strv_release(&argv);
        bt_strv_init(&argv);
        assert_int_equal(c->runner->handoff_argv(&cfg, &argv), -ENOENT);
        cfg.native_session_id = "s-1";
        assert_int_equal(c->runner->handoff_argv(&cfg, &argv), 0);
        bt_buf_reset(&joined);
        for (size_t k = 0; k < argv.n; k++)
            bt_buf_addf(&joined, "%s%s", k ? " " : "", argv.v[k]);
        assert_string_equal(joined.data, cases[i].handoff);
        bt_strv_release(&argv);
        bt_strv_init(&argv);
        cfg.native_session_id = "--evil";
        assert_int_equal(c->runner->build_argv(&cfg, &argv), -EINVAL);
        assert_int_equal(c->runner->handoff_argv(&cfg, &argv), -EINVAL);
        cfg.native_session_id = NULL;
        cfg.model = "-x";
        assert_int_equal(c->runner->handoff_argv(&cfg, &argv), -ENOENT);
        cfg.native_session_id = "s-1";
        assert_int_equal(c->runner->handoff_argv(&cfg, &argv), -EINVAL);
        bt_strv_release(&argv);
        bt_buf_release(&joined);
    }
}

static void test_version(void **state)
{
    (void)state;
    char *v = NULL;
    assert_int_equal(bt_acp_parse_version("GitHub Copilot CLI 1.0.102.\nRun 'copilot update'", &v),
                     0);
    assert_string_equal(v, "1.0.102");
    free(v);
    assert_int_equal(bt_acp_parse_version("0.61.0\n", &v), 0);
    assert_string_equal(v, "0.61.0");
    free(v);
    assert_int_equal(bt_acp_parse_version("no version", &v), BT_EPROTO);
}

static void test_handshake_new_session(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    cJSON *m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "initialize");
    assert_string_equal(jstr(m, "params.clientInfo.name"), "baton");
    const cJSON *caps = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "params"), "clientCapabilities");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(caps, "terminal")));
    assert_true(
        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(caps, "fs"), "readTextFile")));
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "params"), "protocolVersion")->valueint, 1);
    cJSON_Delete(m);
    bt_test_rig_line(&r, INIT_LOAD);
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/new");
    assert_string_equal(jstr(m, "params.cwd"), "/tmp");
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "params"), "mcpServers")));
    cJSON_Delete(m);
    bt_test_rig_line(&r, NEW_SESSION);
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/prompt");
    assert_string_equal(jstr(m, "params.sessionId"), "s-1");
    cJSON_Delete(m);
    assert_non_null(strstr(r.events.data, "session.started|"));
    /* a cancel is the session/cancel notification, once */
    bt_buf_reset(&r.writes);
    assert_int_equal(r.coder->runner->interrupt(r.runner, &r.writes), 0);
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/cancel");
    assert_null(cJSON_GetObjectItem(m, "id"));
    cJSON_Delete(m);
    assert_int_equal(r.coder->runner->interrupt(r.runner, &r.writes), -ENOTSUP);
    bt_test_rig_release(&r);
}

static void test_interrupt_before_prompt(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    assert_int_equal(r.coder->runner->interrupt(r.runner, &r.writes), -ENOTSUP);
    bt_test_rig_release(&r);
}

/* Resume: session/resume when offered (no replay), else session/load, whose
 * replayed history is dropped; else resume_failed. */
static void test_resume_rule(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "copilot", BT_APPROVAL_DENY, "s-9");
    bt_test_rig_line(&r, INIT_RESUME);
    cJSON *m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/resume");
    assert_string_equal(jstr(m, "params.sessionId"), "s-9");
    cJSON_Delete(m);
    bt_test_rig_release(&r);

    rig_init(&r, "opencode", BT_APPROVAL_DENY, "s-9");
    bt_test_rig_line(&r, INIT_LOAD);
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/load");
    cJSON_Delete(m);
    bt_test_rig_line(&r, CHUNK("user_message_chunk", "old prompt"));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "OLD ANSWER"));
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{}}");
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/prompt");
    assert_string_equal(jstr(m, "params.sessionId"), "s-9");
    cJSON_Delete(m);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "new"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}");
    assert_string_equal(r.text.data, "new");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    bt_test_rig_release(&r);

    rig_init(&r, "opencode", BT_APPROVAL_DENY, "s-9");
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, INIT_NONE);
    assert_int_equal(r.ended, 1);
    assert_string_equal(r.error_kind, "resume_failed");
    assert_int_equal(r.writes.len, 0); /* nothing asked that could harm the session */
    bt_test_rig_release(&r);

    rig_init(&r, "copilot", BT_APPROVAL_DENY, "s-9");
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r,
                     "{\"id\":2,\"error\":{\"code\":-32002,\"message\":\"Resource not found\"}}");
    assert_string_equal(r.error_kind, "resume_failed");
    assert_non_null(strstr(r.message, "Resource not found"));
    bt_test_rig_release(&r);

    /* gemini: its session/load damages the session (docs/acp.md): refused
     * with nothing but initialize sent, whatever it offers */
    rig_init(&r, "gemini", BT_APPROVAL_DENY, "s-9");
    bt_buf_reset(&r.writes);
    bt_test_rig_line(&r, INIT_RESUME);
    assert_int_equal(r.ended, 1);
    assert_string_equal(r.error_kind, "resume_failed");
    assert_non_null(strstr(r.message, "baton handoff"));
    assert_int_equal(r.writes.len, 0);
    bt_test_rig_release(&r);
}

/* A `null` result (JSON-RPC 2.0 allows any value) to session/load or
 * session/resume is a success: the prompt follows on the session asked
 * for. A response with no result and no error is still a failure. */
static void test_null_session_result(void **state)
{
    (void)state;
    static const char *const inits[] = {INIT_LOAD, INIT_RESUME};
    for (size_t i = 0; i < BT_ARRAY_SIZE(inits); i++) {
        struct bt_test_rig r;
        rig_init(&r, "opencode", BT_APPROVAL_DENY, "s-9");
        bt_test_rig_line(&r, inits[i]);
        bt_test_rig_line(&r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}");
        assert_int_equal(r.ended, 0);
        cJSON *m = last_write(&r);
        assert_string_equal(jstr(m, "method"), "session/prompt");
        assert_string_equal(jstr(m, "params.sessionId"), "s-9");
        cJSON_Delete(m);
        assert_non_null(strstr(r.events.data, "session.started|"));
        bt_test_rig_release(&r);
    }
    struct bt_test_rig r;
    rig_init(&r, "opencode", BT_APPROVAL_DENY, "s-9");
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r, "{\"jsonrpc\":\"2.0\",\"id\":2}");
    assert_int_equal(r.ended, 1);
    assert_string_equal(r.error_kind, "resume_failed");
    bt_test_rig_release(&r);
    /* session/new must name its session: null is not one */
    rig_init(&r, "opencode", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}");
    assert_int_equal(r.ended, 1);
    assert_string_equal(r.error_kind, "protocol_mismatch");
    bt_test_rig_release(&r);
}

static void test_handshake_failures(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, "{\"id\":1,\"result\":{\"protocolVersion\":2}}");
    assert_string_equal(r.error_kind, "protocol_mismatch");
    bt_test_rig_release(&r);

    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(
        &r, "{\"id\":2,\"error\":{\"code\":-32000,\"message\":\"Authentication required\"}}");
    assert_string_equal(r.error_kind, "auth_required");
    assert_non_null(strstr(r.message, "GEMINI_API_KEY"));
    bt_test_rig_release(&r);

    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r, "{\"id\":2,\"result\":{\"sessionId\":\"--flag\"}}");
    assert_string_equal(r.error_kind, "protocol_mismatch");
    bt_test_rig_release(&r);
}

/* opencode picks the model with session/set_config_option before the
 * prompt; a refusal fails the turn. */
static void test_model_config_option(void **state)
{
    (void)state;
    struct bt_test_rig r;
    memset(&r, 0, sizeof(r));
    rig_init(&r, "opencode", BT_APPROVAL_DENY, NULL);
    r.cfg.model = "local/m";
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r, NEW_SESSION);
    cJSON *m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/set_config_option");
    assert_string_equal(jstr(m, "params.configId"), "model");
    assert_string_equal(jstr(m, "params.value"), "local/m");
    cJSON_Delete(m);
    bt_test_rig_line(&r, "{\"id\":4,\"result\":{\"configOptions\":[]}}");
    m = last_write(&r);
    assert_string_equal(jstr(m, "method"), "session/prompt");
    cJSON_Delete(m);
    bt_test_rig_release(&r);

    rig_init(&r, "opencode", BT_APPROVAL_DENY, NULL);
    r.cfg.model = "nope";
    bt_test_rig_line(&r, INIT_LOAD);
    bt_test_rig_line(&r, NEW_SESSION);
    bt_test_rig_line(&r, "{\"id\":4,\"error\":{\"code\":-32602,\"message\":\"unknown model\"}}");
    assert_string_equal(r.error_kind, "model_error");
    bt_test_rig_release(&r);
}

static const char *outcome(const struct bt_test_rig *r, char *buf, size_t n)
{
    cJSON *m = last_write(r);
    const char *o = jstr(m, "result.outcome.outcome");
    const char *id = jstr(m, "result.outcome.optionId");
    snprintf(buf, n, "%s:%s", o ? o : "", id ? id : "");
    cJSON_Delete(m);
    return buf;
}

static void test_permission_by_policy(void **state)
{
    (void)state;
    char buf[64];
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, PERMISSION("\"req-1\""));
    assert_string_equal(outcome(&r, buf, sizeof(buf)), "selected:r1");
    cJSON *m = last_write(&r);
    assert_string_equal(jstr(m, "id"), "req-1"); /* the agent's id echoed, string kept */
    cJSON_Delete(m);
    assert_non_null(
        strstr(r.events.data, "approval.requested:command:|approval.resolved:command:decline|"));
    bt_test_rig_release(&r);

    rig_init(&r, "gemini", BT_APPROVAL_AUTO, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, PERMISSION("0"));
    assert_string_equal(outcome(&r, buf, sizeof(buf)), "selected:o1"); /* never allow_always */
    assert_non_null(strstr(r.events.data, "approval.resolved:command:accept|"));
    /* after a cancel: cancelled, whatever the policy */
    assert_int_equal(r.coder->runner->interrupt(r.runner, &r.writes), 0);
    bt_test_rig_line(&r, PERMISSION("1"));
    assert_string_equal(outcome(&r, buf, sizeof(buf)), "cancelled:");
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}");
    assert_int_equal(r.status, BT_TURN_CANCELLED);
    bt_test_rig_release(&r);

    /* nothing to select under the policy: no grant, a warning */
    rig_init(&r, "gemini", BT_APPROVAL_AUTO, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r,
                     "{\"id\":5,\"method\":\"session/request_permission\",\"params\":{\"toolCall\":"
                     "{\"toolCallId\":\"c\",\"kind\":\"edit\"},\"options\":[{\"optionId\":\"a\","
                     "\"kind\":\"allow_always\"}]}}");
    assert_string_equal(outcome(&r, buf, sizeof(buf)), "cancelled:");
    assert_non_null(strstr(r.events.data, "approval.resolved:file_change:decline|"));
    bt_test_rig_release(&r);
}

static void test_client_methods_get_errors(void **state)
{
    (void)state;
    static const char *const methods[] = {"fs/read_text_file", "terminal/create", "x/unknown"};
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_AUTO, NULL);
    rig_to_prompt(&r);
    for (size_t i = 0; i < BT_ARRAY_SIZE(methods); i++) {
        char line[160];
        snprintf(line, sizeof(line), "{\"id\":%zu,\"method\":\"%s\",\"params\":{}}", i + 1,
                 methods[i]);
        bt_test_rig_line(&r, line);
        cJSON *m = last_write(&r);
        const cJSON *e = cJSON_GetObjectItem(m, "error");
        assert_non_null(e);
        assert_int_equal(cJSON_GetObjectItem(e, "code")->valueint, -32601);
        assert_int_equal(cJSON_GetObjectItem(m, "id")->valueint, (int)i + 1);
        cJSON_Delete(m);
    }
    assert_int_equal(r.ended, 0);
    bt_test_rig_release(&r);
}

static void test_update_mapping(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_buf_reset(&r.events);
    bt_test_rig_line(&r, CHUNK("agent_thought_chunk", "hmm"));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Hel"));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "lo"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t1\",\"title\":"
                                "\"Edit a.c\",\"kind\":\"edit\",\"status\":\"pending\"}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"t1\","
                                "\"status\":\"in_progress\"}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"t1\","
                                "\"status\":\"completed\",\"content\":[{\"type\":\"diff\",\"path\":"
                                "\"a.c\",\"newText\":\"x\"}]}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t2\",\"title\":"
                                "\"q\",\"kind\":\"search\",\"status\":\"failed\"}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t3\",\"title\":"
                                "\"read\",\"kind\":\"read\"}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call_update\",\"toolCallId\":\"t3\","
                                "\"status\":\"weird\"}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"plan\",\"entries\":[{\"content\":\"a\","
                                "\"status\":\"pending\",\"priority\":\"low\"}]}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"usage_update\",\"used\":10,\"size\":100,"
                                "\"cost\":{\"amount\":1.5,\"currency\":\"EUR\"}}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"available_commands_update\","
                                "\"availableCommands\":[]}"));
    assert_string_equal(r.events.data,
                        "item.started/reasoning|item.delta/reasoning|"
                        "item.completed/reasoning:completed|"
                        "item.started/message|item.delta/message|item.delta/message|"
                        "item.completed/message:completed|"
                        "item.started/file_change|item.completed/file_change:completed|"
                        "item.completed/web_search:failed|"
                        "item.started/tool_call|item.completed/tool_call:failed|"
                        "item.completed/plan:completed|usage|");
    assert_int_equal(r.usage.context_tokens, 10);
    assert_int_equal(r.usage.context_window, 100);
    assert_true(r.usage.cost_usd < 0); /* not USD: unknown */
    assert_string_equal(r.text.data, "Hello");
    bt_test_rig_line(&r,
                     "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\",\"usage\":{\"inputTokens\":"
                     "5,\"outputTokens\":7,\"totalTokens\":12}}}");
    assert_int_equal(r.usage.input_tokens, 5);
    assert_int_equal(r.usage.output_tokens, 7);
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    bt_test_rig_release(&r);
}

static void test_stop_reasons_and_errors(void **state)
{
    (void)state;
    static const struct {
        const char *response;
        enum bt_turn_status status;
        const char *kind;
    } cases[] = {
        {"{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}", BT_TURN_COMPLETED, ""},
        {"{\"id\":3,\"result\":{\"stopReason\":\"cancelled\"}}", BT_TURN_CANCELLED, ""},
        {"{\"id\":3,\"result\":{\"stopReason\":\"max_tokens\"}}", BT_TURN_FAILED, "model_error"},
        {"{\"id\":3,\"result\":{\"stopReason\":\"refusal\"}}", BT_TURN_FAILED, "model_error"},
        {"{\"id\":3,\"result\":{\"stopReason\":\"max_turn_requests\"}}", BT_TURN_FAILED,
         "model_error"},
        {"{\"id\":3,\"result\":{\"stopReason\":7}}", BT_TURN_FAILED, "protocol_mismatch"},
        {"{\"id\":3,\"result\":{}}", BT_TURN_FAILED, "protocol_mismatch"},
        {"{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}", BT_TURN_FAILED,
         "model_error"},
        {"{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"x\",\"data\":{\"details\":\"Rate "
         "limit exceeded\"}}}",
         BT_TURN_FAILED, "rate_limited"},
        {"{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"fetch failed: ECONNREFUSED\"}}",
         BT_TURN_FAILED, "network_error"},
        {"{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"The input token count exceeds the "
         "maximum context length\"}}",
         BT_TURN_FAILED, "context_exceeded"},
        {"{\"id\":3,\"error\":{\"code\":-32000,\"message\":\"Authentication required\"}}",
         BT_TURN_FAILED, "auth_required"},
        {"{\"id\":3,\"error\":{\"code\":-32800,\"message\":\"Request cancelled\"}}",
         BT_TURN_CANCELLED, ""},
        {"{\"id\":3}", BT_TURN_FAILED, "model_error"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        struct bt_test_rig r;
        rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
        rig_to_prompt(&r);
        bt_test_rig_line(&r, CHUNK("agent_message_chunk", "text"));
        bt_test_rig_line(&r, cases[i].response);
        assert_int_equal(r.ended, 1);
        assert_int_equal(r.status, cases[i].status);
        if (r.status == BT_TURN_FAILED)
            assert_string_equal(r.error_kind, cases[i].kind);
        /* the end drains: an update written right after the answer still
         * belongs to the turn; then the message streamed so far is
         * complete */
        assert_int_equal(r.drain, 1);
        assert_null(strstr(r.events.data, "item.completed/message"));
        bt_test_rig_line(&r, CHUNK("agent_message_chunk", " tail"));
        assert_string_equal(r.text.data, "text tail");
        bt_test_rig_finish(&r);
        assert_non_null(strstr(r.events.data, "item.completed/message:completed|"));
        /* a repeated answer changes nothing */
        bt_test_rig_line(&r, cases[i].response);
        assert_int_equal(r.ended, 1);
        bt_test_rig_release(&r);
    }
}

/* copilot tells a failed model request only as text (fixtures/copilot/
 * 1.0.102 http500, http401, http429, unreachable, context-exceeded):
 * "Info: … Retrying..." chunks are retry notices, a last chunk "Error: …"
 * with a prompt answer without usage is the failure, with its kind. */
static void test_prose_errors(void **state)
{
    (void)state;
    static const struct {
        const char *error;
        const char *kind;
    } cases[] = {
        {"Error: Failed to get response from the AI model; retried 5 times Last error: 500 boom",
         "model_error"},
        {"Error: Authentication failed with provider at http://h/v1 (HTTP 401).", "auth_required"},
        {"Error: Failed to get response; retried 5 times Last error: 429 slow down",
         "rate_limited"},
        {"Error: Could not connect to local model provider at http://h/v1.", "network_error"},
        {"Error: 400 This model's maximum context length is 128000 tokens.", "context_exceeded"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        struct bt_test_rig r;
        rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
        rig_to_prompt(&r);
        bt_test_rig_line(&r,
                         CHUNK("agent_message_chunk",
                               "Info: Request failed due to a transient API error. Retrying..."));
        bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"usage_update\",\"used\":5,\"size\":9}"));
        char *line = bt_xasprintf(CHUNK("agent_message_chunk", "%s"), cases[i].error);
        bt_test_rig_line(&r, line);
        free(line);
        bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}");
        assert_int_equal(r.ended, 1);
        assert_int_equal(r.status, BT_TURN_FAILED);
        assert_string_equal(r.error_kind, cases[i].kind);
        assert_string_equal(r.message, cases[i].error + strlen("Error: "));
        assert_int_equal(r.text.len, 0); /* neither the notice nor the error is answer text */
        assert_non_null(strstr(r.events.data, "warning:retry|"));
        assert_null(strstr(r.events.data, "item."));
        bt_test_rig_release(&r);
    }

    /* an answer that starts with "Error:": usage in the answer, or more
     * text after the first chunk, says it was the model's */
    struct bt_test_rig r;
    rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Error: 42 is not a type"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\",\"usage\":{"
                         "\"inputTokens\":1,\"outputTokens\":2}}}");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    assert_string_equal(r.text.data, "Error: 42 is not a type");
    bt_test_rig_finish(&r);
    assert_non_null(strstr(r.events.data, "item.completed/message:completed|"));
    bt_test_rig_release(&r);

    rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Error: "));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "means the build broke"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    assert_string_equal(r.text.data, "Error: means the build broke");
    bt_test_rig_release(&r);

    /* a tool call after it: the same */
    rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Error: seen, fixing"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t\",\"kind\":"
                                "\"execute\",\"status\":\"completed\"}"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    assert_string_equal(r.text.data, "Error: seen, fixing");
    bt_test_rig_release(&r);

    /* copilot's notices "Info: …" (a written file's path, "Operation
     * cancelled by user" after a denied tool): a coder warning, not text,
     * unless the message goes on */
    rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Info: /p/note.txt"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t\",\"kind\":"
                                "\"edit\",\"status\":\"completed\"}"));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Info: Operation cancelled by user"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\",\"usage\":{}}}");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    assert_int_equal(r.text.len, 0);
    assert_null(strstr(r.events.data, "/message"));
    assert_non_null(strstr(r.events.data, "warning:coder|item.completed/file_change:completed|"));
    assert_non_null(strstr(r.events.data, "completed|warning:coder|usage|"));
    bt_test_rig_release(&r);

    rig_init(&r, "copilot", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Info: "));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "the answer"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\",\"usage\":{}}}");
    assert_string_equal(r.text.data, "Info: the answer");
    bt_test_rig_release(&r);

    /* an agent without prose errors: text is text */
    rig_init(&r, "opencode", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Info: a. Retrying..."));
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "Error: x"));
    bt_test_rig_line(&r, "{\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}");
    assert_int_equal(r.status, BT_TURN_COMPLETED);
    assert_string_equal(r.text.data, "Info: a. Retrying...Error: x");
    bt_test_rig_release(&r);
}

/* The agents' own words for a failed model request: opencode's -32603
 * "Internal error: …" (data.errorName), gemini's code = HTTP status with
 * the API's error body as message (fixtures/<coder>/). */
static void test_error_words(void **state)
{
    (void)state;
    static const struct {
        const char *coder;
        const char *response;
        const char *kind;
        const char *message;
    } cases[] = {
        {"opencode",
         "{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"Internal error: Cannot connect "
         "to API: Unable to connect.\"}}",
         "network_error", "Internal error: Cannot connect to API: Unable to connect."},
        {"opencode",
         "{\"id\":3,\"error\":{\"code\":-32603,\"message\":\"Internal error: Session too "
         "large\",\"data\":{\"errorName\":\"ContextOverflowError\"}}}",
         "context_exceeded", "Internal error: Session too large"},
        {"gemini",
         "{\"id\":3,\"error\":{\"code\":400,\"message\":\"{\\\"error\\\":{\\\"code\\\":400,"
         "\\\"message\\\":\\\"The input token count (9) exceeds the maximum number of tokens "
         "allowed (8).\\\"}}\"}}",
         "context_exceeded",
         "The input token count (9) exceeds the maximum number of tokens "
         "allowed (8)."},
        {"gemini",
         "{\"id\":3,\"error\":{\"code\":500,\"message\":\"{\\\"error\\\":{\\\"code\\\":500,"
         "\\\"message\\\":\\\"boom\\\"}}\"}}",
         "model_error", "boom"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        struct bt_test_rig r;
        rig_init(&r, cases[i].coder, BT_APPROVAL_DENY, NULL);
        rig_to_prompt(&r);
        bt_test_rig_line(&r, cases[i].response);
        assert_int_equal(r.status, BT_TURN_FAILED);
        assert_string_equal(r.error_kind, cases[i].kind);
        assert_string_equal(r.message, cases[i].message);
        bt_test_rig_release(&r);
    }
}

static void test_unknowns_and_noise(void **state)
{
    (void)state;
    struct bt_test_rig r;
    rig_init(&r, "gemini", BT_APPROVAL_DENY, NULL);
    rig_to_prompt(&r);
    bt_buf_reset(&r.events);
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"brand_new\"}"));
    bt_test_rig_line(&r, UPDATE("{\"nothing\":1}"));
    bt_test_rig_line(&r, "{\"method\":\"x/notice\"}");
    bt_test_rig_line(&r, "Loaded cached credentials.");
    bt_test_rig_line(&r, "{\"id\":");
    bt_test_rig_line(&r, "[1,2]");
    bt_test_rig_line(&r, "{\"id\":99,\"result\":{}}");
    bt_test_rig_line(&r, "{\"jsonrpc\":\"2.0\"}");
    bt_test_rig_line(&r, CHUNK("agent_message_chunk", "x"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":"
                                "\"image\",\"data\":\"\"}}"));
    bt_test_rig_line(&r, UPDATE("{\"sessionUpdate\":\"tool_call\"}"));
    assert_string_equal(r.events.data,
                        "warning:unknown_method|warning:protocol|warning:unknown_method|"
                        "warning:noise|warning:invalid_json|warning:noise|"
                        "warning:protocol|warning:protocol|item.started/message|"
                        "item.delta/message|warning:unknown_item|warning:protocol|");
    assert_int_equal(r.ended, 0);
    bt_test_rig_release(&r);
}

static void test_diagnose(void **state)
{
    (void)state;
    static const struct {
        const char *coder, *tail, *kind;
    } cases[] = {
        {"gemini", "Please set an Auth method in your settings.json", "auth_required"},
        {"copilot", "Offline mode requires a local model provider", "auth_required"},
        {"opencode", "Error: connect ECONNREFUSED 127.0.0.1:9", "network_error"},
        {"gemini", "segfault somewhere", "coder_crashed"},
        {"gemini", NULL, "coder_crashed"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        const struct bt_coder *c = bt_coder_find(cases[i].coder);
        void *p = c->parser->create();
        enum bt_error_kind kind = BT_ERROR_KIND_CODER_CRASHED;
        struct bt_buf msg = BT_BUF_INIT;
        c->parser->diagnose(p, cases[i].tail, cases[i].tail ? strlen(cases[i].tail) : 0, 1, 0,
                            &kind, &msg);
        assert_string_equal(bt_error_kind_name(kind), cases[i].kind);
        assert_non_null(strstr(msg.data, cases[i].coder));
        bt_buf_release(&msg);
        c->parser->destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv_and_handoff),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_handshake_new_session),
        cmocka_unit_test(test_interrupt_before_prompt),
        cmocka_unit_test(test_resume_rule),
        cmocka_unit_test(test_null_session_result),
        cmocka_unit_test(test_handshake_failures),
        cmocka_unit_test(test_model_config_option),
        cmocka_unit_test(test_permission_by_policy),
        cmocka_unit_test(test_client_methods_get_errors),
        cmocka_unit_test(test_update_mapping),
        cmocka_unit_test(test_stop_reasons_and_errors),
        cmocka_unit_test(test_prose_errors),
        cmocka_unit_test(test_error_words),
        cmocka_unit_test(test_unknowns_and_noise),
        cmocka_unit_test(test_diagnose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
