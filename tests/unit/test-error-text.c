/* SPDX-License-Identifier: MIT */
/*
 * unit tests: reading a coder's failure out of text. bt_json_error_text
 * (src/json.c): a model API's JSON error body inside an error message, as
 * pi 1.6.0, opencode 1.18.33 and gemini 0.61.0 pass it on; and the ACP
 * parser's explain op (parsers/parser-acp-error.c): the reason an agent's
 * stderr gives for a turn it ended empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coder.h"
#include "json.h"

static void said_is(const char *text, const char *want)
{
    char *got = bt_json_error_text(text);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_error_text(void **state)
{
    (void)state;
    /* pi 1.6.0 against a Chat Completions 500 */
    said_is("500: {\"message\":\"stand-in: scripted HTTP 500\",\"type\":\"server_error\","
            "\"param\":null,\"code\":\"server_error\"}",
            "500: stand-in: scripted HTTP 500");
    /* opencode 1.18.33's -32603 message */
    said_is("Internal error: {\"message\":\"boom\",\"code\":\"server_error\"}",
            "Internal error: boom");
    /* gemini 0.61.0: the Gemini API's body alone */
    said_is("{\"error\":{\"code\":500,\"message\":\"Internal\",\"status\":\"INTERNAL\"}}",
            "Internal");
    said_is("429 {\"error\":\"Too many requests\"} (after 3 attempts)", "429 Too many requests");
    /* no body, or none that says a message: the text as it is */
    said_is("Connection error.", NULL);
    said_is("bad {json", NULL);
    said_is("odd {\"code\":5}", NULL);
    said_is("{\"error\":{\"code\":5}}", NULL);
    said_is("[1,2]", NULL);
    said_is("", NULL);
    said_is(NULL, NULL);
}

static const struct bt_coder *acp_coder(void)
{
    const struct bt_coder *c = bt_coder_find("gemini");
    assert_non_null(c);
    assert_non_null(c->parser->explain);
    return c;
}

/* explain's sentence and kind for a stderr tail; kind starts as the end's. */
static void explained(const char *tail, const char *want, enum bt_error_kind want_kind)
{
    const struct bt_coder *c = acp_coder();
    void *p = c->parser->create();
    enum bt_error_kind kind = BT_ERROR_KIND_MODEL_ERROR;
    struct bt_buf msg = BT_BUF_INIT;
    c->parser->explain(p, tail, tail ? strlen(tail) : 0, &kind, &msg);
    assert_string_equal(msg.len ? msg.data : "", want);
    assert_int_equal(kind, want_kind);
    bt_buf_release(&msg);
    c->parser->destroy(p);
}

static void test_explain(void **state)
{
    (void)state;
    /* gemini 0.61.0's usual stderr names no failure */
    explained("Ripgrep is not available. Falling back to GrepTool.\n"
              "[STARTUP] Phase 'cli_startup' was started but never ended. Skipping metrics.\n",
              "", BT_ERROR_KIND_MODEL_ERROR);
    /* the last error line wins, trimmed; its words give the kind */
    explained("Error: first failure\nnotice\n  Error: 429 quota exceeded  \r\n\n",
              "Error: 429 quota exceeded", BT_ERROR_KIND_RATE_LIMITED);
    explained("request failed: connect ECONNREFUSED 127.0.0.1:9",
              "request failed: connect "
              "ECONNREFUSED 127.0.0.1:9",
              BT_ERROR_KIND_NETWORK_ERROR);
    explained("something failed\n", "something failed", BT_ERROR_KIND_MODEL_ERROR);
    explained("", "", BT_ERROR_KIND_MODEL_ERROR);
    explained(NULL, "", BT_ERROR_KIND_MODEL_ERROR);
    explained("\n\n\n", "", BT_ERROR_KIND_MODEL_ERROR);
}

/* A long line is cut at 300 bytes on a character boundary. */
static void test_explain_long(void **state)
{
    (void)state;
    struct bt_buf line = BT_BUF_INIT;
    bt_buf_adds(&line, "Error: ");
    while (line.len < 1000)
        bt_buf_adds(&line, "\xc3\xa9"); /* é, two bytes */
    const struct bt_coder *c = acp_coder();
    void *p = c->parser->create();
    enum bt_error_kind kind = BT_ERROR_KIND_MODEL_ERROR;
    struct bt_buf msg = BT_BUF_INIT;
    c->parser->explain(p, line.data, line.len, &kind, &msg);
    assert_true(msg.len <= 300 && msg.len >= 298);
    assert_int_equal(bt_utf8_invalid_at(msg.data, msg.len), msg.len);
    bt_buf_release(&msg);
    bt_buf_release(&line);
    c->parser->destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_text),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_explain_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
