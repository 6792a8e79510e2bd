/* SPDX-License-Identifier: MIT */
/* runner-util: helpers shared by every coder's runner. */
#include "runner.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <string.h>

int bt_runner_id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 256 || id[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
            return 0;
    }
    return 1;
}

void bt_runner_put_json(struct bt_buf *out, struct cJSON *msg)
{
    char *s = cJSON_PrintUnformatted(msg);
    bt_buf_adds(out, s);
    bt_buf_addc(out, '\n');
    cJSON_free(s);
    cJSON_Delete(msg);
}

void bt_runner_fail(const struct bt_parser_sink *sink, const char *kind, const char *message)
{
    struct bt_signal sig = {.type = BT_SIGNAL_TURN_END, .status = BT_TURN_FAILED};
    sig.error_kind = kind;
    sig.message = message;
    sink->signal(sink->data, &sig);
}
