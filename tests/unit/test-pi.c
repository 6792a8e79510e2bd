/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pi read side: jscan (the allocation-free JSON walker
 * under the message_update fast path); the recorded 200 KB answer of
 * pi 0.73.1 (42 MB of stdout, gzip-compressed in fixtures/pi/0.73.1/) and
 * of pi 1.6.0 (1 MB: 1.x sends deltas only), which must parse into exactly
 * the text pi itself produced; how a turn ends on either version (pi
 * 1.x's agent_settled and prompt disposition); the diagnosis of a pi 1.x
 * run by too old a Node.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <zlib.h>

#include "rig.h"

#include "answer.h"
#include "coder.h"
#include "framer.h"
#include "jscan.h"

/* ---- jscan ---------------------------------------------------------- */

static void test_jscan_walk_and_decode(void **state)
{
    (void)state;
    const char *json =
        "{ \"a\" : [1, {\"x\": \"}\"}, \"\\\\\"], \"delta\":\"h\\u00e9\\n\\ud83d\\ude00"
        "\\\"q\\\"\", \"n\": -42, \"t\": true }";
    struct bt_jscan s;
    struct bt_buf out = BT_BUF_INIT;
    const char *k;
    size_t kn;
    int64_t n = 0;
    bt_jscan_init(&s, json, strlen(json));
    assert_int_equal(bt_jscan_object(&s), 0);
    assert_int_equal(bt_jscan_member(&s, &k, &kn), 1);
    assert_true(bt_jscan_key_is(k, kn, "a"));
    assert_int_equal(bt_jscan_skip(&s), 0);
    assert_int_equal(bt_jscan_member(&s, &k, &kn), 1);
    assert_true(bt_jscan_key_is(k, kn, "delta"));
    assert_int_equal(bt_jscan_string(&s, &out), 0);
    assert_string_equal(out.data, "h\xc3\xa9\n\xf0\x9f\x98\x80\"q\"");
    assert_int_equal(bt_jscan_member(&s, &k, &kn), 1);
    assert_int_equal(bt_jscan_int(&s, &n), 0);
    assert_int_equal(n, -42);
    assert_int_equal(bt_jscan_member(&s, &k, &kn), 1);
    assert_int_equal(bt_jscan_skip(&s), 0);
    assert_int_equal(bt_jscan_member(&s, &k, &kn), 0);
    bt_buf_release(&out);
}

static void test_jscan_refuses_malformed(void **state)
{
    (void)state;
    const char *bad[] = {"{\"a\":\"unterminated}",
                         "{\"a\":[1,2}",
                         "{\"a\":\"\\x\"}",
                         "{\"a\":\"\\u12\"}",
                         "[1]",
                         "{\"a\" 1}",
                         "{\"a\":}"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(bad); i++) {
        struct bt_jscan s;
        struct bt_buf out = BT_BUF_INIT;
        const char *k;
        size_t kn;
        int rc = 0;
        bt_jscan_init(&s, bad[i], strlen(bad[i]));
        if (bt_jscan_object(&s) != 0)
            rc = -1;
        while (rc == 0 && (rc = bt_jscan_member(&s, &k, &kn)) == 1)
            rc = bt_jscan_string(&s, &out) == 0 ? 0 : -1;
        assert_int_equal(rc, -1);
        bt_buf_release(&out);
    }
    /* a lone surrogate decodes to U+FFFD */
    struct bt_jscan s;
    struct bt_buf out = BT_BUF_INIT;
    bt_jscan_init(&s, "\"\\ud800x\"", 9);
    assert_int_equal(bt_jscan_string(&s, &out), 0);
    assert_string_equal(out.data, "\xef\xbf\xbdx");
    bt_buf_release(&out);
}

static void test_jscan_deep_nesting_refused(void **state)
{
    (void)state;
    struct bt_buf deep = BT_BUF_INIT;
    for (int i = 0; i < 100000; i++)
        bt_buf_addc(&deep, '[');
    struct bt_jscan s;
    bt_jscan_init(&s, deep.data, deep.len);
    assert_int_equal(bt_jscan_skip(&s), -1);
    bt_buf_release(&deep);
}

/* ---- the recorded 200 KB answer ------------------------------------- */

struct replay {
    const struct bt_coder *coder;
    void *parser, *runner;
    struct bt_parser_sink sink;
    struct bt_answer answer;
    struct bt_buf writes;
    struct bt_buf last_end; /* the last message_end line: pi's own text */
    int ended;
};

static void on_event(void *data, const struct bt_event *ev)
{
    struct replay *r = data;
    bt_answer_add(&r->answer, ev);
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    struct replay *r = data;
    if (sig->type == BT_SIGNAL_TURN_END)
        r->ended = sig->turn_end.status == BT_TURN_COMPLETED;
    else if (sig->type == BT_SIGNAL_REQUEST || sig->type == BT_SIGNAL_RESPONSE)
        r->coder->runner->on_signal(r->runner, sig, &r->writes, &r->sink);
    bt_buf_reset(&r->writes);
}

static void on_line(void *data, char *line, size_t len)
{
    struct replay *r = data;
    if (strncmp(line, "{\"type\":\"message_end\"", 21) == 0) {
        bt_buf_reset(&r->last_end);
        bt_buf_add(&r->last_end, line, len);
    }
    r->coder->parser->line(r->parser, line, len, &r->sink);
}

/* The text pi produced: the text blocks of the final assistant message. */
static char *coder_text(const struct bt_buf *line)
{
    cJSON *j = cJSON_ParseWithLength(line->data, line->len);
    const cJSON *c;
    struct bt_buf b = BT_BUF_INIT;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(j, "message"), "content"))
    {
        const cJSON *t = cJSON_GetObjectItem(c, "text");
        if (cJSON_IsString(t))
            bt_buf_adds(&b, t->valuestring);
    }
    cJSON_Delete(j);
    return bt_buf_detach(&b, NULL);
}

