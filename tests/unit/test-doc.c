/* SPDX-License-Identifier: MIT */
/* Unit tests of src/cli/doc.c: a command's help text parsed into options,
 * prose and arguments, and the roff escaping of the man page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd-args.h"
#include "doc.h"

static int no_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static const struct bt_opt demo_opts[] = {
    {'c', 'c', "coder", "CODER", "the coder;\nmore about it", NULL},
    {'m', 0, "mode", "MODE", "how: fast or slow", "fast|slow"},
    {'f', 0, "flag", NULL, "a flag", NULL},
    {'C', 'C', "cwd", "DIR", "where", NULL},
    {0}};

static const struct bt_cmd demo = {"demo",
                                   no_run,
                                   "CONV WORD...",
                                   "a demo",
                                   demo_opts,
                                   "Prose that spans\n"
                                   "two lines.\n"
                                   "\n"
                                   "A second paragraph.\n"};

static void test_parse_options_prose_and_arguments(void **state)
{
    (void)state;
    struct bt_doc_cmd d;
    bt_doc_parse(NULL, &demo, &d);
    assert_int_equal(d.nitems, 7); /* four options, -h/--help, two paragraphs */
    const struct bt_doc_item *c = &d.items[0];
    assert_true(c->is_opt);
    assert_string_equal(c->shrt, "-c");
    assert_string_equal(c->lng, "--coder");
    assert_string_equal(c->arg, "CODER");
    assert_int_equal(c->value, BT_DOC_VALUE_CODER);
    assert_string_equal(c->text, "the coder; more about it");
    assert_int_equal(c->first_len, strlen("the coder;"));
    const struct bt_doc_item *m = &d.items[1];
    assert_null(m->shrt);
    assert_string_equal(m->lng, "--mode");
    assert_int_equal(m->value, BT_DOC_VALUE_CHOICE); /* from the table's choices */
    assert_string_equal(m->choices, "fast slow");
    assert_null(d.items[2].arg);
    assert_int_equal(d.items[2].value, BT_DOC_VALUE_NONE);
    assert_int_equal(d.items[3].value, BT_DOC_VALUE_DIR);
    assert_string_equal(d.items[4].lng, "--help");
    assert_false(d.items[5].is_opt);
    assert_string_equal(d.items[5].text, "Prose that spans two lines.");
    assert_string_equal(d.items[6].text, "A second paragraph.");
    assert_int_equal(d.nargs, 2);
    assert_string_equal(d.args[0].name, "CONV");
    assert_int_equal(d.args[0].value, BT_DOC_VALUE_CONV);
    assert_false(d.args[0].repeat);
    assert_string_equal(d.args[1].name, "WORD...");
    assert_true(d.args[1].repeat);
    bt_doc_release(&d);
}

static void test_parse_choice_argument(void **state)
{
    (void)state;
    const struct bt_cmd cmd = {"sh", no_run, "bash|zsh", "shells", NULL, ""};
    struct bt_doc_cmd d;
    bt_doc_parse(NULL, &cmd, &d);
    assert_int_equal(d.nitems, 1); /* -h/--help */
    assert_int_equal(d.nargs, 1);
    assert_int_equal(d.args[0].value, BT_DOC_VALUE_CHOICE);
    assert_string_equal(d.args[0].choices, "bash zsh");
    bt_doc_release(&d);
    /* upper-case alternatives are placeholders, not choices */
    const struct bt_cmd p = {"p", no_run, "CONV PROMPT|-", "prompt", NULL, ""};
    bt_doc_parse(NULL, &p, &d);
    assert_int_equal(d.args[1].value, BT_DOC_VALUE_NONE);
    assert_null(d.args[1].choices);
    bt_doc_release(&d);
}

static char *roff(const char *s)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_doc_roff_text(&b, s);
    return bt_buf_detach(&b, NULL);
}

static void test_roff_escapes(void **state)
{
    (void)state;
    char *r = roff("a\\b --json `baton ls` caf\xc3\xa9 \xff x\ty");
    assert_string_equal(r, "a\\eb \\-\\-json \\fBbaton ls\\fR caf\\[u00E9] \\[uFFFD] x y");
    free(r);
    /* a '.' or '\'' starting a line would be a request */
    r = roff(".TH not a macro");
    assert_string_equal(r, "\\&.TH not a macro");
    free(r);
    r = roff("'quoted");
    assert_string_equal(r, "\\&'quoted");
    free(r);
    /* an unclosed ` still ends in the roman font */
    r = roff("`open");
    assert_string_equal(r, "\\fBopen\\fR");
    free(r);
}

static void test_roff_breaks_long_lines_safely(void **state)
{
    (void)state;
    /* words that start with '.' and '\'' land at the start of lines */
    struct bt_buf in = BT_BUF_INIT;
    for (int i = 0; i < 200; i++)
        bt_buf_adds(&in, i % 2 ? " .dot" : " 'tick");
    char *r = roff(in.data + 1);
    size_t lines = 0;
    for (const char *l = r; *l; lines++) {
        size_t n = strcspn(l, "\n");
        assert_true(n <= 80);
        assert_true(l[0] != '.' && l[0] != '\'');
        l += n + (l[n] == '\n');
    }
    assert_true(lines > 10);
    free(r);
    bt_buf_release(&in);
}

static void test_roff_usage_fonts(void **state)
{
    (void)state;
    struct bt_buf b = BT_BUF_INIT;
    bt_doc_roff_usage(&b, "[--approval deny|auto] CONV WORD...");
    assert_string_equal(b.data, "[\\fB\\-\\-approval\\fR\\ \\fBdeny\\fR|\\fBauto\\fR] "
                                "\\fICONV\\fR \\fIWORD...\\fR");
    bt_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_options_prose_and_arguments),
        cmocka_unit_test(test_parse_choice_argument),
        cmocka_unit_test(test_roff_escapes),
        cmocka_unit_test(test_roff_breaks_long_lines_safely),
        cmocka_unit_test(test_roff_usage_fonts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
