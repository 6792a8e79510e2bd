/* SPDX-License-Identifier: MIT */
/* unit tests: the command-line parser (src/cli/cmd-args.c) on the real command
 * table: value forms, operands in any order, "--", and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmd-args.h"
#include "cmd.h"

#define MAX_SEEN 16

struct seen {
    int ids[MAX_SEEN];
    const char *values[MAX_SEEN];
    int n;
    int last; /* bt_args_next's last return: 0 or -1 */
    int end;  /* bt_args_end's, when the options parsed */
};

/* Parse argv (NULL-terminated) to the end, as a command does. */
static void parse(struct bt_args *a, struct seen *s, char **argv)
{
    int argc = 0, id;
    while (argv[argc])
        argc++;
    memset(s, 0, sizeof(*s));
    bt_args_init(a, bt_cmd_find(argv[0]), argc, argv);
    while ((id = bt_args_next(a)) > 0) {
        assert_true(s->n < MAX_SEEN);
        s->values[s->n] = a->value;
        s->ids[s->n++] = id;
    }
    s->last = id;
    s->end = id < 0 ? BT_EXIT_USAGE : bt_args_end(a);
}

static void test_value_forms_and_operands(void **state)
{
    (void)state;
    char *argv[] = {"send", "-mx", "C1", "--timeout=5", "--json", "--idle-timeout", "7", "-", NULL};
    struct bt_args a;
    struct seen s;
    parse(&a, &s, argv);
    assert_int_equal(s.end, BT_EXIT_USAGE); /* send takes no -m */

    char *ok[] = {"run", "-cpi", "--model=a=b", "-C", "/tmp", "--json", "-", NULL};
    parse(&a, &s, ok);
    assert_int_equal(s.end, 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.ids[0], 'c');
    assert_string_equal(s.values[0], "pi");
    assert_string_equal(s.values[1], "a=b"); /* only the first '=' splits */
    assert_string_equal(s.values[2], "/tmp");
    assert_int_equal(s.ids[3], 'j');
    assert_int_equal(a.n_operands, 1);
    assert_string_equal(a.operands[0], "-");

    char *mixed[] = {"send", "C1", "--json", "--", "--not an option", NULL};
    parse(&a, &s, mixed);
    assert_int_equal(s.end, 0);
    assert_int_equal(a.n_operands, 2);
    assert_string_equal(a.operands[0], "C1");
    assert_string_equal(a.operands[1], "--not an option");
    assert_string_equal(a.argv[0], "send"); /* the command stays */

    char *value_after_dashes[] = {"run", "--", "-c", "x", NULL}; /* all operands */
    parse(&a, &s, value_after_dashes);
    assert_int_equal(s.n, 0);
    assert_int_equal(a.n_operands, 2);
    assert_int_equal(s.end, BT_EXIT_USAGE); /* run takes one PROMPT */
}

static void test_refused(void **state)
{
    (void)state;
    char *lines[][5] = {
        {"run", "-hello", NULL},        /* never -h then "ello" */
        {"run", "-jd", "x", NULL},      /* no grouping */
        {"run", "--jso", "x", NULL},    /* no abbreviation */
        {"run", "--json=1", "x", NULL}, /* a flag takes no value */
        {"run", "x", "--model", NULL},  /* a value is missing */
        {"run", "--model", "-x", NULL}, /* a value that looks like an option */
        {"ls", "--limit", NULL},
        {"show", "--raw", NULL}, /* CONV is missing */
        {"ls", "a", NULL},       /* ls takes no operand */
    };
    struct bt_args a;
    struct seen s;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        parse(&a, &s, lines[i]);
        if (s.end != BT_EXIT_USAGE)
            fail_msg("line %zu (%s %s) parsed", i, lines[i][0], lines[i][1]);
    }
    char *attached[] = {"run", "--model=-x", "p", NULL}; /* attached: a value */
    parse(&a, &s, attached);
    assert_int_equal(s.end, 0);
    assert_string_equal(s.values[0], "-x");
}

static void test_help(void **state)
{
    (void)state;
    struct bt_args a;
    struct seen s;
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the help text itself: elsewhere */
    char *alone[] = {"run", "--json", "-h", NULL};
    parse(&a, &s, alone);
    assert_int_equal(s.end, -1);
    char *with_prompt[] = {"run", "--help", "fix it", NULL};
    parse(&a, &s, with_prompt);
    assert_int_equal(s.end, BT_EXIT_USAGE);
    char *as_prompt[] = {"run", "--", "--help", NULL};
    parse(&a, &s, as_prompt);
    assert_int_equal(s.end, 0);
    assert_int_equal(a.help, 0);
    fclose(stdout);
    stdout = saved;
}

static void test_operand_counts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int min, max;
    } cases[] = {
        {"", 0, 0},         {"CONV", 1, 1},      {"CONV [PROMPT|-]", 1, 2},
        {"WORD...", 1, -1}, {"[COMMAND]", 0, 1}, {"CONV MSG", 2, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int min, max;
        bt_args_operand_counts(cases[i].text, &min, &max);
        assert_int_equal(min, cases[i].min);
        assert_int_equal(max, cases[i].max);
    }
}

/* Every option of the table is well formed: a long name, help, unique ids
 * and letters within its command. */
static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < bt_n_cmds; i++) {
        const struct bt_cmd *c = bt_cmds[i];
        assert_ptr_equal(bt_cmd_find(c->name), c);
        for (const struct bt_opt *o = c->opts; o && o->id; o++) {
            assert_non_null(o->name);
            assert_non_null(o->help);
            assert_true(o->name[0] && o->help[0]);
            assert_true(strcmp(o->name, "help") != 0 && o->letter != 'h');
            for (const struct bt_opt *p = o + 1; p->id; p++) {
                assert_true(p->id != o->id && strcmp(p->name, o->name) != 0);
                assert_true(!o->letter || p->letter != o->letter);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_forms_and_operands),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_operand_counts),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
