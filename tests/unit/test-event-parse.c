/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of bt_event_parse, the reverse of bt_event_to_json: every
 * recorded event line under fixtures/ and a set of built events covering
 * every type and field must parse and encode back to the same bytes; NUL
 * bytes keep their length; bad input is an error, never a crash or a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>

#include "error.h"
#include "event.h"

static char *encode(const struct bt_event *ev, size_t *len)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_event_to_json(ev, &b);
    return bt_buf_detach(&b, len);
}

/* json[0..len) (no newline) parses and encodes back to json + "\n"; so does
 * the line with its newline. */
static void assert_round_trip(const char *json, size_t len, const char *where)
{
    for (int with_lf = 0; with_lf < 2; with_lf++) {
        struct bt_event ev;
        struct bt_event_doc *doc = NULL;
        char *in = bt_xmalloc(len + 1);
        memcpy(in, json, len);
        in[len] = '\n'; /* read only when with_lf */
        int rc = bt_event_parse(in, len + (size_t)with_lf, &ev, &doc);
        if (rc != 0)
            fail_msg("%s: parse failed (%s): %.*s", where, bt_err_name(rc), (int)len, json);
        free(in); /* the event must not point into the input */
        size_t n;
        char *out = encode(&ev, &n);
        if (n != len + 1 || memcmp(out, json, len) != 0 || out[len] != '\n')
            fail_msg("%s: round trip differs\n   in: %.*s\n  out: %s", where, (int)len, json, out);
        free(out);
        bt_event_doc_free(doc);
    }
}

/* --- the recorded fixtures ---------------------------------------------- */

struct walk {
    size_t files, lines;
    size_t per_type[BT_EVENT__COUNT];
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void round_trip_file(const char *path, struct walk *w)
{
    size_t len;
    char *data = bt_read_file(path, &len);
    assert_non_null(data);
    w->files++;
    size_t at = 0, lineno = 0;
    while (at < len) {
        const char *line = data + at;
        const char *lf = memchr(line, '\n', len - at);
        size_t n = lf ? (size_t)(lf - line) : len - at;
        at += n + (lf ? 1 : 0);
        lineno++;
        if (line[0] == '\n' || line[0] == '#') /* empty; golden's parser signals */
            continue;
        char *where = bt_xasprintf("%s:%zu", path, lineno);
        assert_round_trip(line, n, where);
        free(where);
        struct bt_event ev;
        struct bt_event_doc *doc;
        assert_int_equal(bt_event_parse(line, n, &ev, &doc), 0);
        w->per_type[ev.type]++;
        bt_event_doc_free(doc);
        w->lines++;
    }
    free(data);
}

static void walk_dir(const char *dir, struct walk *w)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = bt_xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (S_ISDIR(st.st_mode))
            walk_dir(path, w);
        else if (ends_with(e->d_name, ".events.jsonl"))
            round_trip_file(path, w);
        free(path);
    }
    closedir(d);
}

static void test_fixtures_round_trip(void **state)
{
    (void)state;
    static const char *const coders[] = {"codex", "pi"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(coders); i++) {
        struct walk w = {0};
        char *dir = bt_xasprintf("%s/fixtures/%s", BT_SOURCE_DIR, coders[i]);
        walk_dir(dir, &w);
        free(dir);
        print_message("%s: %zu files, %zu events round-trip\n", coders[i], w.files, w.lines);
        assert_true(w.files >= 10);
        assert_true(w.lines >= 100);
        assert_true(w.per_type[BT_EVENT_ITEM_DELTA] > 0);
        assert_true(w.per_type[BT_EVENT_USAGE] > 0);
    }
}

/* --- built events --------------------------------------------------------- */

static const char nul_text[] = "out\0put \"q\" \\ \x01\t\n\xe2\x80\xa8 \xc3\xa9 \xf0\x9f\x98\x80";
#define NUL_TEXT_LEN (sizeof(nul_text) - 1)

static void envelope(struct bt_event *ev, int64_t seq, int64_t ts)
{
    ev->seq = seq;
    ev->run = "0mx1ub6y-run";
    ev->conversation = "0mx1ub6y";
    ev->ts_ms = ts;
}

/* Encode ev, parse it, check the fields that matter most, encode again:
 * the same bytes. */
