/* SPDX-License-Identifier: MIT */
/*
 * unit-json: bt_json_parse (lone surrogate escapes read as U+FFFD rather
 * than failing a coder's whole line) and bt_json_has_nul (src/json.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"

/* The string member "s" of text, parsed with bt_json_parse; "" when it
 * does not parse. */
static char *s_of(const char *text)
{
    static char out[64];
    cJSON *j = bt_json_parse(text, strlen(text), NULL);
    const char *s = bt_json_str(j, "s");
    snprintf(out, sizeof out, "%s", j ? (s ? s : "(none)") : "");
    cJSON_Delete(j);
    return out;
}

static void test_surrogates(void **state)
{
    (void)state;
    /* a pair is a character; cJSON takes it as it is */
    assert_string_equal(s_of("{\"s\":\"a\\ud83d\\ude00b\"}"), "a\xf0\x9f\x98\x80"
                                                              "b");
    /* Node's JSON.stringify of a string cut inside a pair */
    assert_string_equal(s_of("{\"s\":\"a\\ud83d\"}"), "a\xef\xbf\xbd");
    assert_string_equal(s_of("{\"s\":\"\\ude00b\"}"), "\xef\xbf\xbd"
                                                      "b");
    assert_string_equal(s_of("{\"s\":\"\\ud83d\\u0041\"}"), "\xef\xbf\xbd"
                                                            "A");
    assert_string_equal(s_of("{\"s\":\"\\ud83d\\ud83d\\ude00\"}"), "\xef\xbf\xbd\xf0\x9f\x98\x80");
    assert_string_equal(s_of("{\"s\":\"\\uDBFF\"}"), "\xef\xbf\xbd");
    /* an escaped backslash before "ud83d" is text, not an escape */
    assert_string_equal(s_of("{\"s\":\"\\\\ud83d\"}"), "\\ud83d");
    /* other damage still fails */
    assert_string_equal(s_of("{\"s\":\"\\ud83d\""), "");
    assert_string_equal(s_of("{\"s\":\"\\uzzzz\"}"), "");
    assert_string_equal(s_of("not json"), "");
    assert_null(bt_json_parse("", 0, NULL));
    /* where it stopped, in the text given (fixed or not) */
    const char *text = "{\"s\":\"\\ud800\"} tail";
    const char *end = NULL;
    cJSON *j = bt_json_parse(text, strlen(text), &end);
    assert_non_null(j);
    assert_string_equal(end, " tail");
    cJSON_Delete(j);
    j = bt_json_parse("{\"a\":1} x", 9, &end);
    assert_non_null(j);
    assert_string_equal(end, " x");
    cJSON_Delete(j);
}

static void test_nul(void **state)
{
    (void)state;
    assert_true(bt_json_has_nul("{\"s\":\"a\\u0000b\"}", 16));
    assert_true(bt_json_has_nul("{\"s\":\"a\0b\"}", 11));
    assert_false(bt_json_has_nul("{\"s\":\"a\\\\u0000b\"}", 17)); /* a backslash, then text */
    assert_false(bt_json_has_nul("{\"s\":\"a\\u0001\"}", 15));
    assert_false(bt_json_has_nul("\\u000", 5));
}

/* bt_json_nul_replace: each escaped NUL becomes U+FFFD, in place, and the
 * text after it reads; an escaped backslash before "u0000" is text. */
static void test_nul_replace(void **state)
{
    (void)state;
    char s[] = "{\"s\":\"a\\u0000b\\\\u0000c\\u0000\"}";
    size_t len = strlen(s);
    assert_int_equal(bt_json_nul_replace(s, len), 2);
    assert_int_equal(strlen(s), len);
    assert_string_equal(s, "{\"s\":\"a\\ufffdb\\\\u0000c\\ufffd\"}");
    cJSON *j = bt_json_parse(s, len, NULL);
    assert_string_equal(bt_json_str(j, "s"), "a\xEF\xBF\xBD"
                                             "b\\u0000c\xEF\xBF\xBD");
    cJSON_Delete(j);
    char none[] = "{\"s\":\"\\u0001\\\\\"}";
    assert_int_equal(bt_json_nul_replace(none, strlen(none)), 0);
    char cut[] = "\\u000";
    assert_int_equal(bt_json_nul_replace(cut, strlen(cut)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_surrogates),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_nul_replace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
