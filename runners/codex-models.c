/* SPDX-License-Identifier: MIT */
/*
 * codex-models: codex's model list through `codex app-server`'s
 * model/list (codex-cli 0.171.0, v2/ModelListParams and
 * v2/ModelListResponse in fixtures/codex/0.171.0/app-server-schema.txt).
 * The order of messages: runner-codex.h.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "runner-codex.h"

#define CODEX_MODELS_PAGE 100 /* models asked for per page */
#define CODEX_MODELS_PAGES 10 /* pages read at most: a cursor that never ends is not followed */

void bt_codex_models_argv(struct bt_strv *argv)
{
    bt_strv_push(argv, "app-server");
}

static void ask_page(const char *cursor, struct bt_buf *out)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", BT_CODEX_ID_MODELS);
    cJSON_AddStringToObject(m, "method", "model/list");
    cJSON *params = cJSON_AddObjectToObject(m, "params");
    cJSON_AddNumberToObject(params, "limit", CODEX_MODELS_PAGE);
    if (cursor)
        cJSON_AddStringToObject(params, "cursor", cursor);
    bt_runner_put_json(out, m);
}

void bt_codex_models_start(struct bt_buf *out)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", BT_CODEX_ID_INITIALIZE);
    cJSON_AddStringToObject(m, "method", "initialize");
    bt_runner_add_client_info(cJSON_AddObjectToObject(m, "params"));
    bt_runner_put_json(out, m);
    bt_buf_adds(out, "{\"method\":\"initialized\"}\n");
    ask_page(NULL, out);
}

/* Why an answer that is an error failed, in codex's words (owned). */
static char *error_words(const cJSON *msg)
{
    const char *text = bt_json_str(bt_json_obj(msg, "error"), "message");
    return bt_xasprintf("codex answered %s", text ? text : "with an error");
}

/* One page's models: those not hidden, in codex's order. */
static void add_page(const cJSON *data, struct bt_runner_models *m)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, data)
    {
        const char *value = bt_json_str(it, "model");
        if (!value || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "hidden")))
            continue;
        bt_runner_models_add(m, value, bt_json_str(it, "displayName"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "isDefault")) && !m->current)
            m->current = bt_xstrdup(value);
    }
}

int bt_codex_models_line(const char *line, size_t len, struct bt_runner_models *m,
                         struct bt_buf *out, char **why)
{
    cJSON *msg = bt_json_parse(line, len, NULL);
    int64_t id = bt_json_int(msg, "id");
    int rc = 0;
    if (!msg || cJSON_GetObjectItemCaseSensitive(msg, "method") ||
        (id != BT_CODEX_ID_INITIALIZE && id != BT_CODEX_ID_MODELS)) {
        rc = 0; /* notifications, and requests no listing answers */
    } else if (bt_json_has_nul(line, len)) {
        *why = bt_xstrdup("codex's answer holds a NUL character, which baton cannot pass on");
        rc = BT_EPROTO;
    } else if (cJSON_GetObjectItemCaseSensitive(msg, "error")) {
        *why = error_words(msg);
        rc = BT_EPROTO;
    } else if (id == BT_CODEX_ID_MODELS) {
        const cJSON *result = bt_json_obj(msg, "result");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(result, "data");
        const char *cursor = bt_json_str(result, "nextCursor");
        if (!cJSON_IsArray(data)) {
            *why = bt_xstrdup("codex's model/list answer holds no data array");
            rc = BT_EPROTO;
        } else {
            add_page(data, m);
            rc = !cursor || !*cursor || ++m->answered >= CODEX_MODELS_PAGES;
            if (!rc)
                ask_page(cursor, out);
        }
    }
    cJSON_Delete(msg);
    return rc;
}
