/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pi read side: jscan (the allocation-free JSON walker
 * under the message_update fast path) and the recorded 200 KB answer of
 * pi 0.73.1 (42 MB of stdout, gzip-compressed in fixtures/pi/0.73.1/),
 * which must parse into exactly the text pi itself produced.
 */
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

static void test_large_answer_text(void **state)
{
    (void)state;
    gzFile gz = gzopen(BT_SOURCE_DIR "/fixtures/pi/0.73.1/large.jsonl.gz", "rb");
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
    assert_true(total > (size_t)40 * 1000 * 1000); /* tens of MB of stdout */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jscan_walk_and_decode),
        cmocka_unit_test(test_jscan_refuses_malformed),
        cmocka_unit_test(test_jscan_deep_nesting_refused),
        cmocka_unit_test(test_large_answer_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
