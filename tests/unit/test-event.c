/* SPDX-License-Identifier: MIT */
/* Unit tests of the event encoding and the JSON/UTF-8 helpers under it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "event.h"

static char *quote(const char *s, size_t n)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_json_quote(&b, s, n);
    return bt_buf_detach(&b, NULL);
}

static void test_quote_escapes(void **state)
{
    (void)state;
    char *q = quote("a\"b\\c\n\t\x01", 8);
    assert_string_equal(q, "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    free(q);
}

static void test_quote_separators_and_bad_utf8(void **state)
{
    (void)state;
    /* U+2028, U+2029 escaped; a lone continuation byte, a truncated sequence
     * and an overlong encoding each become U+FFFD; valid 4-byte kept. */
    const char in[] = "x\xe2\x80\xa8y\xe2\x80\xa9z\x80w\xe2\x82 \xc0\xaf \xf0\x9f\x98\x80";
    char *q = quote(in, sizeof(in) - 1);
    assert_string_equal(q, "\"x\\u2028y\\u2029z\\ufffdw\\ufffd\\ufffd \\ufffd\\ufffd "
                           "\xf0\x9f\x98\x80\"");
    cJSON *j = cJSON_Parse(q);
    assert_non_null(j);
    cJSON_Delete(j);
    free(q);
}

static void test_quote_nul_byte(void **state)
{
    (void)state;
    char *q = quote("a\0b", 3);
    assert_string_equal(q, "\"a\\u0000b\"");
    free(q);
}

static void test_sanitize(void **state)
{
    (void)state;
    size_t bad;
    char *s = bt_utf8_sanitize("ok\xff\xfe!", 5, &bad);
    assert_string_equal(s, "ok\xef\xbf\xbd\xef\xbf\xbd!");
    assert_int_equal(bad, 2);
    free(s);
}

static void test_utf8_cut(void **state)
{
    (void)state;
    const char s[] = "ab\xc3\xa9"; /* "abé" */
    assert_int_equal(bt_utf8_cut(s, 4, 3), 2);
    assert_int_equal(bt_utf8_cut(s, 4, 4), 4);
    assert_int_equal(bt_utf8_cut(s, 4, 2), 2);
}

static char *encode_text(const struct bt_event *ev)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_event_to_json(ev, &b);
    return bt_buf_detach(&b, NULL);
}

static cJSON *encode(const struct bt_event *ev)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_event_to_json(ev, &b);
    assert_true(b.len > 0);
    assert_int_equal(b.data[b.len - 1], '\n');
    assert_null(memchr(b.data, '\n', b.len - 1));
    cJSON *j = cJSON_Parse(b.data);
    assert_non_null(j);
    bt_buf_release(&b);
    return j;
}

static void test_envelope_and_delta(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
    ev.seq = 7;
    ev.run = "r1";
    ev.conversation = "c1";
    ev.ts_ms = 1764417600123LL; /* 2025-11-29T12:00:00.123Z */
    ev.item.id = "msg_1";
    ev.item.kind = BT_ITEM_MESSAGE;
    ev.delta = "hi\nthere";
    ev.delta_len = 8;
    cJSON *j = encode(&ev);
    assert_string_equal(cJSON_GetObjectItem(j, "type")->valuestring, "item.delta");
    assert_int_equal(cJSON_GetObjectItem(j, "seq")->valueint, 7);
    assert_string_equal(cJSON_GetObjectItem(j, "ts")->valuestring, "2025-11-29T12:00:00.123Z");
    assert_string_equal(cJSON_GetObjectItem(j, "text")->valuestring, "hi\nthere");
    cJSON *item = cJSON_GetObjectItem(j, "item");
    assert_string_equal(cJSON_GetObjectItem(item, "kind")->valuestring, "message");
    cJSON_Delete(j);
}

static void test_unknown_numbers_are_null(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage.input_tokens = 12;
    cJSON *j = encode(&ev);
    assert_int_equal(cJSON_GetObjectItem(j, "input_tokens")->valueint, 12);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "output_tokens")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cost_usd")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "run")));
    cJSON_Delete(j);
}

/* A cost a coder reported as 1e999 (inf) or a NaN is not a number JSON can
 * hold: it is unknown, and the line stays parseable. */
static void test_cost_not_finite_is_null(void **state)
{
    (void)state;
    const double bad[] = {HUGE_VAL, -HUGE_VAL, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_USAGE);
        ev.usage.cost_usd = bad[i];
        cJSON *j = encode(&ev); /* fails on invalid JSON */
        assert_non_null(j);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "cost_usd")));
        cJSON_Delete(j);
    }
}

