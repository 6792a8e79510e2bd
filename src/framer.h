/* SPDX-License-Identifier: MIT */
/*
 * framer: splits a coder's stdout byte stream into lines.
 *
 * Lines end at LF only: U+2028/U+2029 and lone CR are ordinary bytes inside a
 * line (JSON allows them raw in strings). One trailing CR before the LF is
 * stripped, so CRLF streams parse like LF streams. A line may arrive split
 * across any number of reads. A line longer than max_line bytes is not
 * buffered: its bytes are dropped up to the next LF and on_too_long reports
 * how many were dropped, so one runaway line cannot exhaust memory.
 */
#ifndef BT_FRAMER_H
#define BT_FRAMER_H

#include <stddef.h>

#include "util.h"

#define BT_FRAMER_MAX_LINE_DEFAULT ((size_t)64 << 20) /* 64 MiB */

struct bt_framer_ops {
    /* One complete line without its LF (and without one CR before it).
     * line is NUL-terminated at line[len], may hold other NUL bytes, is
     * writable, and is valid for the call only. */
    void (*on_line)(void *data, char *line, size_t len);
    /* A line exceeded max_line; `dropped` bytes of it were discarded. */
    void (*on_too_long)(void *data, size_t dropped);
};

struct bt_framer {
    struct bt_buf pending; /* bytes of an unfinished line */
    size_t max_line;       /* bound on a line, in bytes */
    size_t dropping;       /* > 0: bytes dropped of an oversize line */
    const struct bt_framer_ops *ops;
    void *data;
};

/* max_line 0 selects BT_FRAMER_MAX_LINE_DEFAULT. */
void bt_framer_init(struct bt_framer *f, size_t max_line, const struct bt_framer_ops *ops,
                    void *data);
void bt_framer_release(struct bt_framer *f);

/* Feed n bytes; calls on_line for every line completed by them. */
void bt_framer_feed(struct bt_framer *f, const char *buf, size_t n);

/* End of stream: a final line without LF is delivered as a line; a pending
 * oversize line is reported. */
void bt_framer_finish(struct bt_framer *f);

#endif