static void assert_event_round_trip(const struct bt_event *ev)
{
    size_t n;
    char *json = encode(ev, &n);
    struct bt_event back;
    struct bt_event_doc *doc;
    int rc = bt_event_parse(json, n, &back, &doc);
    if (rc != 0)
        fail_msg("parse failed (%s): %s", bt_err_name(rc), json);
    assert_int_equal(back.type, ev->type);
    assert_int_equal(back.seq, ev->seq);
    assert_int_equal(back.ts_ms, ev->ts_ms);
    if (ev->type == BT_EVENT_ITEM_STARTED || ev->type == BT_EVENT_ITEM_COMPLETED) {
        assert_int_equal(back.item.kind, ev->item.kind);
        assert_int_equal(back.item.text_len, ev->item.text ? ev->item.text_len : 0);
        if (ev->item.text)
            assert_memory_equal(back.item.text, ev->item.text, ev->item.text_len);
    }
    if (ev->type >= BT_EVENT_ITEM_STARTED && ev->type <= BT_EVENT_ITEM_COMPLETED) {
        /* a sub-agent's tag on every item event, the phase on whole ones */
        if (ev->item.subagent)
            assert_string_equal(back.item.subagent, ev->item.subagent);
        else
            assert_null(back.item.subagent);
        if (ev->item.phase && ev->type != BT_EVENT_ITEM_DELTA)
            assert_string_equal(back.item.phase, ev->item.phase);
        else
            assert_null(back.item.phase);
    }
    if (ev->type == BT_EVENT_ITEM_DELTA && ev->delta) {
        assert_int_equal(back.delta_len, ev->delta_len);
        assert_memory_equal(back.delta, ev->delta, ev->delta_len);
    }
    if (ev->type == BT_EVENT_WARNING && ev->raw) {
        assert_int_equal(back.raw_len, ev->raw_len);
        assert_memory_equal(back.raw, ev->raw, ev->raw_len);
    }
    if (ev->type == BT_EVENT_TURN_STEERED) {
        assert_string_equal(back.steer_text, ev->steer_text ? ev->steer_text : "");
        assert_int_equal(back.control, ev->control);
    }
    if (ev->type == BT_EVENT_TURN_COMPLETED) {
        assert_int_equal(back.status, ev->status);
        assert_int_equal(back.exit_code, ev->exit_code);
        assert_int_equal(back.exit_signal, ev->exit_signal);
        assert_int_equal(back.duration_ms, ev->duration_ms);
    }
    size_t n2;
    char *again = encode(&back, &n2);
    if (n2 != n || memcmp(again, json, n) != 0)
        fail_msg("round trip differs\n   in: %s  out: %s", json, again);
    free(again);
    free(json);
    bt_event_doc_free(doc);
}

static void test_every_type_round_trip(void **state)
{
    (void)state;
    /* every type with nothing set, and with the envelope set */
    for (int t = 0; t < BT_EVENT__COUNT; t++) {
        struct bt_event ev;
        bt_event_init(&ev, (enum bt_event_type)t);
        assert_event_round_trip(&ev);
        envelope(&ev, t + 1, 1764417600123LL);
        assert_event_round_trip(&ev);
        ev.seq = BT_UNKNOWN;
        ev.run = ev.conversation = NULL;
        assert_event_round_trip(&ev);
    }
}

static void test_turn_and_session_round_trip(void **state)
{
    (void)state;
    struct bt_event ev;
    /* a steer, with and without its control, its text any UTF-8 */
    bt_event_init(&ev, BT_EVENT_TURN_STEERED);
    envelope(&ev, 9, 1764417600125LL);
    ev.steer_text = "go \"left\"\n\xc3\xa9 instead";
    assert_event_round_trip(&ev);
    ev.control = 12;
    assert_event_round_trip(&ev);

    bt_event_init(&ev, BT_EVENT_TURN_STARTED);
    envelope(&ev, 1, 1764417600123LL);
    ev.coder = "codex";
    ev.coder_version = "0.171.0";
    ev.cwd = "/tmp/a dir/\xc3\xa9";
    ev.native_session_id = "019a-session";
    ev.resumed = 1;
    assert_event_round_trip(&ev);
    ev.model = "gpt-5.5";
    ev.resumed = 0;
    assert_event_round_trip(&ev);

    bt_event_init(&ev, BT_EVENT_SESSION_STARTED);
    envelope(&ev, 2, 1764417600124LL);
    ev.native_session_id = "s1";
    assert_event_round_trip(&ev);
    ev.native_session_path = "/root/.pi/sessions/s1.jsonl";
    ev.resumed = 1;
    assert_event_round_trip(&ev);

    static const enum bt_turn_status statuses[] = {BT_TURN_COMPLETED, BT_TURN_FAILED,
                                                   BT_TURN_CANCELLED, BT_TURN_INTERRUPTED};
    for (size_t i = 0; i < BT_ARRAY_SIZE(statuses); i++) {
        bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
        envelope(&ev, 40, 1764417612345LL);
        ev.status = statuses[i];
        ev.final_text = "Hello!\n\nSecond \"message\"";
        ev.duration_ms = 412;
        ev.exit_code = 0;
        assert_event_round_trip(&ev);
        ev.kind = "stalled";
        ev.message = "codex produced no output for 600 s";
        ev.exit_code = BT_UNKNOWN;
        ev.exit_signal = 9;
        ev.duration_ms = BT_UNKNOWN;
        ev.usage.input_tokens = 3696;
        ev.usage.cached_input_tokens = 0;
        ev.usage.output_tokens = 9;
        ev.usage.reasoning_tokens = 1;
        ev.usage.context_tokens = 3705;
        ev.usage.context_window = 272000;
        ev.usage.cost_usd = 0.012345;
        assert_event_round_trip(&ev);
        ev.exit_code = 2;
        ev.exit_signal = BT_UNKNOWN;
        ev.usage.cost_usd = 0;
        assert_event_round_trip(&ev);
    }
}

