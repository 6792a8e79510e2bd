/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the markdown of baton serve's page (src/serve/markdown.c): what
 * models write renders, and nothing in model output reaches the browser
 * as markup or a live script link.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "markdown.h"
#include "util.h"

static char *render(const char *text, size_t len)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_markdown_html(&b, text, len);
    return bt_buf_detach(&b, NULL);
}

static void expect(const char *text, const char *html)
{
    char *got = render(text, strlen(text));
    assert_string_equal(got, html);
    free(got);
}

static void test_markdown(void **state)
{
    (void)state;
    expect("**bold** and `code`", "<p><strong>bold</strong> and <code>code</code></p>\n");
    expect("| a | b |\n|---|---|\n| 1 | 2 |\n",
           "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n"
           "<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n");
    expect("~~gone~~ and https://example.com",
           "<p><del>gone</del> and <a href=\"https://example.com\">https://example.com</a></p>\n");
    expect("```c\nint x;\n```\n", "<pre><code class=\"language-c\">int x;\n</code></pre>\n");
    expect("", "");
}

/* Raw HTML becomes text: blocks as code, inline as text of its paragraph. */
static void test_raw_html_is_text(void **state)
{
    (void)state;
    expect("<script>alert(1)</script>",
           "<pre><code>&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>\n");
    expect("hi <img src=x onerror=alert(1)> there",
           "<p>hi &lt;img src=x onerror=alert(1)&gt; there</p>\n");
    expect("<div>\nblock\n</div>", "<pre><code>&lt;div&gt;\nblock\n&lt;/div&gt;\n</code></pre>\n");
    expect("a <b>nested <i>tags</i></b>",
           "<p>a &lt;b&gt;nested &lt;i&gt;tags&lt;/i&gt;&lt;/b&gt;</p>\n");
    expect("<!-- c --> x", "<pre><code>&lt;!-- c --&gt; x\n</code></pre>\n");
}

/* Links that would run script lose their target. */
static void test_script_links(void **state)
{
    (void)state;
    expect("[x](javascript:alert(1))", "<p><a href=\"\">x</a></p>\n");
    expect("[x](JavaScript:alert(1))", "<p><a href=\"\">x</a></p>\n");
    expect("[x](vbscript:msgbox)", "<p><a href=\"\">x</a></p>\n");
    expect("[x](data:text/html,<b>)", "<p><a href=\"\">x</a></p>\n");
    expect("![i](javascript:alert(1))", "<p><img src=\"\" alt=\"i\" /></p>\n");
}

/* Invalid UTF-8 becomes U+FFFD; a text over the bound is shown whole as
 * one code block, escaped; one at the bound is still markdown. */
static void test_bytes(void **state)
{
    (void)state;
    expect("bad \xff byte", "<p>bad \xef\xbf\xbd byte</p>\n");
    size_t n = 1 << 20;
    char *big = bt_xmalloc(n + 1);
    memset(big, 'a', n);
    big[n] = '\0';
    char *got = render(big, n);
    assert_int_equal(strlen(got), n + strlen("<pre><code></code></pre>\n"));
    assert_memory_equal(got, "<pre><code>aaa", 14);
    free(got);
    memcpy(big, "**b** <script>x", 15);
    got = render(big, BT_MARKDOWN_MAX + 1);
    assert_memory_equal(got, "<pre><code>**b** &lt;script&gt;x", 32);
    assert_string_equal(got + strlen(got) - 17, "aaa</code></pre>\n");
    free(got);
    got = render(big, BT_MARKDOWN_MAX);
    assert_memory_equal(got, "<p><strong>b</strong> &lt;script&gt;x", 37);
    free(got);
    got = render("a\0b", 3);
    assert_string_equal(got, "<p>a\xef\xbf\xbd"
                             "b</p>\n");
    free(got);
    free(big);
}

/* A row of more cells than the bound is text (cmark-gfm's tables take
 * quadratic time in them); one at the bound is a table. */
static void test_wide_table(void **state)
{
    (void)state;
    for (size_t cells = BT_MARKDOWN_MAX_CELLS; cells <= BT_MARKDOWN_MAX_CELLS + 1; cells++) {
        struct bt_buf b = BT_BUF_INIT;
        for (size_t i = 0; i < cells; i++)
            bt_buf_adds(&b, "|a");
        bt_buf_addc(&b, '\n');
        for (size_t i = 0; i < cells; i++)
            bt_buf_adds(&b, "|-");
        bt_buf_adds(&b, "\n| x | y |\n");
        char *got = render(b.data, b.len);
        int table = strstr(got, "<table>") != NULL;
        assert_int_equal(table, cells <= BT_MARKDOWN_MAX_CELLS);
        if (!table)
            assert_memory_equal(got, "<p>|a|a|a", 9);
        free(got);
        bt_buf_release(&b);
    }
    /* the bound is per line: many short rows keep the table */
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_adds(&b, "| a | b |\n|---|---|\n");
    for (size_t i = 0; i < BT_MARKDOWN_MAX_CELLS; i++)
        bt_buf_adds(&b, "| 1 | 2 |\n");
    char *got = render(b.data, b.len);
    assert_non_null(strstr(got, "<table>"));
    free(got);
    bt_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markdown),     cmocka_unit_test(test_raw_html_is_text),
        cmocka_unit_test(test_script_links), cmocka_unit_test(test_wide_table),
        cmocka_unit_test(test_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
