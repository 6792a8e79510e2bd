/* SPDX-License-Identifier: MIT */
/*
 * unit tests: the words of a rate or usage limit (src/error-kind.c,
 * bt_error_text_rate_limited), the same for every coder; a reset time
 * given as seconds since the epoch made readable
 * (bt_error_text_readable); and each coder's classifier giving
 * rate_limited for its own wording, after what it says more precisely.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "coder.h"
#include "error-kind.h"
#include "parser-claude-error.h"
#include "parser-codex-error.h"
#include "parser-pi-error.h"

/* Each coder's wording of a limit, as its CLI or the model API behind it
 * writes it (with or without an HTTP status). */
static const char *const limited[] = {
    /* codex 0.171.0 */
    "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try "
    "again at 3:05 PM.",
    "usageLimitExceeded",
    "exceeded retry limit, last status: 429 Too Many Requests",
    /* claude */
    "Claude AI usage limit reached|1760000000",
    "5-hour limit reached \xe2\x88\x99 resets 3pm (Europe/Berlin)",
    "You've hit your limit \xc2\xb7 resets 5pm (UTC)",
    "API Error: Request rejected (429) \xc2\xb7 Rate limited",
    "Weekly limit reached, resets Oct 9, 5pm",
    /* gemini */
    "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests "
    "per day per user per tier'",
    "[API Error: got status: RESOURCE_EXHAUSTED]",
    "You have exhausted your capacity on this model. Your quota will reset after 4h34m3s.",
    /* OpenAI and Anthropic APIs behind pi, opencode, copilot */
    "429 Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM)",
    "You exceeded your current quota, please check your plan and billing details.",
    "rate_limit_error: This request would exceed the rate limit for your organization",
    "Too Many Requests",
    "Sorry, you've hit a rate limit that restricts the number of Copilot model requests you "
    "can make within a specific time period. Please try again in 46 minutes.",
    "HTTP 429",
};

static const char *const not_limited[] = {
    "connect ECONNREFUSED 127.0.0.1:4290",
    "Connection error.: connect ECONNREFUSED 127.0.0.1:42900",
    "This model's maximum context length is 128000 tokens",
    "the model stopped at its output token limit (max_tokens)",
    "stand-in: scripted HTTP 500",
    "Invalid API key",
    "wrote 14290 bytes",
    "Disk quota exceeded (os error 122)", /* EDQUOT: a full file system */
    "EDQUOT: disk quota exceeded, write",
    "",
};

static void test_words(void **state)
{
    (void)state;
    for (size_t i = 0; i < BT_ARRAY_SIZE(limited); i++)
        if (!bt_error_text_rate_limited(limited[i]))
            fail_msg("not read as a limit: %s", limited[i]);
    for (size_t i = 0; i < BT_ARRAY_SIZE(not_limited); i++)
        if (bt_error_text_rate_limited(not_limited[i]))
            fail_msg("read as a limit: %s", not_limited[i]);
    assert_false(bt_error_text_rate_limited(NULL));
}

static void readable_is(const char *text, const char *want)
{
    char *got = bt_error_text_readable(text);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_readable(void **state)
{
    (void)state;
    readable_is("Claude AI usage limit reached|1760000000",
                "Claude AI usage limit reached (resets 2025-10-09 08:53 UTC)");
    readable_is("Claude AI usage limit reached|1760000000000", /* milliseconds */
                "Claude AI usage limit reached (resets 2025-10-09 08:53 UTC)");
    readable_is("try again at 3:05 PM", NULL);
    readable_is("a|b", NULL);
    readable_is("limit|12", NULL);               /* not a time */
    readable_is("limit|1760000000 later", NULL); /* not at the end */
    readable_is("|1760000000", NULL);            /* nothing it is the time of */
    readable_is(NULL, NULL);
}

/* Every coder's classifier: the words give rate_limited, after what the
 * coder says more precisely. */
static void test_coders(void **state)
{
    (void)state;
    /* codex: codexErrorInfo first, then the words */
    cJSON *err = cJSON_Parse("{\"message\":\"You've hit your usage limit. Try again at 3:05 "
                             "PM.\",\"codexErrorInfo\":\"other\"}");
    assert_int_equal(bt_codex_error_kind(err), BT_ERROR_KIND_RATE_LIMITED);
    cJSON_Delete(err);
    err = cJSON_Parse("{\"message\":\"stream error\",\"codexErrorInfo\":{\"responseTooManyFailed"
                      "Attempts\":{\"httpStatusCode\":null}},\"additionalDetails\":\"exceeded "
                      "retry limit, last status: 429 Too Many Requests\"}");
    assert_int_equal(bt_codex_error_kind(err), BT_ERROR_KIND_RATE_LIMITED);
    cJSON_Delete(err);
    err = cJSON_Parse("{\"message\":\"quota\",\"codexErrorInfo\":\"contextWindowExceeded\"}");
    assert_int_equal(bt_codex_error_kind(err), BT_ERROR_KIND_CONTEXT_EXCEEDED);
    cJSON_Delete(err);

    /* claude: the result's text */
    assert_int_equal(bt_claude_error_kind(NULL, NULL, "Claude AI usage limit reached|1760000000"),
                     BT_ERROR_KIND_RATE_LIMITED);
    assert_int_equal(bt_claude_error_kind(NULL, NULL, "Prompt is too long"),
                     BT_ERROR_KIND_CONTEXT_EXCEEDED);

    /* pi: the OpenAI API's quota, with no status */
    assert_int_equal(bt_pi_error_kind("You exceeded your current quota, please check your plan"),
                     BT_ERROR_KIND_RATE_LIMITED);
    assert_int_equal(bt_pi_error_kind("Connection error.: connect ECONNREFUSED 127.0.0.1:4290"),
                     BT_ERROR_KIND_NETWORK_ERROR);

    /* ACP: every agent's profile, through its parser's reading of stderr */
    static const char *const agents[] = {"gemini", "opencode", "copilot"};
    static const char *const lines[] = {"Error: You've hit your usage limit",
                                        "Error: Quota exceeded for quota metric 'x'"};
    for (size_t i = 0; i < BT_ARRAY_SIZE(agents); i++) {
        const struct bt_coder *c = bt_coder_find(agents[i]);
        assert_non_null(c);
        assert_non_null(c->parser->explain);
        for (size_t k = 0; k < BT_ARRAY_SIZE(lines); k++) {
            void *st = c->parser->create();
            enum bt_error_kind kind = BT_ERROR_KIND_MODEL_ERROR;
            struct bt_buf msg = BT_BUF_INIT;
            c->parser->explain(st, lines[k], strlen(lines[k]), &kind, &msg);
            assert_int_equal(kind, BT_ERROR_KIND_RATE_LIMITED);
            bt_buf_release(&msg);
            c->parser->destroy(st);
        }
        /* an agent that exits with its limit on stderr: the reset time it
         * gives stays in the reason */
        static const char tail[] = "Loaded cached credentials.\nError: You have exhausted your "
                                   "capacity on this model. Your quota will reset after "
                                   "4h34m3s.\n";
        void *st = c->parser->create();
        enum bt_error_kind kind = BT_ERROR_KIND_CODER_CRASHED;
        struct bt_buf msg = BT_BUF_INIT;
        c->parser->diagnose(st, tail, strlen(tail), 1, 0, &kind, &msg);
        assert_int_equal(kind, BT_ERROR_KIND_RATE_LIMITED);
        assert_non_null(strstr(msg.data, "reset after 4h34m3s"));
        bt_buf_release(&msg);
        c->parser->destroy(st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_readable),
        cmocka_unit_test(test_coders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