static void test_items_round_trip(void **state)
{
    (void)state;
    struct bt_event ev;
    for (int k = 0; k < BT_ITEM__COUNT; k++) {
        for (int t = BT_EVENT_ITEM_STARTED; t <= BT_EVENT_ITEM_COMPLETED; t++) {
            bt_event_init(&ev, (enum bt_event_type)t);
            envelope(&ev, 3, 1764417600200LL);
            ev.item.id = "call_1_0";
            ev.item.kind = (enum bt_item_kind)k;
            ev.item.status = t == BT_EVENT_ITEM_STARTED ? "in_progress" : "failed";
            ev.item.text = nul_text;
            ev.item.text_len = NUL_TEXT_LEN;
            ev.item.command = "/bin/bash -lc 'echo \"hi\"'";
            ev.item.cwd = "/work";
            ev.item.exit_code = k == BT_ITEM_COMMAND ? 127 : BT_UNKNOWN;
            ev.item.name = "web \xe2\x80\xa9 query";
            ev.item.detail_json = "{\"changes\":[{\"path\":\"/a\",\"kind\":{\"type\":\"add\"},"
                                  "\"diff\":\"x\\n\\u0001\\t\\\"\\\\ \xc3\xa9\"}],\"n\":[1,2.5,"
                                  "-3,1e+300,null,true,false],\"o\":{}}";
            ev.item.changes_json = "[{\"path\":\"a \xc3\xa9\",\"kind\":\"update\",\"move_to\":"
                                   "\"b\",\"diff\":\"@@ -1 +1 @@\\n-x\\n+y\\n\"},{\"path\":\"/c\","
                                   "\"kind\":\"add\",\"new_text\":\"\\t\\\"\"}]";
            ev.delta = nul_text;
            ev.delta_len = NUL_TEXT_LEN;
            assert_event_round_trip(&ev);
            ev.item.subagent = "019a-thread \"child\"";
            ev.item.phase = "commentary";
            assert_event_round_trip(&ev);
            ev.item.subagent = NULL;
            ev.item.phase = NULL;
            ev.item.text = "";
            ev.item.text_len = 0;
            ev.delta = "";
            ev.delta_len = 0;
            ev.item.exit_code = 0;
            ev.item.detail_json = NULL;
            ev.item.changes_json = NULL;
            assert_event_round_trip(&ev);
        }
    }
}