static void test_turn_completed(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    ev.status = BT_TURN_FAILED;
    ev.kind = "stalled";
    ev.message = "codex produced no output";
    ev.final_text = "partial";
    ev.duration_ms = 1500;
    ev.exit_signal = 9;
    char *text = encode_text(&ev);
    assert_non_null(strstr(text, ",\"usage\":{\"input_tokens\":null,"));
    free(text);
    cJSON *j = encode(&ev);
    assert_string_equal(cJSON_GetObjectItem(j, "status")->valuestring, "failed");
    assert_string_equal(cJSON_GetObjectItem(j, "error_kind")->valuestring, "stalled");
    assert_string_equal(cJSON_GetObjectItem(j, "final_text")->valuestring, "partial");
    cJSON *exit = cJSON_GetObjectItem(j, "exit");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(exit, "code")));
    assert_int_equal(cJSON_GetObjectItem(exit, "signal")->valueint, 9);
    assert_non_null(cJSON_GetObjectItem(j, "usage"));
    cJSON_Delete(j);
}

static void test_every_type_encodes(void **state)
{
    (void)state;
    for (int t = 0; t < BT_EVENT__COUNT; t++) {
        struct bt_event ev;
        bt_event_init(&ev, (enum bt_event_type)t);
        cJSON *j = encode(&ev);
        assert_string_equal(cJSON_GetObjectItem(j, "type")->valuestring,
                            bt_event_type_name((enum bt_event_type)t));
        assert_int_equal(bt_event_type_parse(bt_event_type_name((enum bt_event_type)t)), t);
        cJSON_Delete(j);
    }
    assert_int_equal(bt_event_type_parse("nope"), -1);
}

static void test_item_detail_and_exit(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
    ev.item.id = "c1";
    ev.item.kind = BT_ITEM_COMMAND;
    ev.item.command = "echo hi";
    ev.item.text = "hi\n";
    ev.item.text_len = 3;
    ev.item.exit_code = 0;
    ev.item.status = "completed";
    ev.item.detail_json = "{\"x\":[1,2]}";
    cJSON *j = encode(&ev);
    cJSON *item = cJSON_GetObjectItem(j, "item");
    assert_int_equal(cJSON_GetObjectItem(item, "exit_code")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(item, "command")->valuestring, "echo hi");
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(item, "detail"), "x"));
    cJSON_Delete(j);
}

/* {"q": [[...]]} nested depth levels deep in all, with "[[[" and "}}}"
 * inside a string (they do not count). Caller frees. */
static char *nested(int depth)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "{\"s\":\"[[[}}}\\\"[\",\"q\":");
    for (int i = 1; i < depth; i++)
        bt_buf_addc(&b, '[');
    for (int i = 1; i < depth; i++)
        bt_buf_addc(&b, ']');
    bt_buf_addc(&b, '}');
    return b.data;
}

/* An item's detail that nests deeper than BT_EVENT_DETAIL_DEPTH_MAX is
 * left out: a tool's input 999 deep (cJSON reads it) made a line 1002
 * deep that no reader of events could parse, and `baton run --json`
 * dropped the event. Up to the bound it is kept, and reads back. */
static void test_detail_too_deep(void **state)
{
    (void)state;
    for (int depth = BT_EVENT_DETAIL_DEPTH_MAX; depth <= 999;
         depth += 999 - BT_EVENT_DETAIL_DEPTH_MAX) {
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_ITEM_STARTED);
        ev.item.id = "t1";
        ev.item.kind = BT_ITEM_TOOL_CALL;
        char *detail = nested(depth);
        ev.item.detail_json = detail;
        struct bt_buf line = BT_BUF_INIT;
        bt_event_to_json(&ev, &line);
        struct bt_event back;
        struct bt_event_doc *doc = NULL;
        assert_int_equal(bt_event_parse(line.data, line.len, &back, &doc), 0);
        assert_string_equal(back.item.id, "t1");
        if (depth <= BT_EVENT_DETAIL_DEPTH_MAX) {
            assert_non_null(back.item.detail_json);
            assert_non_null(strstr(back.item.detail_json, "[[[}}}"));
        } else {
            assert_null(back.item.detail_json);
        }
        bt_event_doc_free(doc);
        bt_buf_release(&line);
        free(detail);
    }
}

/* A question's list goes out as given, with U+2028 and U+2029 escaped as
 * in every other string (cJSON writes them raw), other characters
 * (an em dash shares their first two bytes) untouched; only
 * approval.requested carries it, and it parses back to the same bytes. */
