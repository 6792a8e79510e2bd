/* SPDX-License-Identifier: MIT */
/*
 * error-kind: why a turn failed, as one word of docs/events.md ("error
 * kinds"). One X-macro table gives the enum, the names and the parser of
 * names, so a kind that is not in the table does not compile. Inside baton
 * a kind is always the enum (parser signals, a parser's diagnose, the turn
 * result, the service); the name is used only at the edges: the JSON of the
 * error and turn.completed events, the store's error_kind column, and the
 * reading back of either (bt_error_kind_parse).
 */
#ifndef BT_ERROR_KIND_H
#define BT_ERROR_KIND_H

/* X(NAME, name, meaning): the enum suffix, the name as stored and written,
 * one line of what it means; in the order of docs/events.md. */
#define BT_ERROR_KINDS(X)                                                                          \
    X(NOT_INSTALLED, "not_installed", "the coder's executable could not be started")               \
    X(AUTH_REQUIRED, "auth_required", "the coder is not logged in")                                \
    X(RESUME_FAILED, "resume_failed", "the native session could not be resumed")                   \
    X(MODEL_ERROR, "model_error", "the model request failed")                                      \
    X(NETWORK_ERROR, "network_error", "the model endpoint could not be reached")                   \
    X(RATE_LIMITED, "rate_limited", "rate or usage limit")                                         \
    X(CONTEXT_EXCEEDED, "context_exceeded", "the conversation no longer fits the context window")  \
    X(CODER_CRASHED, "coder_crashed", "the coder exited or died before the turn ended")            \
    X(STALLED, "stalled", "no progress for the idle timeout; baton stopped the coder")             \
    X(TIMEOUT, "timeout", "the turn took longer than its timeout")                                 \
    X(PROTOCOL_MISMATCH, "protocol_mismatch", "the coder spoke a protocol baton does not know")    \
    X(INPUT_TOO_LARGE, "input_too_large", "what baton had to send the coder was over its limit")

enum bt_error_kind {
    BT_ERROR_KIND_NONE, /* no error: a turn that did not fail */
#define BT_ERROR_KIND_ENUM(name, str, meaning) BT_ERROR_KIND_##name,
    BT_ERROR_KINDS(BT_ERROR_KIND_ENUM)
#undef BT_ERROR_KIND_ENUM
        BT_ERROR_KIND__COUNT
};

/* The kind's name (model_error for BT_ERROR_KIND_MODEL_ERROR), static;
 * NULL for BT_ERROR_KIND_NONE and for a value outside the enum. */
const char *bt_error_kind_name(enum bt_error_kind k);

/* The kind a name stands for (as stored or as read from an event's JSON).
 * NULL is BT_ERROR_KIND_NONE (no kind stored). A name that is not in the
 * table (another baton's kind, a damaged record, "") is
 * BT_ERROR_KIND_MODEL_ERROR: the turn failed, and model_error is the kind
 * of a failure nothing says more about, as it is for a coder's error
 * without a kind. Exact match only: a name differing in case or white
 * space is not the kind. */
enum bt_error_kind bt_error_kind_parse(const char *name);

/* 1 if a coder's error text (may be NULL) speaks of a rate limit, a usage
 * limit or a quota: one table for every coder, ASCII case ignored, e.g.
 * codex 0.171.0 "You've hit your usage limit. … try again at 3:05 PM" and
 * codexErrorInfo "usageLimitExceeded", claude "Claude AI usage limit
 * reached|1760000000" and "5-hour limit reached ∙ resets 3pm", gemini
 * "Quota exceeded for quota metric …" and "RESOURCE_EXHAUSTED", OpenAI
 * and Anthropic APIs behind pi and opencode "429 Too Many Requests",
 * "Rate limit reached", "insufficient_quota", copilot "you've hit a rate
 * limit … try again in 46 minutes". An HTTP status 429 counts on its own
 * only (not inside a longer number such as a port). The table:
 * error-kind.c. A parser checks this after what its coder says more
 * precisely (an auth failure, a context overflow, an unreachable host). */
int bt_error_text_rate_limited(const char *text);

/* text with a reset time it gives as seconds since the epoch after a
 * '|' (claude's "Claude AI usage limit reached|1760000000", Claude Code
 * 1.x and 2.x) made readable: "Claude AI usage limit reached (resets
 * 2025-10-09 08:53 UTC)". Owned; NULL when text (may be NULL) holds no
 * such time: it is kept as it is, with any reset time it says in words. */
char *bt_error_text_readable(const char *text);

#endif