static void test_approval_usage_warning_round_trip(void **state)
{
    (void)state;
    struct bt_event ev;
    for (int t = BT_EVENT_APPROVAL_REQUESTED; t <= BT_EVENT_APPROVAL_RESOLVED; t++) {
        bt_event_init(&ev, (enum bt_event_type)t);
        envelope(&ev, 5, 1764417600300LL);
        assert_event_round_trip(&ev);
        ev.approval_kind = "command";
        ev.summary = "/bin/bash -lc 'rm -rf build'";
        ev.item.id = "call_2";
        ev.decision = "decline";
        ev.by = "policy";
        assert_event_round_trip(&ev);
    }

    bt_event_init(&ev, BT_EVENT_USAGE);
    envelope(&ev, 6, 1764417600400LL);
    ev.usage.input_tokens = 0;
    ev.usage.output_tokens = 9007199254740991LL; /* 2^53 - 1: the largest exact */
    ev.usage.context_window = -9007199254740991LL;
    ev.usage.cost_usd = 123456.654321;
    assert_event_round_trip(&ev);
    ev.usage.cost_usd = 1e300;
    assert_event_round_trip(&ev);
    /* integers from 2^53 on come from the text, exactly: saturated sums */
    ev.usage.input_tokens = INT64_MAX;
    ev.usage.cached_input_tokens = 9007199254740992LL;
    ev.usage.output_tokens = 9007199254740993LL;
    ev.usage.reasoning_tokens = INT64_MIN;
    ev.usage.context_tokens = -9007199254740993LL;
    ev.seq = INT64_MAX - 1;
    assert_event_round_trip(&ev);
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    envelope(&ev, 9007199254740995LL, 1764417600401LL);
    ev.usage.input_tokens = INT64_MAX;
    ev.usage.output_tokens = 12345678901234567LL;
    ev.duration_ms = 9007199254740999LL;
    ev.exit_code = INT64_MIN;
    ev.exit_signal = INT64_MAX;
    assert_event_round_trip(&ev);
    bt_event_init(&ev, BT_EVENT_ITEM_COMPLETED);
    envelope(&ev, 8, 1764417600402LL);
    ev.item.id = "c";
    ev.item.kind = BT_ITEM_COMMAND;
    ev.item.exit_code = -9007199254740995LL;
    assert_event_round_trip(&ev);

    for (int t = BT_EVENT_WARNING; t <= BT_EVENT_ERROR; t++) {
        bt_event_init(&ev, (enum bt_event_type)t);
        envelope(&ev, 7, 1764417600500LL);
        assert_event_round_trip(&ev);
        ev.kind = "invalid_text";
        ev.message = "a line held NUL bytes";
        ev.raw = nul_text;
        ev.raw_len = NUL_TEXT_LEN;
        assert_event_round_trip(&ev);
        ev.raw = "";
        ev.raw_len = 0;
        assert_event_round_trip(&ev);
    }
}

static void test_timestamps(void **state)
{
    (void)state;
    static const int64_t ts[] = {
        0,                 /* 1970-01-01T00:00:00.000Z */
        951782400000LL,    /* 2000-02-29 */
        1709251199999LL,   /* 2024-02-29T23:59:59.999Z */
        4107542400001LL,   /* 2100-03-01: 2100 is no leap year */
        253402300799999LL, /* 9999-12-31T23:59:59.999Z */
        1764417600123LL,   /* 2025-11-29T12:00:00.123Z */
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(ts); i++) {
        struct bt_event ev;
        bt_event_init(&ev, BT_EVENT_USAGE);
        envelope(&ev, 1, ts[i]);
        assert_event_round_trip(&ev);
    }
}

/* --- fields of a hand-written line ---------------------------------------- */

