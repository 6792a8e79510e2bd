/* SPDX-License-Identifier: MIT */
/* jscan: allocation-free JSON walking for parser hot paths (see jscan.h). */
#include "jscan.h"

#include <string.h>

#define MAX_DEPTH 512 /* deeper nesting is refused rather than walked */

void bt_jscan_init(struct bt_jscan *s, const char *text, size_t len)
{
    s->p = text;
    s->end = text + len;
}

static void ws(struct bt_jscan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int expect(struct bt_jscan *s, char c)
{
    ws(s);
    if (s->p >= s->end || *s->p != c)
        return -1;
    s->p++;
    return 0;
}

int bt_jscan_object(struct bt_jscan *s)
{
    return expect(s, '{');
}

/* Past the closing quote of a string whose opening quote was consumed;
 * sets the raw span. Backslashes escape the next byte. */
static int string_span(struct bt_jscan *s, const char **start, size_t *len)
{
    const char *b = s->p;
    const char *q = b;
    for (;;) {
        q = memchr(q, '"', (size_t)(s->end - q));
        if (!q)
            return -1;
        size_t slashes = 0;
        while (q - slashes > b && q[-1 - (ptrdiff_t)slashes] == '\\')
            slashes++;
        if (slashes % 2 == 0)
            break;
        q++;
    }
    *start = b;
    *len = (size_t)(q - b);
    s->p = q + 1;
    return 0;
}

int bt_jscan_member(struct bt_jscan *s, const char **key, size_t *key_len)
{
    ws(s);
    if (s->p < s->end && *s->p == ',')
        s->p++, ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    if (expect(s, '"') || string_span(s, key, key_len) || expect(s, ':'))
        return -1;
    ws(s);
    return 1;
}

/* Skip a number, true, false or null: up to the next delimiter. */
static int skip_scalar(struct bt_jscan *s)
{
    const char *b = s->p;
    while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
        s->p++;
    return s->p > b ? 0 : -1;
}

int bt_jscan_skip(struct bt_jscan *s)
{
    int depth = 0;
    ws(s);
    do {
        if (s->p >= s->end)
            return -1;
        char c = *s->p;
        const char *str;
        size_t n;
        if (c == '"') {
            s->p++;
            if (string_span(s, &str, &n))
                return -1;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH)
                return -1;
            s->p++;
        } else if (c == '}' || c == ']') {
            if (--depth < 0)
                return -1;
            s->p++;
        } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (depth == 0)
                return -1;
            s->p++;
        } else if (skip_scalar(s)) {
            return -1;
        }
    } while (depth > 0);
    return 0;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16;
        if (d > 15)
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

static void put_utf8(struct bt_buf *out, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    bt_buf_add(out, b, n);
}

/* \uXXXX at p (after the backslash and 'u'), with a following low surrogate
 * if p holds a high one; lone surrogates become U+FFFD. Returns bytes used. */
static size_t unicode_escape(const char *p, const char *end, struct bt_buf *out)
{
    unsigned hi, lo;
    if (end - p < 4 || hex4(p, &hi))
        return 0;
    if (hi >= 0xD800 && hi <= 0xDBFF && end - p >= 10 && p[4] == '\\' && p[5] == 'u' &&
        hex4(p + 6, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
        put_utf8(out, 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
        return 10;
    }
    put_utf8(out, hi >= 0xD800 && hi <= 0xDFFF ? 0xFFFD : hi);
    return 4;
}

static int decode(const char *p, size_t n, struct bt_buf *out)
{
    const char *end = p + n;
    bt_buf_grow(out, n);
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        if (!bs) {
            bt_buf_add(out, p, (size_t)(end - p));
            return 0;
        }
        bt_buf_add(out, p, (size_t)(bs - p));
        if (bs + 1 >= end)
            return -1;
        char c = bs[1];
        const char *simple = strchr("\"\\/bfnrt", c);
        if (c && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            bt_buf_addc(out, map[simple - "\"\\/bfnrt"]);
            p = bs + 2;
        } else if (c == 'u') {
            size_t used = unicode_escape(bs + 2, end, out);
            if (!used)
                return -1;
            p = bs + 2 + used;
        } else {
            return -1;
        }
    }
    return 0;
}

int bt_jscan_string(struct bt_jscan *s, struct bt_buf *out)
{
    const char *str;
    size_t n;
    if (expect(s, '"') || string_span(s, &str, &n))
        return -1;
    return decode(str, n, out);
}

int bt_jscan_int(struct bt_jscan *s, int64_t *v)
{
    ws(s);
    int neg = s->p < s->end && *s->p == '-';
    const char *q = s->p + neg;
    int64_t n = 0;
    const char *digits = q;
    while (q < s->end && *q >= '0' && *q <= '9' && q - digits < 18)
        n = n * 10 + (*q++ - '0');
    if (q == digits || (q < s->end && strchr(".eE0123456789", *q)))
        return -1;
    *v = neg ? -n : n;
    s->p = q;
    return 0;
}

int bt_jscan_key_is(const char *key, size_t key_len, const char *name)
{
    return strlen(name) == key_len && memcmp(key, name, key_len) == 0;
}
