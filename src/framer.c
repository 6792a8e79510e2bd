/* SPDX-License-Identifier: MIT */
/* framer: LF line splitting with a size bound (see framer.h). */
#include "framer.h"

#include <string.h>

void bt_framer_init(struct bt_framer *f, size_t max_line, const struct bt_framer_ops *ops,
                    void *data)
{
    bt_buf_init(&f->pending);
    f->max_line = max_line ? max_line : BT_FRAMER_MAX_LINE_DEFAULT;
    f->dropping = 0;
    f->ops = ops;
    f->data = data;
}

void bt_framer_release(struct bt_framer *f)
{
    bt_buf_release(&f->pending);
    f->dropping = 0;
}

static void emit(struct bt_framer *f, char *line, size_t len)
{
    if (len && line[len - 1] == '\r')
        line[--len] = '\0';
    f->ops->on_line(f->data, line, len);
}

/* Start dropping an oversize line whose first `have` bytes were seen. */
static void overflow(struct bt_framer *f, size_t have)
{
    f->dropping = have;
    bt_buf_release(&f->pending);
}

static void finish_drop(struct bt_framer *f, size_t more)
{
    size_t dropped = f->dropping + more;
    f->dropping = 0;
    if (f->ops->on_too_long)
        f->ops->on_too_long(f->data, dropped);
}

void bt_framer_feed(struct bt_framer *f, const char *buf, size_t n)
{
    while (n) {
        const char *lf = memchr(buf, '\n', n);
        size_t take = lf ? (size_t)(lf - buf) : n;
        if (f->dropping) {
            if (!lf) {
                f->dropping += take;
                return;
            }
            finish_drop(f, take);
        } else if (f->pending.len + take > f->max_line) {
            if (!lf) {
                overflow(f, f->pending.len + take);
                return;
            }
            size_t have = f->pending.len + take;
            bt_buf_release(&f->pending);
            f->dropping = have;
            finish_drop(f, 0);
        } else if (!lf) {
            bt_buf_add(&f->pending, buf, take);
            return;
        } else {
            bt_buf_add(&f->pending, buf, take);
            emit(f, f->pending.data, f->pending.len);
            bt_buf_reset(&f->pending);
        }
        buf += take + 1;
        n -= take + 1;
    }
}

void bt_framer_finish(struct bt_framer *f)
{
    if (f->dropping) {
        finish_drop(f, 0);
    } else if (f->pending.len) {
        emit(f, f->pending.data, f->pending.len);
        bt_buf_reset(&f->pending);
    }
}