/* Replay a gzip-compressed recording of [[large:200000]]: at least
 * min_bytes of stdout, parsed into pi's own text. */
static void large_answer_text(const char *path, size_t min_bytes)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    static const struct bt_framer_ops ops = {on_line, NULL};
    struct bt_runner_config cfg = {.prompt = "p"};
    struct replay r = {.coder = bt_coder_find("pi")};
    bt_answer_init(&r.answer);
    bt_buf_init(&r.writes);
    bt_buf_init(&r.last_end);
    r.parser = r.coder->parser->create();
    r.runner = r.coder->runner->create(&cfg);
    r.sink = (struct bt_parser_sink){on_event, on_signal, &r};
    struct bt_framer f;
    bt_framer_init(&f, 0, &ops, &r);
    char *chunk = bt_xmalloc(1 << 16);
    size_t total = 0;
    int n;
    while ((n = gzread(gz, chunk, 1 << 16)) > 0) {
        bt_framer_feed(&f, chunk, (size_t)n);
        total += (size_t)n;
    }
    gzclose(gz);
    bt_framer_finish(&f);
    assert_true(total > min_bytes);
    assert_true(r.ended);
    char *got = bt_answer_text(&r.answer);
    char *want = coder_text(&r.last_end);
    assert_true(strlen(want) >= 200000);
    assert_int_equal(strlen(got), strlen(want));
    assert_string_equal(got, want);
    free(got);
    free(want);
    free(chunk);
    bt_framer_release(&f);
    r.coder->parser->destroy(r.parser);
    r.coder->runner->destroy(r.runner);
    bt_answer_release(&r.answer);
    bt_buf_release(&r.writes);
    bt_buf_release(&r.last_end);
}

static void test_large_answer_text(void **state)
{
    (void)state;
    /* tens of MB of stdout: every update repeats the partial message */
    large_answer_text(BT_SOURCE_DIR "/fixtures/pi/0.73.1/large.jsonl.gz", (size_t)40 * 1000 * 1000);
}

static void test_large_answer_text_1x(void **state)
{
    (void)state;
    large_answer_text(BT_SOURCE_DIR "/fixtures/pi/1.6.0/large.jsonl.gz", (size_t)1000 * 1000);
}

/* ---- how a turn ends ------------------------------------------------ */

/* What the pi parser signals for some lines: "end STATUS KIND[ tentative]"
 * per TURN_END, "warning KIND" per warning event, one a line. */
static void end_signal(void *data, const struct bt_signal *sig)
{
    struct bt_buf *b = data;
    if (sig->type == BT_SIGNAL_TURN_END)
        bt_buf_addf(b, "end %s %s%s\n", bt_turn_status_name(sig->turn_end.status),
                    sig->turn_end.error_kind ? bt_error_kind_name(sig->turn_end.error_kind) : "-",
                    sig->turn_end.tentative ? " tentative" : "");
}

static void end_event(void *data, const struct bt_event *ev)
{
    struct bt_buf *b = data;
    if (ev->type == BT_EVENT_WARNING)
        bt_buf_addf(b, "warning %s\n", ev->kind);
}

