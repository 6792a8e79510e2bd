/* SPDX-License-Identifier: MIT */
/*
 * util: allocation wrappers that abort on out-of-memory, and bt_buf, a
 * growable byte buffer.
 *
 * bt_buf invariants (after bt_buf_init): `data` is never NULL and is always
 * NUL-terminated at data[len]; bt_buf_detach is the only way to take
 * ownership of the bytes. A buffer may hold NUL bytes inside [0, len).
 */
#ifndef BT_UTIL_H
#define BT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define BT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BT_PRINTF(f, a)
#endif

#define BT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation: never return NULL; print a message and abort() on OOM. */
void *bt_xmalloc(size_t n);
void *bt_xcalloc(size_t count, size_t size);
void *bt_xrealloc(void *p, size_t n);
char *bt_xstrdup(const char *s);
char *bt_xstrndup(const char *s, size_t n);
char *bt_xasprintf(const char *fmt, ...) BT_PRINTF(1, 2);

struct bt_buf {
    char *data; /* never NULL after init; NUL at data[len] */
    size_t len; /* bytes used, excluding the terminating NUL */
    size_t cap; /* bytes allocated; 0 while data points at the shared "" */
};

#define BT_BUF_INIT                                                                                \
    {                                                                                              \
        bt_buf_empty, 0, 0                                                                         \
    }
extern char bt_buf_empty[1];

void bt_buf_init(struct bt_buf *b);
/* Free the bytes and re-initialise (the buffer stays usable). */
void bt_buf_release(struct bt_buf *b);
/* Keep the allocation, set len to 0. */
void bt_buf_reset(struct bt_buf *b);
void bt_buf_grow(struct bt_buf *b, size_t extra);
void bt_buf_add(struct bt_buf *b, const void *p, size_t n);
void bt_buf_adds(struct bt_buf *b, const char *s);
void bt_buf_addc(struct bt_buf *b, char c);
void bt_buf_addf(struct bt_buf *b, const char *fmt, ...) BT_PRINTF(2, 3);
void bt_buf_vaddf(struct bt_buf *b, const char *fmt, va_list ap) BT_PRINTF(2, 0);
/* Drop the first n bytes (n <= len). */
void bt_buf_consume(struct bt_buf *b, size_t n);
/* Hand the bytes to the caller (free() them); the buffer is re-initialised. */
char *bt_buf_detach(struct bt_buf *b, size_t *len);

/* Append s as one POSIX shell word: unchanged if it holds only characters
 * no shell treats specially ([A-Za-z0-9_./:=@%+,-], not empty), else in
 * single quotes with each ' written as '\''. */
void bt_shell_quote(struct bt_buf *b, const char *s);

/* A NULL-terminated vector of owned strings (argv, envp). v is never NULL
 * after init and v[n] == NULL. */
struct bt_strv {
    char **v;
    size_t n, cap;
};
void bt_strv_init(struct bt_strv *sv);
void bt_strv_push(struct bt_strv *sv, const char *s);
void bt_strv_pushf(struct bt_strv *sv, const char *fmt, ...) BT_PRINTF(2, 3);
/* Take ownership of s. */
void bt_strv_push_take(struct bt_strv *sv, char *s);
void bt_strv_release(struct bt_strv *sv);

/* The whole of a file, NUL-terminated (it may hold other NULs), with its
 * length in *len (may be NULL). NULL if it cannot be opened or read (errno
 * says why). Caller frees. */
char *bt_read_file(const char *path, size_t *len);

/* The first "N.N.N" version number in text (with a pre-release suffix such
 * as -alpha.3); owned copy, or NULL if there is none. */
char *bt_find_version(const char *text);

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t bt_now_ms(void);
/* Milliseconds from CLOCK_MONOTONIC, for durations. */
int64_t bt_mono_ms(void);
/* Format ms-since-epoch as RFC 3339 UTC with milliseconds into out[32]:
 * "2026-11-29T12:00:00.123Z". */
void bt_time_rfc3339(int64_t ms, char out[32]);
/* Format ms-since-epoch as local time to the minute with its zone, for
 * people, into out[48]: "2026-11-29 13:00 CET" (TZ decides; UTC unset). */
void bt_time_local(int64_t ms, char out[48]);
/* A duration as a person reads it at its scale, into out[32]: under 100 ms
 * in milliseconds ("1 ms", "40 ms"); under 10 minutes in seconds, exact to
 * the millisecond ("0.5 s", "1.25 s", "90 s"); under 10 hours in minutes
 * and whole seconds ("10 min", "12 min 30 s"); then hours and minutes
 * ("10 h", "27 h 46 min"). Negative is 0 ms. */
void bt_duration_format(int64_t ms, char out[32]);

/* Append s as a JSON string literal (with quotes), escaping as RFC 8259
 * requires. Invalid UTF-8 sequences become U+FFFD; U+2028/U+2029 are escaped
 * so the output is safe for line-oriented and JavaScript consumers. */
void bt_json_quote(struct bt_buf *b, const char *s, size_t n);

/* Append "key":"v" (or "key":null for NULL v) as a member of the JSON
 * object being written to b, with a comma first unless it is the object's
 * first member (b ends in '{'). */
void bt_json_member(struct bt_buf *b, const char *key, const char *v);

/* Copy s into a new string with invalid UTF-8 and NUL bytes replaced by
 * U+FFFD. Returns the number of replacements through *bad (may be NULL).
 * Caller frees. */
char *bt_utf8_sanitize(const char *s, size_t n, size_t *bad);

/* Offset of the first byte of s[0..n) that is not part of a valid UTF-8
 * sequence (overlong forms and surrogates are invalid), or n if all is
 * valid. */
size_t bt_utf8_invalid_at(const char *s, size_t n);

/* Length of the longest prefix of s[0..n) that ends on a UTF-8 character
 * boundary and is at most max bytes. */
size_t bt_utf8_cut(const char *s, size_t n, size_t max);

/* Length of the ANSI escape sequence (CSI, OSC or a two-byte ESC x) that
 * starts at s, 0 if s[0] is not ESC. */
size_t bt_ansi_len(const char *s, size_t n);
/* Copy of s[0..n) without ANSI escape sequences; caller frees. */
char *bt_strip_ansi(const char *s, size_t n);

/* Write s[0..n) for a person to read on a terminal: control characters
 * (C0 but tab and newline, DEL, and the C1 range U+0080..U+009F) become '?',
 * so text from a coder or a prompt cannot move the cursor, retitle the
 * window or recolour the screen. */
void bt_term_write(FILE *f, const char *s, size_t n);
/* The same for printf's output: for a line that holds a coder's text (a
 * command, a question, a reason), the format's own text having no
 * control character but newline and tab. */
void bt_term_printf(FILE *f, const char *fmt, ...) BT_PRINTF(2, 3);

#endif
