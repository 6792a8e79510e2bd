/* SPDX-License-Identifier: MIT */
/* Unit tests of the line framer: every split offset, CR/LF, U+2028, size
 * bound, final line without LF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "framer.h"

struct collected {
    struct bt_buf lines; /* each line followed by '|' */
    int count;
    size_t too_long; /* bytes reported dropped */
    int too_long_calls;
};

static void on_line(void *data, char *line, size_t len)
{
    struct collected *c = data;
    assert_int_equal(line[len], '\0');
    bt_buf_add(&c->lines, line, len);
    bt_buf_addc(&c->lines, '|');
    c->count++;
}

static void on_too_long(void *data, size_t dropped)
{
    struct collected *c = data;
    c->too_long += dropped;
    c->too_long_calls++;
}

static const struct bt_framer_ops ops = {on_line, on_too_long};

static void feed_split(const char *in, size_t n, size_t cut, size_t max, struct collected *c)
{
    struct bt_framer f;
    memset(c, 0, sizeof(*c));
    bt_buf_init(&c->lines);
    bt_framer_init(&f, max, &ops, c);
    bt_framer_feed(&f, in, cut);
    bt_framer_feed(&f, in + cut, n - cut);
    bt_framer_finish(&f);
    bt_framer_release(&f);
}

static void test_every_split_offset(void **state)
{
    (void)state;
    const char in[] = "{\"a\":1}\n{\"b\":\"x\xe2\x80\xa8y\"}\r\n\nlast";
    const char want[] = "{\"a\":1}|{\"b\":\"x\xe2\x80\xa8y\"}||last|";
    for (size_t cut = 0; cut <= sizeof(in) - 1; cut++) {
        struct collected c;
        feed_split(in, sizeof(in) - 1, cut, 0, &c);
        assert_string_equal(c.lines.data, want);
        assert_int_equal(c.count, 4);
        bt_buf_release(&c.lines);
    }
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    const char in[] = "one\r\ntwo\nthree\n";
    struct collected c = {0};
    struct bt_framer f;
    bt_buf_init(&c.lines);
    bt_framer_init(&f, 0, &ops, &c);
    for (size_t i = 0; i < sizeof(in) - 1; i++)
        bt_framer_feed(&f, in + i, 1);
    bt_framer_finish(&f);
    assert_string_equal(c.lines.data, "one|two|three|");
    bt_framer_release(&f);
    bt_buf_release(&c.lines);
}

static void test_only_one_cr_stripped(void **state)
{
    (void)state;
    const char in[] = "a\r\r\nb\rc\n";
    struct collected c;
    feed_split(in, sizeof(in) - 1, 3, 0, &c);
    assert_int_equal(c.count, 2);
    assert_memory_equal(c.lines.data, "a\r|b\rc|", 7);
    bt_buf_release(&c.lines);
}

static void test_unicode_separators_do_not_split(void **state)
{
    (void)state;
    const char in[] = "x\xe2\x80\xa8y\xe2\x80\xa9z\n";
    struct collected c;
    feed_split(in, sizeof(in) - 1, 2, 0, &c);
    assert_int_equal(c.count, 1);
    bt_buf_release(&c.lines);
}

static void test_size_bound(void **state)
{
    (void)state;
    /* a 20-byte line with a bound of 8, between two short lines */
    const char in[] = "ok\n01234567890123456789\nafter\n";
    for (size_t cut = 0; cut <= sizeof(in) - 1; cut++) {
        struct collected c;
        feed_split(in, sizeof(in) - 1, cut, 8, &c);
        assert_string_equal(c.lines.data, "ok|after|");
        assert_int_equal(c.too_long_calls, 1);
        assert_int_equal(c.too_long, 20);
        bt_buf_release(&c.lines);
    }
}

static void test_line_at_exact_bound(void **state)
{
    (void)state;
    const char in[] = "12345678\n123456789\n";
    struct collected c;
    feed_split(in, sizeof(in) - 1, 4, 8, &c);
    assert_string_equal(c.lines.data, "12345678|");
    assert_int_equal(c.too_long_calls, 1);
    bt_buf_release(&c.lines);
}

static void test_oversize_unterminated_at_eof(void **state)
{
    (void)state;
    const char in[] = "abcdefghijkl";
    struct collected c;
    feed_split(in, sizeof(in) - 1, 5, 4, &c);
    assert_int_equal(c.count, 0);
    assert_int_equal(c.too_long, 12);
    bt_buf_release(&c.lines);
}

static void test_nul_bytes_kept(void **state)
{
    (void)state;
    const char in[] = "a\0b\n";
    struct collected c;
    feed_split(in, sizeof(in) - 1, 1, 0, &c);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.lines.len, 4);
    assert_memory_equal(c.lines.data, "a\0b|", 4);
    bt_buf_release(&c.lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split_offset),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_only_one_cr_stripped),
        cmocka_unit_test(test_unicode_separators_do_not_split),
        cmocka_unit_test(test_size_bound),
        cmocka_unit_test(test_line_at_exact_bound),
        cmocka_unit_test(test_oversize_unterminated_at_eof),
        cmocka_unit_test(test_nul_bytes_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