/* lines: NULL-terminated. Caller frees. */
static char *ends_of(const char *const *lines)
{
    struct bt_buf b = BT_BUF_INIT;
    const struct bt_parser_ops *ops = bt_coder_find("pi")->parser;
    void *p = ops->create();
    struct bt_parser_sink sink = {end_event, end_signal, &b};
    for (; *lines; lines++) {
        char *line = bt_xstrdup(*lines);
        ops->line(p, line, strlen(line), &sink);
        free(line);
    }
    ops->destroy(p);
    bt_buf_adds(&b, "");
    return bt_buf_detach(&b, NULL);
}

#define PROMPT_STARTED                                                                             \
    "{\"id\":\"3\",\"type\":\"response\",\"command\":\"prompt\",\"success\":true,"                 \
    "\"data\":{\"disposition\":\"started\"}}"
#define FAILED_END                                                                                 \
    "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[],"                \
    "\"stopReason\":\"error\",\"errorMessage\":\"500: boom\"}}"
#define AGENT_END "{\"type\":\"agent_end\",\"messages\":[],\"willRetry\":false}"
#define SETTLED "{\"type\":\"agent_settled\",\"aborted\":false}"

/* pi 0.73.1: a failed agent_end is tentative (a retry may follow). */
static void test_end_0x_failure_tentative(void **state)
{
    (void)state;
    const char *lines[] = {FAILED_END, "{\"type\":\"agent_end\",\"messages\":[]}", NULL};
    char *got = ends_of(lines);
    assert_string_equal(got, "end failed model_error tentative\n");
    free(got);
}

/* pi 1.x: agent_end ends nothing, agent_settled is the definite end. */
static void test_end_1x_at_settled(void **state)
{
    (void)state;
    const char *failed[] = {PROMPT_STARTED, FAILED_END, AGENT_END, SETTLED, NULL};
    char *got = ends_of(failed);
    assert_string_equal(got, "end failed model_error\n");
    free(got);
    const char *aborted[] = {PROMPT_STARTED, AGENT_END,
                             "{\"type\":\"agent_settled\",\"aborted\":true}", NULL};
    got = ends_of(aborted);
    assert_string_equal(got, "end cancelled -\n");
    free(got);
}

/* agent_settled without a disposition seen still ends the turn at once,
 * after the tentative end; a retry's failure that already ended the turn
 * is not ended twice. */
static void test_end_settled_without_disposition(void **state)
{
    (void)state;
    const char *lines[] = {FAILED_END, AGENT_END, SETTLED, NULL};
    char *got = ends_of(lines);
    assert_string_equal(got, "end failed model_error tentative\nend failed model_error\n");
    free(got);
    const char *retried[] = {PROMPT_STARTED,
                             FAILED_END,
                             AGENT_END,
                             "{\"type\":\"auto_retry_end\",\"success\":false,\"attempt\":3,"
                             "\"finalError\":\"500: boom\"}",
                             SETTLED,
                             NULL};
    got = ends_of(retried);
    assert_string_equal(got, "end failed model_error\n");
    free(got);
}

/* An extension handled the prompt: no run, nothing to wait for. pi 1.x's
 * own events are not unknown ones. */
static void test_end_1x_handled_and_known_events(void **state)
{
    (void)state;
    const char *lines[] = {
        "{\"id\":\"3\",\"type\":\"response\",\"command\":\"prompt\",\"success\":true,"
        "\"data\":{\"disposition\":\"handled\"}}",
        "{\"type\":\"entry_appended\",\"entry\":{\"type\":\"context_edit\"}}",
        "{\"type\":\"session_info_changed\",\"name\":\"x\"}",
        "{\"type\":\"thinking_level_changed\",\"level\":\"off\"}",
        "{\"type\":\"message_start\",\"message\":{\"role\":\"system\",\"content\":\"\"}}",
        "{\"type\":\"message_end\",\"message\":{\"role\":\"system\",\"content\":\"\"}}",
        SETTLED,
        "{\"type\":\"no_such_event\"}",
        NULL};
    char *got = ends_of(lines);
    assert_string_equal(got, "end completed -\nwarning unknown_method\n");
    free(got);
}

/* The kind of pi's error texts: a port in the address is no HTTP status. */
static void test_error_kinds(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"Connection error.: connect ECONNREFUSED 127.0.0.1:40123", "network_error"},
        {"Connection error.: connect ECONNREFUSED 127.0.0.1:14290", "network_error"},
        {"401 Unauthorized", "auth_required"},
        {"403: {\\\"message\\\":\\\"no\\\"}", "auth_required"},
        {"429 Too Many Requests", "rate_limited"},
        {"500 model 4010 failed", "model_error"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        char *end =
            bt_xasprintf("{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\","
                         "\"content\":[],\"stopReason\":\"error\",\"errorMessage\":\"%s\"}}",
                         cases[i][0]);
        const char *lines[] = {PROMPT_STARTED, end, AGENT_END, SETTLED, NULL};
        char *got = ends_of(lines);
        char *want = bt_xasprintf("end failed %s\n", cases[i][1]);
        assert_string_equal(got, want);
        free(want);
        free(got);
        free(end);
    }
}