static void test_fields(void **state)
{
    (void)state;
    static const char line[] =
        " {\"type\":\"item.completed\",\"seq\":4,\"run\":\"r\",\"conversation\":null,"
        "\"ts\":\"2025-11-29T12:00:00.123Z\",\"future\":[1,{\"a\":2}],"
        "\"item\":{\"id\":\"c1\",\"kind\":\"command\",\"status\":\"completed\",\"text\":\"hi\\n\","
        "\"command\":\"echo hi\",\"cwd\":\"/w\",\"exit_code\":0,\"name\":null,"
        "\"detail\":{ \"x\" : [1, 2] }}}\r\n";
    struct bt_event ev;
    struct bt_event_doc *doc;
    assert_int_equal(bt_event_parse(line, sizeof(line) - 1, &ev, &doc), 0);
    assert_int_equal(ev.type, BT_EVENT_ITEM_COMPLETED);
    assert_int_equal(ev.seq, 4);
    assert_string_equal(ev.run, "r");
    assert_null(ev.conversation);
    assert_int_equal(ev.ts_ms, 1764417600123LL);
    assert_string_equal(ev.item.id, "c1");
    assert_int_equal(ev.item.kind, BT_ITEM_COMMAND);
    assert_string_equal(ev.item.status, "completed");
    assert_int_equal(ev.item.text_len, 3);
    assert_string_equal(ev.item.text, "hi\n");
    assert_string_equal(ev.item.command, "echo hi");
    assert_string_equal(ev.item.cwd, "/w");
    assert_int_equal(ev.item.exit_code, 0);
    assert_null(ev.item.name);
    assert_string_equal(ev.item.detail_json, "{\"x\":[1,2]}");
    bt_event_doc_free(doc);

    static const char done[] =
        "{\"type\":\"turn.completed\",\"status\":\"cancelled\",\"final_text\":\"\","
        "\"usage\":{\"input_tokens\":null,\"output_tokens\":5,\"cost_usd\":null},"
        "\"duration_ms\":null,\"exit\":{\"code\":null,\"signal\":15}}";
    assert_int_equal(bt_event_parse(done, sizeof(done) - 1, &ev, &doc), 0);
    assert_int_equal(ev.status, BT_TURN_CANCELLED);
    assert_null(ev.kind);
    assert_null(ev.message);
    assert_string_equal(ev.final_text, "");
    assert_int_equal(ev.usage.input_tokens, BT_UNKNOWN);
    assert_int_equal(ev.usage.output_tokens, 5);
    assert_int_equal(ev.usage.context_window, BT_UNKNOWN);
    assert_true(ev.usage.cost_usd < 0);
    assert_int_equal(ev.duration_ms, BT_UNKNOWN);
    assert_int_equal(ev.exit_code, BT_UNKNOWN);
    assert_int_equal(ev.exit_signal, 15);
    assert_int_equal(ev.ts_ms, 0);
    bt_event_doc_free(doc);

    /* an unknown item kind is other; an unknown or missing turn status is
     * failed, never completed */
    static const char odd[] =
        "{\"type\":\"item.started\",\"item\":{\"id\":\"\",\"kind\":\"hologram\"}}";
    assert_int_equal(bt_event_parse(odd, sizeof(odd) - 1, &ev, &doc), 0);
    assert_int_equal(ev.item.kind, BT_ITEM_OTHER);
    assert_string_equal(ev.item.id, "");
    bt_event_doc_free(doc);
    static const char *const statuses[] = {
        "{\"type\":\"turn.completed\",\"status\":\"exploded\"}",
        "{\"type\":\"turn.completed\",\"status\":null}",
        "{\"type\":\"turn.completed\"}",
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(statuses); i++) {
        assert_int_equal(bt_event_parse(statuses[i], strlen(statuses[i]), &ev, &doc), 0);
        assert_int_equal(ev.status, BT_TURN_FAILED);
        bt_event_doc_free(doc);
    }

    /* approval: kind is the approval kind, item_id the item */
    static const char appr[] =
        "{\"type\":\"approval.resolved\",\"kind\":\"file_change\",\"summary\":\"/a\","
        "\"item_id\":\"i9\",\"decision\":\"accept\",\"by\":\"policy\"}";
    assert_int_equal(bt_event_parse(appr, sizeof(appr) - 1, &ev, &doc), 0);
    assert_string_equal(ev.approval_kind, "file_change");
    assert_null(ev.kind);
    assert_string_equal(ev.item.id, "i9");
    assert_string_equal(ev.decision, "accept");
    assert_string_equal(ev.by, "policy");
    bt_event_doc_free(doc);
}

/* --- what cJSON alone cannot carry ------------------------------------------ */

static void parse_ok(const char *json, size_t len, struct bt_event *ev, struct bt_event_doc **doc)
{
    int rc = bt_event_parse(json, len, ev, doc);
    if (rc != 0)
        fail_msg("parse failed (%s): %.*s", bt_err_name(rc), (int)len, json);
}

struct bad {
    const char *json;
    int rc;
};

static void assert_rejected(const char *json, size_t len, int want)
{
    struct bt_event ev;
    struct bt_event_doc *doc = (struct bt_event_doc *)&ev; /* must become NULL */
    int rc = bt_event_parse(json, len, &ev, &doc);
    if (rc != want)
        fail_msg("want %s, got %s: %.*s", bt_err_name(want), bt_err_name(rc), (int)len,
                 json ? json : "");
    assert_null(doc);
    assert_int_equal(ev.type, BT_EVENT__COUNT);
    assert_null(ev.run);
    assert_null(ev.item.id);
    assert_null(ev.item.text);
    assert_null(ev.item.detail_json);
    assert_null(ev.delta);
}

