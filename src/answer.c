/* SPDX-License-Identifier: MIT */
/* answer: the answer text of a turn from its message items (see answer.h). */
#include "answer.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void bt_answer_init(struct bt_answer *a)
{
    memset(a, 0, sizeof(*a));
    bt_buf_init(&a->text);
    bt_buf_init(&a->msg);
}

void bt_answer_release(struct bt_answer *a)
{
    bt_buf_release(&a->text);
    bt_buf_release(&a->msg);
    free(a->msg_id);
    free(a->done_id);
    memset(a, 0, sizeof(*a));
}

static void join(struct bt_buf *b, const char *s, size_t n)
{
    if (!n)
        return;
    if (b->len)
        bt_buf_adds(b, "\n\n");
    bt_buf_add(b, s, n);
}

static int same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

void bt_answer_add(struct bt_answer *a, const struct bt_event *ev)
{
    const struct bt_item *it = &ev->item;
    if (it->kind != BT_ITEM_MESSAGE || !it->id)
        return;
    if (ev->type == BT_EVENT_ITEM_DELTA) {
        if (same(a->done_id, it->id))
            return;
        if (!same(a->msg_id, it->id)) {
            free(a->msg_id);
            a->msg_id = bt_xstrdup(it->id);
            bt_buf_reset(&a->msg);
        }
        bt_buf_add(&a->msg, ev->delta, ev->delta_len);
    } else if (ev->type == BT_EVENT_ITEM_COMPLETED) {
        if (it->text)
            join(&a->text, it->text, it->text_len);
        else if (same(a->msg_id, it->id))
            join(&a->text, a->msg.data, a->msg.len);
        free(a->done_id);
        a->done_id = bt_xstrdup(it->id);
        free(a->msg_id);
        a->msg_id = NULL;
        bt_buf_reset(&a->msg);
    }
}

int bt_answer_repairs(const struct bt_answer *a, const struct bt_event *ev)
{
    const struct bt_item *it = &ev->item;
    if (ev->type != BT_EVENT_ITEM_COMPLETED || it->kind != BT_ITEM_MESSAGE || !it->text ||
        !same(a->msg_id, it->id))
        return 0;
    return it->text_len != a->msg.len || memcmp(it->text, a->msg.data, a->msg.len) != 0;
}

void bt_answer_add_json(struct bt_answer *a, const char *json, size_t len)
{
    cJSON *j = cJSON_ParseWithLength(json, len);
    const char *type = bt_json_str(j, "type");
    int t = type ? bt_event_type_parse(type) : -1;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(j, "item");
    const char *kind = bt_json_str(item, "kind");
    if ((t == BT_EVENT_ITEM_DELTA || t == BT_EVENT_ITEM_COMPLETED) && kind &&
        strcmp(kind, "message") == 0) {
        struct bt_event ev;
        bt_event_init(&ev, (enum bt_event_type)t);
        ev.item.kind = BT_ITEM_MESSAGE;
        ev.item.id = bt_json_str(item, "id");
        ev.item.text = bt_json_str(item, "text");
        ev.item.text_len = ev.item.text ? strlen(ev.item.text) : 0;
        ev.delta = bt_json_str(j, "text");
        ev.delta_len = ev.delta ? strlen(ev.delta) : 0;
        bt_answer_add(a, &ev);
    }
    cJSON_Delete(j);
}

char *bt_answer_text(const struct bt_answer *a)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_add(&b, a->text.data, a->text.len);
    if (a->msg_id)
        join(&b, a->msg.data, a->msg.len);
    return bt_buf_detach(&b, NULL);
}