/* pi 1.x started by Node 20: what its stderr said. */
static void test_diagnose_old_node(void **state)
{
    (void)state;
    const char *tail = "file:///x/dist/bundle/cli.js:2\n"
                       "import { createRequire, enableCompileCache } from \"node:module\";\n\n"
                       "SyntaxError: The requested module 'node:module' does not provide an "
                       "export named 'enableCompileCache'\n"
                       "    at ModuleJob._instantiate\n\nNode.js v20.20.2\n";
    const struct bt_parser_ops *ops = bt_coder_find("pi")->parser;
    void *p = ops->create();
    enum bt_error_kind kind = BT_ERROR_KIND_NONE;
    struct bt_buf msg = BT_BUF_INIT;
    ops->diagnose(p, tail, strlen(tail), 1, 0, &kind, &msg);
    assert_int_equal(kind, BT_ERROR_KIND_NOT_INSTALLED);
    assert_string_equal(msg.data, "pi could not start under Node.js v20.20.2: pi 1.x needs "
                                  "Node.js 22.19 or newer");
    bt_buf_release(&msg);
    ops->destroy(p);
}

/* A steer: the steer command with the next id; pi's success says only
 * that it queued it, its user message_end (after the prompt's) that it
 * took it in; an error answer refuses it. */
static void test_steer(void **state)
{
    (void)state;
    struct bt_test_rig r;
    bt_test_rig_init(&r, "pi", BT_APPROVAL_DENY, NULL);
    bt_test_rig_start(&r);
    struct bt_buf out = BT_BUF_INIT;
    assert_int_equal(r.coder->runner->steer(r.runner, 5, "go left", &out, &r.sink),
                     BT_RUNNER_STEER_CONFIRM);
    assert_string_equal(out.data, "{\"id\":\"100\",\"type\":\"steer\",\"message\":\"go left\"}\n");
    bt_test_rig_line(&r, "{\"type\":\"response\",\"id\":\"100\",\"command\":\"steer\","
                         "\"success\":true}");
    assert_int_equal(r.steer_signals, 0);
    bt_test_rig_line(&r, "{\"type\":\"message_end\",\"message\":{\"role\":\"user\",\"content\":"
                         "[{\"type\":\"text\",\"text\":\"go \"},{\"type\":\"image\"},"
                         "{\"type\":\"text\",\"text\":\"left\"}]}}");
    assert_int_equal(r.user_texts, 1);
    assert_string_equal(r.user_text, "go left");
    bt_test_rig_line(&r, "{\"type\":\"message_start\",\"message\":{\"role\":\"user\",\"content\":"
                         "\"x\"}}");
    assert_int_equal(r.user_texts, 1); /* the start is not the take */
    bt_buf_reset(&out);
    assert_int_equal(r.coder->runner->steer(r.runner, 6, "no", &out, &r.sink), 0);
    assert_non_null(strstr(out.data, "\"id\":\"101\""));
    bt_test_rig_line(&r, "{\"type\":\"response\",\"id\":\"101\",\"command\":\"steer\","
                         "\"success\":false,\"error\":\"Extension commands cannot be queued\"}");
    assert_int_equal(r.steer_signals, 1);
    assert_int_equal(r.steer_key, 6);
    assert_int_equal(r.steer_taken, 0);
    assert_int_equal(r.coder->runner->interrupt(r.runner, &out), 0);
    bt_buf_reset(&out);
    assert_int_equal(r.coder->runner->steer(r.runner, 7, "late", &out, &r.sink), -EAGAIN);
    assert_int_equal(out.len, 0);
    bt_buf_release(&out);
    bt_test_rig_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jscan_walk_and_decode),
        cmocka_unit_test(test_steer),
        cmocka_unit_test(test_jscan_refuses_malformed),
        cmocka_unit_test(test_jscan_deep_nesting_refused),
        cmocka_unit_test(test_large_answer_text),
        cmocka_unit_test(test_large_answer_text_1x),
        cmocka_unit_test(test_end_0x_failure_tentative),
        cmocka_unit_test(test_end_1x_at_settled),
        cmocka_unit_test(test_end_settled_without_disposition),
        cmocka_unit_test(test_end_1x_handled_and_known_events),
        cmocka_unit_test(test_error_kinds),
        cmocka_unit_test(test_diagnose_old_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
