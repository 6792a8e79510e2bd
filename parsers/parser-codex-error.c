/* SPDX-License-Identifier: MIT */
/*
 * codex parser, errors: the error kind (docs/events.md) of a codex error object
 * (see parser-codex-error.h).
 */
#include "parser-codex-error.h"

#include <ctype.h>
#include <string.h>

#include "event.h"
#include "json.h"

struct error_map {
    const char *info;
    enum bt_error_kind kind;
};

static const struct error_map error_kinds[] = {
    {"contextWindowExceeded", BT_ERROR_KIND_CONTEXT_EXCEEDED},
    {"usageLimitExceeded", BT_ERROR_KIND_RATE_LIMITED},
    {"rateLimitExceeded", BT_ERROR_KIND_RATE_LIMITED},
    {"sessionBudgetExceeded", BT_ERROR_KIND_RATE_LIMITED},
    {"serverOverloaded", BT_ERROR_KIND_MODEL_ERROR},
    {"modelNotFound", BT_ERROR_KIND_MODEL_ERROR},
    {"internalServerError", BT_ERROR_KIND_MODEL_ERROR},
    {"unauthorized", BT_ERROR_KIND_AUTH_REQUIRED},
    {"badRequest", BT_ERROR_KIND_MODEL_ERROR},
    {"httpConnectionFailed", BT_ERROR_KIND_MODEL_ERROR}, /* with no HTTP status: network_error */
    {"responseStreamConnectionFailed", BT_ERROR_KIND_MODEL_ERROR},
    {"responseStreamDisconnected", BT_ERROR_KIND_MODEL_ERROR},
    {"responseTooManyFailedAttempts", BT_ERROR_KIND_MODEL_ERROR},
};

/* The kind for an HTTP status codex names inside codexErrorInfo. */
static enum bt_error_kind http_kind(const cJSON *detail)
{
    int64_t code = detail ? bt_json_int(detail, "httpStatusCode") : BT_UNKNOWN;
    if (code == 401 || code == 403)
        return BT_ERROR_KIND_AUTH_REQUIRED;
    if (code == 429)
        return BT_ERROR_KIND_RATE_LIMITED;
    return BT_ERROR_KIND_NONE;
}

/* The model endpoint could not be reached at all: no HTTP status came
 * back. codex 0.171.0 against a port where nothing listens retries forever
 * with "Reconnecting... waiting for network", additionalDetails
 * "Connection failed: error sending request", codexErrorInfo
 * {"responseStreamDisconnected":{"httpStatusCode":null}} (the same info as
 * a retried HTTP 500, so the text decides). */
static int unreachable(const cJSON *err, const char *info, const cJSON *detail)
{
    const char *msg = bt_json_str(err, "message");
    const char *more = bt_json_str(err, "additionalDetails");
    if ((msg && strstr(msg, "waiting for network")) ||
        (more && strncmp(more, "Connection failed", 17) == 0))
        return 1;
    int connect = info && (strcmp(info, "httpConnectionFailed") == 0 ||
                           strcmp(info, "responseStreamConnectionFailed") == 0);
    return connect && (!detail || bt_json_int(detail, "httpStatusCode") == BT_UNKNOWN);
}

/* codexErrorInfo is a string or a one-key object ({"httpConnectionFailed":
 * {"httpStatusCode":401}}); map either to a kind, the HTTP status first. */
enum bt_error_kind bt_codex_error_kind(const cJSON *err)
{
    const cJSON *info = err ? cJSON_GetObjectItemCaseSensitive(err, "codexErrorInfo") : NULL;
    const char *name = NULL;
    const cJSON *detail = NULL;
    if (info && cJSON_IsString(info)) {
        name = info->valuestring;
    } else if (info && cJSON_IsObject(info) && info->child) {
        enum bt_error_kind k = http_kind(info->child);
        if (k != BT_ERROR_KIND_NONE)
            return k;
        name = info->child->string;
        detail = info->child;
    }
    if (err && unreachable(err, name, detail))
        return BT_ERROR_KIND_NETWORK_ERROR;
    for (size_t i = 0; name && i < BT_ARRAY_SIZE(error_kinds); i++)
        if (strcmp(error_kinds[i].info, name) == 0 &&
            error_kinds[i].kind != BT_ERROR_KIND_MODEL_ERROR)
            return error_kinds[i].kind;
    /* a usage limit without its codexErrorInfo (an older or newer codex,
     * a retried 429 as responseTooManyFailedAttempts): the words say it */
    if (err && (bt_error_text_rate_limited(bt_json_str(err, "message")) ||
                bt_error_text_rate_limited(bt_json_str(err, "additionalDetails"))))
        return BT_ERROR_KIND_RATE_LIMITED;
    return BT_ERROR_KIND_MODEL_ERROR;
}

/* needle (lower case) in hay, ignoring the case of hay */
static int has_word(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == needle[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

int bt_codex_thread_gone(const char *message)
{
    return message &&
           (has_word(message, "no rollout found") || has_word(message, "thread not found"));
}
