/* SPDX-License-Identifier: MIT */
/*
 * codex parser, errors: the DESIGN.md error kind of a codex error object
 * (see parser-codex-error.h).
 */
#include "parser-codex-error.h"

#include <string.h>

#include "event.h"

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An integer member a double holds exactly, or BT_UNKNOWN (null too). */
static int64_t jint(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return BT_UNKNOWN;
    double d = v->valuedouble;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
        return BT_UNKNOWN;
    return (int64_t)d;
}

struct error_map {
    const char *info;
    const char *kind;
};

static const struct error_map error_kinds[] = {
    {"contextWindowExceeded", "context_exceeded"},
    {"usageLimitExceeded", "rate_limited"},
    {"rateLimitExceeded", "rate_limited"},
    {"sessionBudgetExceeded", "rate_limited"},
    {"serverOverloaded", "model_error"},
    {"modelNotFound", "model_error"},
    {"internalServerError", "model_error"},
    {"unauthorized", "auth_required"},
    {"badRequest", "model_error"},
    {"httpConnectionFailed", "model_error"}, /* with no HTTP status: network_error */
    {"responseStreamConnectionFailed", "model_error"},
    {"responseStreamDisconnected", "model_error"},
    {"responseTooManyFailedAttempts", "model_error"},
};

/* The kind for an HTTP status codex names inside codexErrorInfo. */
static const char *http_kind(const cJSON *detail)
{
    int64_t code = detail ? jint(detail, "httpStatusCode") : BT_UNKNOWN;
    if (code == 401 || code == 403)
        return "auth_required";
    if (code == 429)
        return "rate_limited";
    return NULL;
}

/* The model endpoint could not be reached at all: no HTTP status came
 * back. codex 0.171.0 against a port where nothing listens retries forever
 * with "Reconnecting... waiting for network", additionalDetails
 * "Connection failed: error sending request", codexErrorInfo
 * {"responseStreamDisconnected":{"httpStatusCode":null}} (the same info as
 * a retried HTTP 500, so the text decides). */
static int unreachable(const cJSON *err, const char *info, const cJSON *detail)
{
    const char *msg = jstr(err, "message");
    const char *more = jstr(err, "additionalDetails");
    if ((msg && strstr(msg, "waiting for network")) ||
        (more && strncmp(more, "Connection failed", 17) == 0))
        return 1;
    int connect = info && (strcmp(info, "httpConnectionFailed") == 0 ||
                           strcmp(info, "responseStreamConnectionFailed") == 0);
    return connect && (!detail || jint(detail, "httpStatusCode") == BT_UNKNOWN);
}

/* codexErrorInfo is a string or a one-key object ({"httpConnectionFailed":
 * {"httpStatusCode":401}}); map either to a kind, the HTTP status first. */
const char *bt_codex_error_kind(const cJSON *err)
{
    const cJSON *info = err ? cJSON_GetObjectItemCaseSensitive(err, "codexErrorInfo") : NULL;
    const char *name = NULL;
    const cJSON *detail = NULL;
    if (info && cJSON_IsString(info)) {
        name = info->valuestring;
    } else if (info && cJSON_IsObject(info) && info->child) {
        const char *k = http_kind(info->child);
        if (k)
            return k;
        name = info->child->string;
        detail = info->child;
    }
    if (err && unreachable(err, name, detail))
        return "network_error";
    for (size_t i = 0; name && i < BT_ARRAY_SIZE(error_kinds); i++)
        if (strcmp(error_kinds[i].info, name) == 0)
            return error_kinds[i].kind;
    return "model_error";
}
