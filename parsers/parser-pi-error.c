/* SPDX-License-Identifier: MIT */
/* pi parser, errors (see parser-pi-error.h). */
#include "parser-pi-error.h"

#include <ctype.h>
#include <string.h>

#include "util.h"

/* What pi (the OpenAI SDK and Node's fetch inside it) says when the
 * endpoint cannot be reached: nothing listens, no such host, the
 * connection dropped or timed out before an answer. */
static const char *const unreachable[] = {
    "Connection error",  "ECONNREFUSED", "ECONNRESET",     "ENOTFOUND",
    "EAI_AGAIN",         "EHOSTUNREACH", "ENETUNREACH",    "ETIMEDOUT",
    "Request timed out", "fetch failed", "socket hang up",
};

/* 1 if msg holds the number code (an HTTP status) on its own, not inside
 * a longer number such as a port. */
static int has_status(const char *msg, const char *code)
{
    size_t n = strlen(code);
    for (const char *at = strstr(msg, code); at; at = strstr(at + 1, code))
        if ((at == msg || !isdigit((unsigned char)at[-1])) && !isdigit((unsigned char)at[n]))
            return 1;
    return 0;
}

/* The error kind (docs/events.md) of pi's error text (pi classifies by
 * text too). An unreachable endpoint comes first: pi 1.x names the address
 * ("Connection error.: connect ECONNREFUSED 127.0.0.1:40123"), whose port
 * must not read as a status. */
enum bt_error_kind bt_pi_error_kind(const char *msg)
{
    if (!msg)
        return BT_ERROR_KIND_MODEL_ERROR;
    if (strstr(msg, "context_length") || strstr(msg, "context window") ||
        strstr(msg, "Context overflow"))
        return BT_ERROR_KIND_CONTEXT_EXCEEDED;
    for (size_t i = 0; i < BT_ARRAY_SIZE(unreachable); i++)
        if (strstr(msg, unreachable[i]))
            return BT_ERROR_KIND_NETWORK_ERROR;
    if (bt_error_text_rate_limited(msg))
        return BT_ERROR_KIND_RATE_LIMITED;
    if (has_status(msg, "401") || has_status(msg, "403") || strstr(msg, "API key") ||
        strstr(msg, "api key"))
        return BT_ERROR_KIND_AUTH_REQUIRED;
    return BT_ERROR_KIND_MODEL_ERROR;
}

void bt_pi_diagnose(const char *tail, int64_t exit_code, int signal, const char *error_message,
                    enum bt_error_kind *kind, struct bt_buf *msg)
{
    if (!signal && tail && strstr(tail, "No API key")) {
        *kind = BT_ERROR_KIND_AUTH_REQUIRED;
        bt_buf_adds(msg, "pi has no API key for this provider: run `pi` and log in, or set one");
        return;
    }
    const char *node =
        !signal && tail && strstr(tail, "SyntaxError") ? strstr(tail, "Node.js v") : NULL;
    if (node) {
        /* pi 1.x run by a Node older than it needs (Node 20 lacks
         * module.enableCompileCache) dies loading; Node prints its version */
        *kind = BT_ERROR_KIND_NOT_INSTALLED;
        bt_buf_addf(msg, "pi could not start under %.*s: pi 1.x needs Node.js 22.19 or newer",
                    (int)strcspn(node, "\r\n"), node);
        return;
    }
    if (!signal && tail && strstr(tail, "No session found")) {
        *kind = BT_ERROR_KIND_RESUME_FAILED;
        bt_buf_adds(msg, "pi could not find the conversation's session");
        return;
    }
    *kind = BT_ERROR_KIND_CODER_CRASHED;
    if (error_message)
        bt_buf_addf(msg, "pi stopped after an error: %s", error_message);
    else if (signal)
        bt_buf_addf(msg, "pi stopped unexpectedly (signal %d) before the turn ended", signal);
    else
        bt_buf_addf(msg, "pi exited (code %lld) before the turn ended", (long long)exit_code);
}