static void test_nul_strings(void **state)
{
    (void)state;
    struct bt_event ev;
    struct bt_event_doc *doc;

    static const char warn[] = "{\"type\":\"warning\",\"kind\":\"x\\u0000y\",\"message\":\"m\","
                               "\"raw\":\"a\\u0000b\\u0000\"}";
    parse_ok(warn, sizeof(warn) - 1, &ev, &doc);
    assert_int_equal(ev.raw_len, 4);
    assert_memory_equal(ev.raw, "a\0b\0", 4);
    assert_string_equal(ev.kind, "x"); /* other strings end at the NUL */
    bt_event_doc_free(doc);

    /* decoys before the real member: a string holding "text":, a nested
     * object with a text member, escaped quotes and backslashes; the key
     * itself escaped */
    static const char item[] =
        "{\"item\":{\"id\":\"i\",\"kind\":\"command\",\"command\":\"say \\\"text\\\":\\\\\","
        "\"detail\":{\"text\":\"wrong\",\"a\":[\"]\",{\"b\":\"}\"}]},\"t\\u0065xt\":\"x\\u0000y\","
        "\"text\":\"later\"},\"type\":\"item.completed\",\"text\":\"top\"}";
    parse_ok(item, sizeof(item) - 1, &ev, &doc);
    assert_int_equal(ev.item.text_len, 3);
    assert_memory_equal(ev.item.text, "x\0y", 3);
    assert_string_equal(ev.item.command, "say \"text\":\\");
    bt_event_doc_free(doc);

    static const char delta[] =
        "{\"type\":\"item.delta\",\"item\":{\"id\":\"i\",\"kind\":\"message\","
        "\"text\":\"zz\"},\"text\":\"d\\u0000\\ud83d\\ude00e\"}";
    parse_ok(delta, sizeof(delta) - 1, &ev, &doc);
    assert_int_equal(ev.delta_len, 7);
    assert_memory_equal(ev.delta,
                        "d\0\xf0\x9f\x98\x80"
                        "e",
                        7);
    assert_int_equal(ev.item.text_len, 2);
    assert_string_equal(ev.item.text, "zz");
    bt_event_doc_free(doc);

    /* an escaped backslash before u0000 is no NUL (the slow path all the
     * same) */
    static const char bs[] = "{\"type\":\"warning\",\"raw\":\"back\\\\u0000slash\"}";
    parse_ok(bs, sizeof(bs) - 1, &ev, &doc);
    assert_int_equal(ev.raw_len, 15);
    assert_string_equal(ev.raw, "back\\u0000slash");
    bt_event_doc_free(doc);

    /* a raw NUL byte inside a string (not what the encoder writes) */
    static const char rawnul[] = "{\"type\":\"warning\",\"raw\":\"a\0b\"}";
    parse_ok(rawnul, sizeof(rawnul) - 1, &ev, &doc);
    assert_int_equal(ev.raw_len, 3);
    assert_memory_equal(ev.raw, "a\0b", 3);
    bt_event_doc_free(doc);
}

/* Integers cJSON's double would round are read from their digits, in the
 * member cJSON picked (the first of its key, at the right depth). */
static void test_big_integers(void **state)
{
    (void)state;
    struct bt_event ev;
    struct bt_event_doc *doc;
    static const char line[] =
        "{\"type\":\"turn.completed\",\"x\":{\"usage\":{\"input_tokens\":1}},"
        "\"note\":\"\\\"usage\\\":{\\\"input_tokens\\\":2}\","
        "\"usage\":{\"output_tokens\":[9007199254740995],\"input_tokens\":9007199254740993,"
        "\"input_tokens\":3},\"exit\":{\"code\":-9223372036854775808,\"signal\":0},"
        "\"duration_ms\":18014398509481985,\"seq\":9007199254740993,\"seq\":7}";
    /* output_tokens is an array: first the error, then without it */
    assert_rejected(line, sizeof(line) - 1, -EINVAL);
    char *fixed = bt_xstrdup(line);
    char *array = strstr(fixed, "[9007199254740995]");
    array[0] = array[17] = ' ';
    parse_ok(fixed, strlen(fixed), &ev, &doc);
    assert_int_equal(ev.usage.input_tokens, 9007199254740993LL);
    assert_int_equal(ev.usage.output_tokens, 9007199254740995LL);
    assert_int_equal(ev.exit_code, INT64_MIN);
    assert_int_equal(ev.exit_signal, 0);
    assert_int_equal(ev.duration_ms, 18014398509481985LL);
    assert_int_equal(ev.seq, 9007199254740993LL);
    bt_event_doc_free(doc);
    free(fixed);
}

/* The one byte difference: invalid UTF-8 is written as the escape \ufffd,
 * which reads back as U+FFFD, and U+FFFD is written raw. */
