/* SPDX-License-Identifier: MIT */
/*
 * ACP errors: the error kind of what an agent answered with (a JSON-RPC
 * error object: ErrorCode in @agentclientprotocol/sdk 2.4.0
 * schema/v1/schema.json), of its stderr, the diagnosis of an agent that
 * ended before it answered the prompt, and the reason its stderr gives
 * for a turn it ended empty. Kept apart from the line
 * dispatch (parser-acp.c).
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "parser-acp.h"

/* ErrorCode -32000: "Authentication is required before this operation can
 * be performed". */
#define ACP_AUTH_REQUIRED (-32000)

/* 1 if text holds word, ignoring ASCII case. */
static int has(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *t = text; *t; t++) {
        size_t i = 0;
        while (i < n && t[i] && tolower((unsigned char)t[i]) == tolower((unsigned char)word[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int has_any(const char *text, const char *const *words)
{
    for (size_t i = 0; words && words[i]; i++)
        if (has(text, words[i]))
            return 1;
    return 0;
}

/* What agents and the model APIs behind them say (Gemini REST, OpenAI
 * Chat Completions, Node's fetch); a rate limit's words are every coder's
 * (bt_error_text_rate_limited). */
static const char *const context_words[] = {
    "context window",
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "token limit",
    "prompt is too long",
    /* gemini's Gemini API 400; opencode's ContextOverflowError */
    "exceeds the maximum number of tokens",
    "context exceeds",
    "contextoverflow",
    NULL,
};
static const char *const network_words[] = {
    "econnrefused",
    "enotfound",
    "etimedout",
    "econnreset",
    "fetch failed",
    "socket hang up",
    "network",
    /* opencode "Cannot connect to API: Unable to connect."; copilot "Could
     * not connect to local model provider" */
    "cannot connect",
    "could not connect",
    "unable to connect",
    NULL,
};
static const char *const auth_words[] = {
    "authentication required", "unauthorized", "invalid api key", "401", NULL,
};

enum bt_error_kind bt_acp_text_kind(const struct bt_acp_profile *p, const char *text)
{
    if (!text)
        return BT_ERROR_KIND_NONE;
    if (has_any(text, p->auth_patterns) || has_any(text, auth_words))
        return BT_ERROR_KIND_AUTH_REQUIRED;
    if (bt_error_text_rate_limited(text))
        return BT_ERROR_KIND_RATE_LIMITED;
    if (has_any(text, context_words))
        return BT_ERROR_KIND_CONTEXT_EXCEEDED;
    if (has_any(text, network_words))
        return BT_ERROR_KIND_NETWORK_ERROR;
    return BT_ERROR_KIND_NONE;
}

enum bt_error_kind bt_acp_error_kind(const struct bt_acp_profile *p, const cJSON *err)
{
    if (err && bt_json_int(err, "code") == ACP_AUTH_REQUIRED)
        return BT_ERROR_KIND_AUTH_REQUIRED;
    enum bt_error_kind k = bt_acp_text_kind(p, err ? bt_json_str(err, "message") : NULL);
    const cJSON *data = err ? cJSON_GetObjectItemCaseSensitive(err, "data") : NULL;
    if (k == BT_ERROR_KIND_NONE && data) {
        char *text = cJSON_PrintUnformatted(data);
        k = bt_acp_text_kind(p, text);
        cJSON_free(text);
    }
    return k == BT_ERROR_KIND_NONE ? BT_ERROR_KIND_MODEL_ERROR : k;
}

void bt_acp_parser_diagnose(void *st, const char *tail, size_t tail_len, int64_t exit_code,
                            int signal, enum bt_error_kind *kind, struct bt_buf *msg)
{
    const struct bt_acp_profile *p = *(const struct bt_acp_profile *const *)st;
    enum bt_error_kind k = signal ? BT_ERROR_KIND_NONE : bt_acp_text_kind(p, tail);
    if (k == BT_ERROR_KIND_AUTH_REQUIRED) {
        *kind = k;
        bt_buf_adds(msg, p->auth_message);
        return;
    }
    if (k != BT_ERROR_KIND_NONE) {
        *kind = k;
        bt_buf_addf(msg, "%s failed before it answered: %s", p->name,
                    k == BT_ERROR_KIND_RATE_LIMITED       ? "the model endpoint is rate limited"
                    : k == BT_ERROR_KIND_CONTEXT_EXCEEDED ? "the conversation is over the "
                                                            "model's context window"
                                                          : "the model endpoint was not reached");
        /* the agent's own line with it: a reset time it gives is kept */
        struct bt_buf line = BT_BUF_INIT;
        enum bt_error_kind said = k;
        bt_acp_parser_explain(st, tail, tail_len, &said, &line);
        if (line.len)
            bt_buf_addf(msg, " (%s)", line.data);
        bt_buf_release(&line);
        return;
    }
    *kind = BT_ERROR_KIND_CODER_CRASHED;
    if (signal)
        bt_buf_addf(msg, "%s stopped unexpectedly (signal %d) before the turn ended", p->name,
                    signal);
    else
        bt_buf_addf(msg, "%s exited (code %lld) before the turn ended", p->name,
                    (long long)exit_code);
}

/* 1 if the line [s, s+n) reads as an error: a known kind's words, or
 * "error" or "failed". */
static int error_line(const struct bt_acp_profile *p, const char *s, size_t n)
{
    char *line = bt_xstrndup(s, n);
    int yes = bt_acp_text_kind(p, line) != BT_ERROR_KIND_NONE || has(line, "error") ||
              has(line, "failed");
    free(line);
    return yes;
}

void bt_acp_parser_explain(void *st, const char *tail, size_t tail_len, enum bt_error_kind *kind,
                           struct bt_buf *msg)
{
    const struct bt_acp_profile *p = *(const struct bt_acp_profile *const *)st;
    size_t end = tail ? tail_len : 0;
    while (end > 0) { /* the last line first */
        size_t start = end;
        while (start > 0 && tail[start - 1] != '\n')
            start--;
        size_t a = start, b = end;
        while (a < b && isspace((unsigned char)tail[a]))
            a++;
        while (b > a && isspace((unsigned char)tail[b - 1]))
            b--;
        if (b > a && error_line(p, tail + a, b - a)) {
            bt_buf_add(msg, tail + a, bt_utf8_cut(tail + a, b - a, 300));
            enum bt_error_kind k = bt_acp_text_kind(p, msg->data);
            if (k != BT_ERROR_KIND_NONE)
                *kind = k;
            return;
        }
        end = start ? start - 1 : 0;
    }
}
