/* SPDX-License-Identifier: MIT */
/* json: typed reads of cJSON members (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "util.h"

const char *bt_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *bt_json_obj(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsObject(v) ? v : NULL;
}

int64_t bt_json_int_of(const cJSON *v)
{
    if (!cJSON_IsNumber(v))
        return BT_UNKNOWN;
    double d = v->valuedouble;
    /* The NaN check is the negated range test: NaN compares false. */
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
        return BT_UNKNOWN;
    return (int64_t)d;
}

int64_t bt_json_int(const cJSON *o, const char *key)
{
    return bt_json_int_of(cJSON_GetObjectItemCaseSensitive(o, key));
}

int64_t bt_json_count(const cJSON *o, const char *key)
{
    int64_t n = bt_json_int(o, key);
    return n < 0 ? BT_UNKNOWN : n;
}

void bt_json_set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? bt_xstrdup(s) : NULL;
}

/* The message of an API error body: {"error":{"message"}}, {"error":
 * "…"} or {"message"}. */
static const char *body_message(const cJSON *body)
{
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(body, "error");
    if (cJSON_IsObject(err) && bt_json_str(err, "message"))
        return bt_json_str(err, "message");
    if (cJSON_IsString(err))
        return err->valuestring;
    return bt_json_str(body, "message");
}

char *bt_json_error_text(const char *text)
{
    const char *brace = text ? strchr(text, '{') : NULL;
    cJSON *body = brace ? cJSON_Parse(brace) : NULL;
    const char *m = cJSON_IsObject(body) ? body_message(body) : NULL;
    char *out = m ? bt_xasprintf("%.*s%s", (int)(brace - text), text, m) : NULL;
    cJSON_Delete(body);
    return out;
}
