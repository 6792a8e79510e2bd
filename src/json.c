/* SPDX-License-Identifier: MIT */
/* json: typed reads of cJSON members (see json.h). */
#include "json.h"

#include <stdlib.h>

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
