/* SPDX-License-Identifier: MIT */
/* claude parser, errors: a failed result, an api_retry and a claude that
 * exited early, mapped to error kinds (see parser-claude-error.h). */
#include "parser-claude-error.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"

enum bt_error_kind bt_claude_error_kind(const char *api_error, const cJSON *res, const char *text)
{
    int64_t status = bt_json_count(res, "api_error_status");
    const char *reason = bt_json_str(res, "terminal_reason");
    if (status == 401 || status == 403 ||
        (api_error && strcmp(api_error, "authentication_failed") == 0))
        return BT_ERROR_KIND_AUTH_REQUIRED;
    if (status == 429 || (api_error && strcmp(api_error, "rate_limit") == 0))
        return BT_ERROR_KIND_RATE_LIMITED;
    if ((reason && strcmp(reason, "prompt_too_long") == 0) ||
        (text && strstr(text, "Prompt is too long")))
        return BT_ERROR_KIND_CONTEXT_EXCEEDED;
    if (text && strstr(text, "No conversation found"))
        return BT_ERROR_KIND_RESUME_FAILED;
    if (text && (strstr(text, "Connection error") || strstr(text, "ECONNREFUSED") ||
                 strstr(text, "Unable to connect")))
        return BT_ERROR_KIND_NETWORK_ERROR;
    if (bt_error_text_rate_limited(text)) /* "Claude AI usage limit reached|<epoch>" */
        return BT_ERROR_KIND_RATE_LIMITED;
    return BT_ERROR_KIND_MODEL_ERROR;
}

void bt_claude_retry(const cJSON *msg, const char *line, size_t len,
                     const struct bt_parser_sink *sink)
{
    int64_t attempt = bt_json_count(msg, "attempt"), max = bt_json_count(msg, "max_retries");
    int64_t status = bt_json_count(msg, "error_status");
    char text[192], of[64] = "";
    enum bt_error_kind kind = BT_ERROR_KIND_MODEL_ERROR;
    if (attempt > 0 && max > 0)
        snprintf(of, sizeof of, " (attempt %lld of %lld)", (long long)attempt, (long long)max);
    if (status == BT_UNKNOWN) {
        kind = BT_ERROR_KIND_NETWORK_ERROR;
        snprintf(text, sizeof text, "claude gets no answer from the model's endpoint%s", of);
    } else {
        if (status == 401 || status == 403)
            kind = BT_ERROR_KIND_AUTH_REQUIRED;
        else if (status == 429)
            kind = BT_ERROR_KIND_RATE_LIMITED;
        snprintf(text, sizeof text, "claude is retrying a request that failed with HTTP %lld%s",
                 (long long)status, of);
    }
    struct bt_signal sig = {.type = BT_SIGNAL_RETRY,
                            .retry = {.error_kind = kind, .message = text}};
    bt_parser_warn(sink, "retry", text, line, len);
    sink->signal(sink->data, &sig);
}

void bt_claude_diagnose(void *st, const char *tail, size_t tail_len, int64_t exit_code, int signal,
                        enum bt_error_kind *kind, struct bt_buf *msg)
{
    (void)st;
    (void)tail_len;
    if (!signal && tail && strstr(tail, "cannot be used with root/sudo privileges")) {
        *kind = BT_ERROR_KIND_CODER_CRASHED;
        bt_buf_adds(msg, "claude refuses to skip permission checks (--approval never) as root "
                         "unless its environment says it runs in a sandbox: use --approval "
                         "deny or auto, or run baton with IS_SANDBOX=1 if this machine is one");
        return;
    }
    if (!signal && tail &&
        (strstr(tail, "No conversation found") || strstr(tail, "already in use"))) {
        *kind = BT_ERROR_KIND_RESUME_FAILED;
        bt_buf_adds(msg, "claude could not open the conversation's session");
        return;
    }
    if (!signal && tail && (strstr(tail, "Invalid API key") || strstr(tail, "/login"))) {
        *kind = BT_ERROR_KIND_AUTH_REQUIRED;
        bt_buf_adds(msg,
                    "claude is not logged in: run `claude` and log in, or set ANTHROPIC_API_KEY");
        return;
    }
    *kind = BT_ERROR_KIND_CODER_CRASHED;
    if (signal)
        bt_buf_addf(msg, "claude stopped unexpectedly (signal %d) before the turn ended", signal);
    else
        bt_buf_addf(msg, "claude exited (code %lld) before the turn ended", (long long)exit_code);
}

void bt_claude_rate_limit(const cJSON *msg, const char *line, size_t len,
                          const struct bt_parser_sink *sink)
{
    const cJSON *info = bt_json_obj(msg, "rate_limit_info");
    const char *status = bt_json_str(info, "status");
    const char *type = bt_json_str(info, "rateLimitType");
    if (status && strcmp(status, "allowed") == 0)
        return; /* the heartbeat of every turn: nothing to say */
    char when[48] = "";
    int64_t at = bt_json_int(info, "resetsAt"); /* seconds since the epoch */
    struct tm tm;
    time_t t = (time_t)at;
    if (at > 0 && gmtime_r(&t, &tm))
        strftime(when, sizeof when, ", resets %Y-%m-%d %H:%M UTC", &tm);
    if (!type)
        type = "usage";
    char text[192];
    if (status && strcmp(status, "allowed_warning") == 0)
        snprintf(text, sizeof text, "claude is close to its %s limit%s", type, when);
    else if (status && strcmp(status, "rejected") == 0)
        snprintf(text, sizeof text, "claude reached its %s limit%s", type, when);
    else
        snprintf(text, sizeof text, "claude reports its %s limit as %s%s", type,
                 status ? status : "unknown", when);
    bt_parser_warn(sink, "coder", text, line, len);
}
