/* SPDX-License-Identifier: MIT */
/*
 * fuzz-framer: libFuzzer target for the line framer. The input is split at
 * offsets taken from its first bytes and fed in pieces, with a small line
 * bound so the oversize path runs too; every line must come out
 * NUL-terminated, without LF, and the bytes must add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "framer.h"

struct tally {
    size_t bytes; /* line bytes + separators seen */
};

static void on_line(void *data, char *line, size_t len)
{
    struct tally *t = data;
    if (line[len] != '\0' || memchr(line, '\n', len))
        abort();
    t->bytes += len;
}

static void on_too_long(void *data, size_t dropped)
{
    struct tally *t = data;
    t->bytes += dropped;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct bt_framer_ops ops = {on_line, on_too_long};
    struct tally t = {0};
    struct bt_framer f;
    size_t max = size ? 1 + data[0] % 64 : 8;
    bt_framer_init(&f, max, &ops, &t);
    size_t off = 0, i = 0;
    while (off < size) {
        size_t n = 1 + (size_t)data[i++ % size] % 17;
        if (n > size - off)
            n = size - off;
        bt_framer_feed(&f, (const char *)data + off, n);
        off += n;
    }
    bt_framer_finish(&f);
    bt_framer_release(&f);
    /* every byte is either in a line, a dropped oversize line, an LF or one
     * stripped CR per line */
    if (t.bytes > size)
        abort();
    return 0;
}