static void test_replacement_char(void **state)
{
    (void)state;
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
    ev.item.id = "i\xff";
    ev.delta = "a\xc0\xafz";
    ev.delta_len = 4;
    size_t n;
    char *once = encode(&ev, &n);
    assert_non_null(strstr(once, "\"i\\ufffd\""));
    assert_non_null(strstr(once, "\"a\\ufffd\\ufffdz\""));
    struct bt_event_doc *doc;
    parse_ok(once, n, &ev, &doc);
    assert_string_equal(ev.item.id, "i\xef\xbf\xbd");
    assert_int_equal(ev.delta_len, 8);
    assert_memory_equal(ev.delta, "a\xef\xbf\xbd\xef\xbf\xbdz", 8);
    char *twice = encode(&ev, &n);
    assert_non_null(strstr(twice, "\"i\xef\xbf\xbd\""));
    bt_event_doc_free(doc);
    parse_ok(twice, n, &ev, &doc);
    assert_event_round_trip(&ev);
    bt_event_doc_free(doc);
    free(once);
    free(twice);
}

/* --- bad input ---------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    static const struct bad cases[] = {
        {"", -EINVAL},
        {"   \n", -EINVAL},
        {"not json", -EINVAL},
        {"[1,2]", -EINVAL},
        {"[{\"type\":\"usage\"}]", -EINVAL},
        {"\"usage\"", -EINVAL},
        {"42", -EINVAL},
        {"null", -EINVAL},
        {"true", -EINVAL},
        {"{}", -EINVAL},
        {"{\"type\":7}", -EINVAL},
        {"{\"type\":null}", -EINVAL},
        {"{\"type\":[\"usage\"]}", -EINVAL},
        {"{\"Type\":\"usage\"}", -EINVAL},
        {"{\"type\":\"item.exploded\"}", BT_EPROTO},
        {"{\"type\":\"\",\"seq\":1}", BT_EPROTO},
        /* trailing bytes, truncation */
        {"{\"type\":\"usage\"} x", -EINVAL},
        {"{\"type\":\"usage\"}{\"type\":\"usage\"}", -EINVAL},
        {"{\"type\":\"usage\"},", -EINVAL},
        {"{\"type\":\"usage\"", -EINVAL},
        {"{\"type\":\"usage\",", -EINVAL},
        {"{\"type\":\"usa", -EINVAL},
        {"{\"type\":\"usage\",\"x\":\"\\ud800\"}", -EINVAL},
        {"{\"type\":\"warning\",\"raw\":\"a\\u0000\",\"x\":\"\\ud800\"}", -EINVAL},
        {"{\"type\":\"usage\",\"x\":\"\\q\"}", -EINVAL},
        /* wrong member types, numbers out of range */
        {"{\"type\":\"usage\",\"seq\":\"1\"}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":true}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":1.5}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":1e300}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":1e999}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":-1e999}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":9223372036854775808}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":9223372036854775809}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":-9223372036854775809}", -EINVAL},
        {"{\"type\":\"usage\",\"seq\":99999999999999999999999999}", -EINVAL},
        {"{\"type\":\"usage\",\"input_tokens\":18446744073709551616}", -EINVAL},
        {"{\"type\":\"usage\",\"input_tokens\":1e16}", -EINVAL},
        {"{\"type\":\"usage\",\"input_tokens\":9007199254740993.5}", -EINVAL},
        {"{\"type\":\"usage\",\"input_tokens\":1e18}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"exit_code\":1E17}}", -EINVAL},
        {"{\"type\":\"usage\",\"context_window\":[1]}", -EINVAL},
        {"{\"type\":\"usage\",\"cost_usd\":1e999}", -EINVAL},
        {"{\"type\":\"usage\",\"cost_usd\":-1e999}", -EINVAL},
        {"{\"type\":\"usage\",\"cost_usd\":\"0.1\"}", -EINVAL},
        {"{\"type\":\"usage\",\"run\":5}", -EINVAL},
        {"{\"type\":\"usage\",\"conversation\":{}}", -EINVAL},
        /* ts */
        {"{\"type\":\"usage\",\"ts\":5}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":null}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-13-01T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-00-01T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-02-29T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2100-02-29T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-04-31T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-00T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"1969-12-31T23:59:59.999Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T24:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:60:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:60.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:00.000\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:00Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01 00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:00.000+00:00\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"+026-01-01T00:00:00.000Z\"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:00.000Z \"}", -EINVAL},
        {"{\"type\":\"usage\",\"ts\":\"2026-01-01T00:00:00.000z\"}", -EINVAL},
        /* items */
        {"{\"type\":\"item.delta\"}", -EINVAL},
        {"{\"type\":\"item.started\",\"item\":null}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":[]}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":\"i\"}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":{\"kind\":\"message\"}}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":{\"id\":5,\"kind\":\"message\"}}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":{\"id\":null}}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":{\"id\":\"i\",\"kind\":3}}", -EINVAL},
        {"{\"type\":\"item.delta\",\"item\":{\"id\":\"i\",\"kind\":\"message\"},\"text\":5}",
         -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"exit_code\":\"0\"}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"exit_code\":0.5}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"status\":false}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"text\":[\"a\"]}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"detail\":\"{}\"}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"detail\":[1]}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"changes\":{}}}", -EINVAL},
        {"{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"changes\":\"[]\"}}", -EINVAL},
        /* failing after the changes' copy was made: no leak */
        {"{\"type\":\"item.delta\",\"item\":{\"id\":\"i\",\"kind\":\"file_change\","
         "\"changes\":[{\"path\":\"/a\"}]},\"text\":[]}",
         -EINVAL},
        /* failing after the detail and a NUL copy were made: no leak */
        {"{\"type\":\"item.delta\",\"item\":{\"id\":\"i\",\"kind\":\"message\",\"text\":"
         "\"a\\u0000\",\"detail\":{\"x\":1}},\"text\":[]}",
         -EINVAL},
        /* other types */
        {"{\"type\":\"turn.started\",\"resumed\":1}", -EINVAL},
        {"{\"type\":\"turn.started\",\"resumed\":\"true\"}", -EINVAL},
        {"{\"type\":\"turn.started\",\"coder\":false}", -EINVAL},
        {"{\"type\":\"session.started\",\"native_session_path\":1}", -EINVAL},
        {"{\"type\":\"approval.requested\",\"item_id\":7}", -EINVAL},
        {"{\"type\":\"approval.resolved\",\"decision\":{}}", -EINVAL},
        {"{\"type\":\"warning\",\"raw\":{}}", -EINVAL},
        {"{\"type\":\"error\",\"message\":1}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"status\":1}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"usage\":[]}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"usage\":{\"output_tokens\":\"5\"}}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"exit\":0}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"exit\":{\"code\":\"x\"}}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"exit\":{\"signal\":1e20}}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"duration_ms\":-1e16}", -EINVAL},
        {"{\"type\":\"turn.completed\",\"final_text\":0}", -EINVAL},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++)
        assert_rejected(cases[i].json, strlen(cases[i].json), cases[i].rc);

    assert_rejected(NULL, 0, -EINVAL);

    /* a buffer that is not NUL-terminated, cut short */
    static const char ok[] = "{\"type\":\"usage\",\"seq\":1,\"run\":\"r\"}";
    for (size_t n = 0; n < sizeof(ok) - 1; n++)
        assert_rejected(ok, n, -EINVAL);

    /* nesting deeper than cJSON takes */
    struct bt_buf deep = BT_BUF_INIT;
    bt_buf_adds(&deep, "{\"type\":\"usage\",\"x\":");
    for (int i = 0; i < 5000; i++)
        bt_buf_addc(&deep, '[');
    assert_rejected(deep.data, deep.len, -EINVAL);
    for (int i = 0; i < 5000; i++)
        bt_buf_addc(&deep, ']');
    bt_buf_addc(&deep, '}');
    assert_rejected(deep.data, deep.len, -EINVAL);
    bt_buf_release(&deep);
}

static void test_input_not_borrowed(void **state)
{
    (void)state;
    static const char line[] =
        "{\"type\":\"item.completed\",\"seq\":9,\"run\":\"r\",\"conversation\":\"c\","
        "\"ts\":\"2025-11-29T12:00:00.123Z\",\"item\":{\"id\":\"i\",\"kind\":\"tool_call\","
        "\"status\":\"completed\",\"text\":\"a\\u0000b\",\"name\":\"grep\","
        "\"detail\":{\"arguments\":{\"q\":\"x\"}}}}";
    char *copy = bt_xstrdup(line);
    struct bt_event ev;
    struct bt_event_doc *doc;
    parse_ok(copy, strlen(copy), &ev, &doc);
    memset(copy, 'X', strlen(copy));
    free(copy);
    size_t n;
    char *out = encode(&ev, &n);
    assert_int_equal(n, sizeof(line));
    assert_memory_equal(out, line, sizeof(line) - 1);
    free(out);
    bt_event_doc_free(doc);
    bt_event_doc_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_round_trip),
        cmocka_unit_test(test_every_type_round_trip),
        cmocka_unit_test(test_turn_and_session_round_trip),
        cmocka_unit_test(test_items_round_trip),
        cmocka_unit_test(test_approval_usage_warning_round_trip),
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_nul_strings),
        cmocka_unit_test(test_big_integers),
        cmocka_unit_test(test_replacement_char),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_input_not_borrowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
