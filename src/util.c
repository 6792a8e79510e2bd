/* SPDX-License-Identifier: MIT */
/* util: allocation wrappers, bt_buf, time and JSON/UTF-8 string helpers. */
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char bt_buf_empty[1];

static void oom(size_t n)
{
    fprintf(stderr, "baton: out of memory allocating %zu bytes\n", n);
    abort();
}

void *bt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *bt_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom(count * size);
    return p;
}

void *bt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *bt_xstrdup(const char *s)
{
    return bt_xstrndup(s, strlen(s));
}

char *bt_xstrndup(const char *s, size_t n)
{
    char *p = bt_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *bt_xasprintf(const char *fmt, ...)
{
    struct bt_buf b = BT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vaddf(&b, fmt, ap);
    va_end(ap);
    return bt_buf_detach(&b, NULL);
}

void bt_buf_init(struct bt_buf *b)
{
    b->data = bt_buf_empty;
    b->len = 0;
    b->cap = 0;
}

void bt_buf_release(struct bt_buf *b)
{
    if (b->cap)
        free(b->data);
    bt_buf_init(b);
}

void bt_buf_reset(struct bt_buf *b)
{
    b->len = 0;
    if (b->cap)
        b->data[0] = '\0';
}

void bt_buf_grow(struct bt_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap < SIZE_MAX / 2 ? cap * 2 : need;
    if (b->cap) {
        b->data = bt_xrealloc(b->data, cap);
    } else {
        b->data = bt_xmalloc(cap);
        b->data[0] = '\0';
    }
    b->cap = cap;
}

void bt_buf_add(struct bt_buf *b, const void *p, size_t n)
{
    if (!n)
        return;
    bt_buf_grow(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void bt_buf_adds(struct bt_buf *b, const char *s)
{
    bt_buf_add(b, s, strlen(s));
}

void bt_buf_addc(struct bt_buf *b, char c)
{
    bt_buf_add(b, &c, 1);
}

void bt_buf_vaddf(struct bt_buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n <= 0)
        return;
    bt_buf_grow(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void bt_buf_addf(struct bt_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vaddf(b, fmt, ap);
    va_end(ap);
}

void bt_buf_consume(struct bt_buf *b, size_t n)
{
    if (n >= b->len) {
        bt_buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *bt_buf_detach(struct bt_buf *b, size_t *len)
{
    char *p = b->cap ? b->data : bt_xstrdup("");
    if (len)
        *len = b->len;
    bt_buf_init(b);
    return p;
}

int64_t bt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t bt_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void bt_time_rfc3339(int64_t ms, char out[32])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03dZ", (int)(ms % 1000));
}

void bt_time_local(int64_t ms, char out[48])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (!localtime_r(&secs, &tm) || strftime(out, 48, "%Y-%m-%d %H:%M %Z", &tm) == 0)
        snprintf(out, 48, "%lld ms", (long long)ms);
}

void bt_duration_format(int64_t ms, char out[32])
{
    if (ms < 0)
        ms = 0;
    if (ms < 100) {
        snprintf(out, 32, "%lld ms", (long long)ms);
    } else if (ms < 600000) {
        int n = snprintf(out, 32, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
        while (out[n - 1] == '0') /* "0.500" is "0.5", "90.000" is "90" */
            out[--n] = '\0';
        if (out[n - 1] == '.')
            out[--n] = '\0';
        snprintf(out + n, (size_t)(32 - n), " s");
    } else if (ms < 36000000) {
        long long s = (ms + 500) / 1000;
        if (s % 60)
            snprintf(out, 32, "%lld min %lld s", s / 60, s % 60);
        else
            snprintf(out, 32, "%lld min", s / 60);
    } else {
        long long m = (ms + 30000) / 60000;
        if (m % 60)
            snprintf(out, 32, "%lld h %lld min", m / 60, m % 60);
        else
            snprintf(out, 32, "%lld h", m / 60);
    }
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 if the
 * bytes there are not a valid, shortest-form, non-surrogate sequence. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if ((c & 0xE0) == 0xC0) {
        len = 2, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void bt_json_quote(struct bt_buf *b, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    bt_buf_grow(b, n + 2);
    bt_buf_addc(b, '"');
    size_t run = 0; /* start of a pending run of bytes copied verbatim */
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        size_t len = c < 0x80 ? 1 : utf8_seq(s + i, n - i);
        if (len > 1 && !(len == 3 && c == 0xE2 && s[i + 1] == 0x80 &&
                         (s[i + 2] == 0xA8 || s[i + 2] == 0xA9))) {
            i += len;
            continue;
        }
        bt_buf_add(b, s + run, i - run);
        if (len == 0) {
            bt_buf_adds(b, "\\ufffd");
            i++;
        } else if (len == 3) {
            bt_buf_adds(b, s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029");
            i += 3;
        } else {
            switch (c) {
            case '"': bt_buf_adds(b, "\\\""); break;
            case '\\': bt_buf_adds(b, "\\\\"); break;
            case '\n': bt_buf_adds(b, "\\n"); break;
            case '\r': bt_buf_adds(b, "\\r"); break;
            case '\t': bt_buf_adds(b, "\\t"); break;
            default: {
                char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                bt_buf_adds(b, e);
            }
            }
            i++;
        }
        run = i;
    }
    bt_buf_add(b, s + run, n - run);
    bt_buf_addc(b, '"');
}

char *bt_utf8_sanitize(const char *str, size_t n, size_t *bad)
{
    const unsigned char *s = (const unsigned char *)str;
    struct bt_buf b = BT_BUF_INIT;
    size_t nbad = 0, run = 0, i = 0;
    bt_buf_grow(&b, n);
    while (i < n) {
        if (s[i] < 0x80 && s[i] != 0) {
            i++;
            continue;
        }
        size_t len = s[i] ? utf8_seq(s + i, n - i) : 0;
        if (len) {
            i += len;
            continue;
        }
        bt_buf_add(&b, s + run, i - run);
        bt_buf_adds(&b, "\xEF\xBF\xBD");
        nbad++;
        run = ++i;
    }
    bt_buf_add(&b, s + run, n - run);
    if (bad)
        *bad = nbad;
    return bt_buf_detach(&b, NULL);
}

size_t bt_utf8_cut(const char *str, size_t n, size_t max)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n <= max)
        return n;
    size_t i = max;
    while (i > 0 && (s[i] & 0xC0) == 0x80)
        i--;
    return i;
}

void bt_strv_init(struct bt_strv *sv)
{
    sv->cap = 8;
    sv->n = 0;
    sv->v = bt_xcalloc(sv->cap, sizeof(char *));
}

void bt_strv_push_take(struct bt_strv *sv, char *s)
{
    if (sv->n + 1 >= sv->cap) {
        sv->cap *= 2;
        sv->v = bt_xrealloc(sv->v, sv->cap * sizeof(char *));
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void bt_strv_push(struct bt_strv *sv, const char *s)
{
    bt_strv_push_take(sv, bt_xstrdup(s));
}

void bt_strv_pushf(struct bt_strv *sv, const char *fmt, ...)
{
    struct bt_buf b = BT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vaddf(&b, fmt, ap);
    va_end(ap);
    bt_strv_push_take(sv, bt_buf_detach(&b, NULL));
}

void bt_strv_release(struct bt_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

size_t bt_ansi_len(const char *s, size_t n)
{
    if (n < 2 || s[0] != '\x1b')
        return 0;
    size_t i = 2;
    if (s[1] == '[') { /* CSI: parameters, then a final byte 0x40-0x7e */
        while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x40)
            i++;
        return i < n ? i + 1 : n;
    }
    if (s[1] == ']') { /* OSC: until BEL or ESC \ */
        while (i < n && s[i] != '\a' && !(s[i] == '\x1b' && i + 1 < n && s[i + 1] == '\\'))
            i++;
        return i < n ? (s[i] == '\a' ? i + 1 : i + 2) : n;
    }
    return 2;
}

char *bt_strip_ansi(const char *s, size_t n)
{
    struct bt_buf b = BT_BUF_INIT;
    size_t run = 0, i = 0;
    while (i < n) {
        size_t a = s[i] == '\x1b' ? bt_ansi_len(s + i, n - i) : 0;
        if (!a) {
            i++;
            continue;
        }
        bt_buf_add(&b, s + run, i - run);
        i += a;
        run = i;
    }
    bt_buf_add(&b, s + run, n - run);
    return bt_buf_detach(&b, NULL);
}

size_t bt_utf8_invalid_at(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        /* eight ASCII bytes at a time: coders' lines are mostly ASCII, and
         * a byte at a time was a quarter of baton's CPU on a pi stream */
        if (n - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080u) == 0)) {
            i += 8;
            continue;
        }
        size_t len = s[i] < 0x80 ? 1 : utf8_seq(s + i, n - i);
        if (!len)
            return i;
        i += len;
    }
    return n;
}

/* Bytes of a control character at s (0 if none): C0 but tab and newline,
 * DEL, and C1 controls encoded as C2 80..9F. */
static size_t control_len(const unsigned char *s, size_t n)
{
    if ((s[0] < 0x20 && s[0] != '\t' && s[0] != '\n') || s[0] == 0x7f)
        return 1;
    if (s[0] == 0xc2 && n > 1 && s[1] >= 0x80 && s[1] <= 0x9f)
        return 2;
    return 0;
}

void bt_term_write(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0, i = 0;
    while (i < n) {
        size_t c = control_len(s + i, n - i);
        if (!c) {
            i++;
            continue;
        }
        fwrite(s + run, 1, i - run, f);
        fputc('?', f);
        i += c;
        run = i;
    }
    fwrite(s + run, 1, n - run, f);
}

void bt_term_printf(FILE *f, const char *fmt, ...)
{
    struct bt_buf b = BT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vaddf(&b, fmt, ap);
    va_end(ap);
    bt_term_write(f, b.data ? b.data : "", b.len);
    bt_buf_release(&b);
}

char *bt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return NULL;
    struct bt_buf b = BT_BUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        bt_buf_add(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        bt_buf_release(&b);
        return NULL;
    }
    return bt_buf_detach(&b, len);
}

void bt_json_member(struct bt_buf *b, const char *key, const char *v)
{
    if (b->len && b->data[b->len - 1] != '{')
        bt_buf_addc(b, ',');
    bt_json_quote(b, key, strlen(key));
    bt_buf_addc(b, ':');
    if (v)
        bt_json_quote(b, v, strlen(v));
    else
        bt_buf_adds(b, "null");
}

void bt_shell_quote(struct bt_buf *b, const char *s)
{
    size_t safe = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                            "0123456789_./:=@%+,-");
    if (*s && !s[safe]) {
        bt_buf_adds(b, s);
        return;
    }
    bt_buf_addc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            bt_buf_adds(b, "'\\''");
        else
            bt_buf_addc(b, *s);
    }
    bt_buf_addc(b, '\'');
}

char *bt_find_version(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        const char *q = p;
        int dots = 0;
        while (isdigit((unsigned char)*q) || (*q == '.' && isdigit((unsigned char)q[1]))) {
            dots += *q == '.';
            q++;
        }
        if (dots >= 2) {
            /* keep a pre-release suffix such as -alpha.3 */
            while (*q == '-' || isalnum((unsigned char)*q) ||
                   (*q == '.' && isalnum((unsigned char)q[1])))
                q++;
            return bt_xstrndup(p, (size_t)(q - p));
        }
        p = q - 1 >= p ? q - 1 : p;
    }
    return NULL;
}
