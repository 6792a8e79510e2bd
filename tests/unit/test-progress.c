/* SPDX-License-Identifier: MIT */
/*
 * unit tests: what the idle watchdog counts as progress (src/progress.c),
 * the retry reason it keeps, and durations as baton prints them
 * (bt_duration_format in src/util.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "progress.h"
#include "util.h"

static void test_duration_scales(void **state)
{
    (void)state;
    static const struct {
        int64_t ms;
        const char *text;
    } cases[] = {
        {-5, "0 ms"},
        {0, "0 ms"},
        {1, "1 ms"},
        {99, "99 ms"},
        {100, "0.1 s"},
        {250, "0.25 s"},
        {500, "0.5 s"},
        {1000, "1 s"},
        {1001, "1.001 s"},
        {1500, "1.5 s"},
        {90000, "90 s"},
        {599999, "599.999 s"},
        {600000, "10 min"},
        {750000, "12 min 30 s"},
        {3600000, "60 min"},
        {35999999, "600 min"},
        {36000000, "10 h"},
        {99960000, "27 h 46 min"},
        {10000000000, "2777 h 47 min"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        char out[32];
        bt_duration_format(cases[i].ms, out);
        assert_string_equal(out, cases[i].text);
    }
}

static void test_curate(void **state)
{
    (void)state;
    char *s = bt_progress_curate("failed: http://user:secret@host:1/v1\nnext\tline", 400);
    assert_string_equal(s, "failed: http://***@host:1/v1 next line");
    free(s);
    s = bt_progress_curate("see https://example.com/a@b and ws://h", 400);
    assert_string_equal(s, "see https://example.com/a@b and ws://h"); /* @ in a path stays */
    free(s);
    s = bt_progress_curate("h\xc3\xa9llo", 2); /* cut on a character boundary */
    assert_string_equal(s, "h");
    free(s);
}

static void test_what_counts(void **state)
{
    (void)state;
    struct bt_progress p;
    bt_progress_init(&p);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_WARNING);
    assert_int_equal(bt_progress_event(&p, &ev), 0);
    bt_event_init(&ev, BT_EVENT_ERROR);
    assert_int_equal(bt_progress_event(&p, &ev), 0);
    bt_event_init(&ev, BT_EVENT_ITEM_DELTA);
    assert_int_equal(bt_progress_event(&p, &ev), 1);
    /* zeros after unknown are no change; a count that moved is */
    bt_event_init(&ev, BT_EVENT_USAGE);
    ev.usage.input_tokens = 0;
    ev.usage.cost_usd = 0;
    assert_int_equal(bt_progress_event(&p, &ev), 0);
    ev.usage.input_tokens = 10;
    assert_int_equal(bt_progress_event(&p, &ev), 1);
    assert_int_equal(bt_progress_event(&p, &ev), 0); /* the same sums again */
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_RESUMED};
    assert_int_equal(bt_progress_signal(&p, &sig), 0);
    sig = (struct bt_signal){.type = BT_SIGNAL_CODER_VERSION};
    assert_int_equal(bt_progress_signal(&p, &sig), 0);
    sig = (struct bt_signal){.type = BT_SIGNAL_PROGRESS};
    assert_int_equal(bt_progress_signal(&p, &sig), 1);
    sig = (struct bt_signal){.type = BT_SIGNAL_RESPONSE};
    assert_int_equal(bt_progress_signal(&p, &sig), 1);
    bt_progress_release(&p);
}

static void test_retry_reason(void **state)
{
    (void)state;
    struct bt_progress p;
    bt_progress_init(&p);
    struct bt_signal sig = {
        .type = BT_SIGNAL_RETRY,
        .retry = {.error_kind = BT_ERROR_KIND_NETWORK_ERROR, .message = "Connection error."}};
    assert_int_equal(bt_progress_signal(&p, &sig), 0);
    assert_int_equal(p.retry_kind, BT_ERROR_KIND_NETWORK_ERROR);
    assert_string_equal(p.retry_message, "Connection error.");
    sig = (struct bt_signal){.type = BT_SIGNAL_RETRY};
    assert_int_equal(bt_progress_signal(&p, &sig), 0); /* the last retry wins */
    assert_int_equal(p.retry_kind, BT_ERROR_KIND_MODEL_ERROR);
    assert_string_equal(p.retry_message, "the request failed");
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_WARNING); /* not progress: the reason stays */
    bt_progress_event(&p, &ev);
    assert_non_null(p.retry_message);
    bt_event_init(&ev, BT_EVENT_ITEM_STARTED); /* progress: forgotten */
    bt_progress_event(&p, &ev);
    assert_int_equal(p.retry_kind, BT_ERROR_KIND_NONE);
    assert_null(p.retry_message);
    bt_progress_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_scales),
        cmocka_unit_test(test_curate),
        cmocka_unit_test(test_what_counts),
        cmocka_unit_test(test_retry_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