static void test_questions(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_APPROVAL_REQUESTED);
    ev.approval_kind = "user_input";
    ev.summary = "Which?";
    ev.questions_json = "[{\"text\":\"a\xe2\x80\xa8"
                        "b\xe2\x80\x94"
                        "c\xe2\x80\xa9\",\"options\":"
                        "[{\"label\":\"x\"}]}]";
    struct bt_buf b = BT_BUF_INIT;
    bt_event_to_json(&ev, &b);
    assert_non_null(strstr(b.data, ",\"questions\":[{\"text\":\"a\\u2028b\xe2\x80\x94"
                                   "c\\u2029\","
                                   "\"options\":[{\"label\":\"x\"}]}]}"));
    struct bt_event back;
    struct bt_event_doc *doc;
    assert_int_equal(bt_event_parse(b.data, b.len, &back, &doc), 0);
    struct bt_buf again = BT_BUF_INIT;
    bt_event_to_json(&back, &again);
    assert_string_equal(again.data, b.data);
    bt_event_doc_free(doc);
    bt_buf_release(&again);
    bt_buf_reset(&b);
    ev.type = BT_EVENT_APPROVAL_RESOLVED;
    ev.decision = "decline";
    ev.by = "policy";
    bt_event_to_json(&ev, &b);
    assert_null(strstr(b.data, "questions"));
    bt_buf_release(&b);
}

/* The first invalid UTF-8 byte is found wherever it lies against the
 * eight-byte ASCII steps: every offset and length up to 40, with a bad
 * lead, a lone continuation, a cut sequence and a valid 2-, 3- and 4-byte
 * character in place. */
static void test_utf8_invalid_at_every_offset(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len, bad; /* bad: offset of the first invalid byte in bytes, or len */
    } pieces[] = {
        {"\xff", 1, 0},     {"\x80", 1, 0},         {"\xe2\x82", 2, 0},
        {"\xc3\xa9", 2, 2}, {"\xe2\x82\xac", 3, 3}, {"\xf0\x9f\x98\x80", 4, 4},
    };
    char buf[64];
    for (size_t p = 0; p < BT_ARRAY_SIZE(pieces); p++) {
        for (size_t at = 0; at <= 40; at++) {
            for (size_t tail = 0; tail <= 9; tail++) {
                size_t n = at + pieces[p].len + tail;
                memset(buf, 'a', sizeof buf);
                memcpy(buf + at, pieces[p].bytes, pieces[p].len);
                size_t want = pieces[p].bad == pieces[p].len ? n : at + pieces[p].bad;
                /* a cut sequence at the very end is invalid where it starts */
                assert_int_equal(bt_utf8_invalid_at(buf, n), want);
            }
        }
    }
    assert_int_equal(bt_utf8_invalid_at("", 0), 0);
}

/* The request id an event shows is valid UTF-8 cut on a character
 * boundary, so what is shown once reads back the same (a fuzz find: an id
 * of invalid bytes grew threefold as U+FFFD and was cut elsewhere). */
static void test_request_id_shown(void **state)
{
    (void)state;
    char buf[BT_EVENT_REQUEST_ID_MAX], again[BT_EVENT_REQUEST_ID_MAX];
    assert_string_equal(bt_event_request_id("\"toolu_1\"", buf, sizeof buf), "toolu_1");
    assert_string_equal(bt_event_request_id("7", buf, sizeof buf), "7");
    assert_string_equal(bt_event_request_id("\"a\xff\"", buf, sizeof buf), "a\xef\xbf\xbd");
    char id[600] = "\"a";
    memset(id + 2, 0xff, 400);
    memcpy(id + 402, "\"", 2); /* the closing quote and NUL */
    bt_event_request_id(id, buf, sizeof buf);
    assert_int_equal(bt_utf8_invalid_at(buf, strlen(buf)), strlen(buf));
    assert_int_equal(strlen(buf), 1 + 3 * 86); /* 'a' and whole U+FFFD only */
    assert_string_equal(bt_event_request_id(buf, again, sizeof again), buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_invalid_at_every_offset),
        cmocka_unit_test(test_quote_escapes),
        cmocka_unit_test(test_quote_separators_and_bad_utf8),
        cmocka_unit_test(test_quote_nul_byte),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_envelope_and_delta),
        cmocka_unit_test(test_unknown_numbers_are_null),
        cmocka_unit_test(test_cost_not_finite_is_null),
        cmocka_unit_test(test_turn_completed),
        cmocka_unit_test(test_every_type_encodes),
        cmocka_unit_test(test_item_detail_and_exit),
        cmocka_unit_test(test_detail_too_deep),
        cmocka_unit_test(test_questions),
        cmocka_unit_test(test_request_id_shown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
