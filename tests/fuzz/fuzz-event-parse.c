/* SPDX-License-Identifier: MIT */
/*
 * fuzz-event-parse: libFuzzer target for bt_event_parse, the reader of
 * stored events. Each line of the input, and then the whole input, is
 * parsed. A failure must leave no document; an event that parses must
 * encode to one JSON line that parses again and encodes to the same bytes,
 * so nothing the parser accepts is lost or changed on the next round. The
 * one difference allowed: invalid UTF-8 that the first encoding wrote as
 * the escape \ufffd reads back as U+FFFD, which the encoder writes raw.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"

/* s with each \ufffd escape written as the raw U+FFFD; other escapes kept */
static void raw_fffd(const struct bt_buf *s, struct bt_buf *out)
{
    for (size_t i = 0; i < s->len; i++) {
        if (s->data[i] != '\\' || i + 1 == s->len) {
            bt_buf_addc(out, s->data[i]);
        } else if (s->len - i >= 6 && memcmp(s->data + i, "\\ufffd", 6) == 0) {
            bt_buf_adds(out, "\xef\xbf\xbd");
            i += 5;
        } else {
            bt_buf_add(out, s->data + i, 2);
            i++;
        }
    }
}

static void check(const char *data, size_t size)
{
    struct bt_event ev;
    struct bt_event_doc *doc;
    if (bt_event_parse(data, size, &ev, &doc) != 0) {
        if (doc || ev.item.id || ev.run)
            abort();
        return;
    }
    struct bt_buf once = BT_BUF_INIT, twice = BT_BUF_INIT, want = BT_BUF_INIT;
    bt_event_to_json(&ev, &once);
    bt_event_doc_free(doc);
    if (once.len == 0 || once.data[once.len - 1] != '\n' || memchr(once.data, '\n', once.len - 1))
        abort();
    if (bt_event_parse(once.data, once.len, &ev, &doc) != 0)
        abort();
    bt_event_to_json(&ev, &twice);
    bt_event_doc_free(doc);
    raw_fffd(&once, &want);
    if (twice.len != want.len || memcmp(twice.data, want.data, want.len) != 0)
        abort();
    bt_buf_release(&once);
    bt_buf_release(&twice);
    bt_buf_release(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *lf = memchr(s, '\n', (size_t)(end - s));
        size_t n = lf ? (size_t)(lf - s) : (size_t)(end - s);
        check(s, n);
        s += n + (lf ? 1 : 0);
    }
    check((const char *)data, size);
    return 0;
}
