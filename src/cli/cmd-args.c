/* SPDX-License-Identifier: MIT */
/* cmd-args: one parser for every command's line (rules in cmd-args.h),
 * and the usage and help text made from the same table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"
#include "util.h"

#define HELP_COLUMN 25 /* where option help starts, as in most GNU tools */
#define WRAP 79

void bt_args_init(struct bt_args *a, const struct bt_cmd *cmd, int argc, char **argv)
{
    memset(a, 0, sizeof(*a));
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->next = 1;
    a->operands = argv + 1;
}

int bt_args_fail(const struct bt_args *a, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "baton %s: ", a->argv[0]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (a->cmd)
        bt_args_print_usage(a->cmd, stderr);
    return BT_EXIT_USAGE;
}

static const struct bt_opt *find_long(const struct bt_cmd *cmd, const char *name, size_t len)
{
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++)
        if (strlen(o->name) == len && memcmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

static const struct bt_opt *find_letter(const struct bt_cmd *cmd, char letter)
{
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++)
        if (o->letter && o->letter == letter)
            return o;
    return NULL;
}

/* The one option whose name starts with what was typed, for a hint. */
static const struct bt_opt *only_prefix(const struct bt_cmd *cmd, const char *name, size_t len)
{
    const struct bt_opt *found = NULL;
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++)
        if (len && strncmp(o->name, name, len) == 0) {
            if (found)
                return NULL;
            found = o;
        }
    if (!found && len && strncmp("help", name, len) == 0)
        return NULL;
    return found;
}

#define TYPO_MAX 32 /* longer names get no typo hint */

/* Edits (insert, delete, replace, swap two neighbours) from a[0..n) to
 * b[0..m), both at most TYPO_MAX bytes. */
static size_t edits(const char *a, size_t n, const char *b, size_t m)
{
    size_t d[TYPO_MAX + 1][TYPO_MAX + 1];
    for (size_t i = 0; i <= n; i++)
        for (size_t j = 0; j <= m; j++) {
            if (!i || !j) {
                d[i][j] = i + j;
                continue;
            }
            size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The option meant by a typo (--jsn, --josn, --modle): the one name one
 * edit away (two for names of six letters or more), for a hint. */
static const struct bt_opt *only_typo(const struct bt_cmd *cmd, const char *name, size_t len)
{
    const struct bt_opt *found = NULL;
    if (!len || len > TYPO_MAX)
        return NULL;
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++) {
        size_t m = strlen(o->name);
        if (m > TYPO_MAX || edits(name, len, o->name, m) > (m >= 6 ? 2u : 1u))
            continue;
        if (found)
            return NULL;
        found = o;
    }
    return found;
}

static int unknown(struct bt_args *a, const char *arg)
{
    const struct bt_opt *near = NULL;
    if (arg[1] == '-') {
        const char *eq = strchr(arg + 2, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        near = only_prefix(a->cmd, arg + 2, len);
        near = near ? near : only_typo(a->cmd, arg + 2, len);
    }
    if (near)
        bt_args_fail(a, "unknown option '%s' (did you mean --%s?)", arg, near->name);
    else if (a->cmd->operands &&
             (strstr(a->cmd->operands, "PROMPT") || strstr(a->cmd->operands, "WORD")))
        bt_args_fail(a,
                     "unknown option '%s' (text that starts with '-' goes after --: baton %s "
                     "[OPTIONS] -- TEXT)",
                     arg, a->argv[0]);
    else
        bt_args_fail(a, "unknown option '%s'", arg);
    return -1;
}

/* A value named N, S or SEQ is a number: "-1" is one of them (that the
 * command refuses), never an option. */
static int is_number_value(const char *name)
{
    return strcmp(name, "N") == 0 || strcmp(name, "S") == 0 || strcmp(name, "SEQ") == 0;
}

/* The value of o: attached (after '=' or the letter) or the next argument,
 * which must not look like an option. */
static int take_value(struct bt_args *a, const struct bt_opt *o, const char *attached)
{
    if (attached) {
        a->value = attached;
        return o->id;
    }
    const char *next = a->next < a->argc ? a->argv[a->next] : NULL;
    if (!next) {
        bt_args_fail(a, "%s needs a value (%s)", a->arg, o->value);
        return -1;
    }
    /* a negative number for a number: the value, so the command's own
     * check says what it takes ("--limit -1" as "--limit 0") */
    int negative = next && next[0] == '-' && next[1] >= '0' && next[1] <= '9';
    if (next[0] == '-' && next[1] != '\0' && !(negative && is_number_value(o->value))) {
        if (is_number_value(o->value))
            bt_args_fail(a, "%s needs a value (%s), not '%s'", a->arg, o->value, next);
        else
            bt_args_fail(a,
                         "%s needs a value (%s), not the option '%s' (write --%s=%s if it is "
                         "one)",
                         a->arg, o->value, next, o->name, next);
        return -1;
    }
    a->next++;
    a->value = next;
    return o->id;
}

static int long_option(struct bt_args *a, char *arg)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    if (!eq && strcmp(name, "help") == 0) {
        a->help = 1;
        return 0;
    }
    const struct bt_opt *o = find_long(a->cmd, name, len);
    if (!o)
        return unknown(a, arg);
    snprintf(a->arg_buf, sizeof(a->arg_buf), "--%s", o->name);
    a->arg = a->arg_buf;
    if (!o->value && eq) {
        bt_args_fail(a, "--%s takes no value ('%s')", o->name, arg);
        return -1;
    }
    return o->value ? take_value(a, o, eq ? eq + 1 : NULL) : o->id;
}

static int short_option(struct bt_args *a, char *arg)
{
    if (strcmp(arg, "-h") == 0) {
        a->help = 1;
        return 0;
    }
    const struct bt_opt *o = find_letter(a->cmd, arg[1]);
    if (!o || (!o->value && arg[2]))
        return unknown(a, arg);
    snprintf(a->arg_buf, sizeof(a->arg_buf), "-%c", o->letter);
    a->arg = a->arg_buf;
    return o->value ? take_value(a, o, arg[2] ? arg + 2 : NULL) : o->id;
}

int bt_args_next(struct bt_args *a)
{
    while (a->next < a->argc) {
        char *arg = a->argv[a->next++];
        a->value = NULL;
        if (a->options_ended || arg[0] != '-' || arg[1] == '\0') {
            a->operands[a->n_operands++] = arg; /* never past a->next: safe */
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            a->options_ended = 1;
            continue;
        }
        int id = arg[1] == '-' ? long_option(a, arg) : short_option(a, arg);
        if (id != 0)
            return id;
    }
    return 0;
}

void bt_args_operand_counts(const char *operands, int *min, int *max)
{
    *min = *max = 0;
    for (const char *p = operands ? operands : ""; *p;) {
        p += strspn(p, " ");
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        if (n >= 3 && strncmp(p + n - 3, "...", 3) == 0)
            *max = -1;
        if (*max >= 0)
            ++*max;
        if (*p != '[')
            ++*min;
        p += n;
    }
}

/* The name of operand i in the command's operand text, without its
 * brackets and alternatives ("PROMPT" of "PROMPT|-"). */
static void operand_name(const char *operands, int i, char *out, size_t size)
{
    const char *p = operands;
    for (;;) {
        p += strspn(p, " ");
        size_t n = strcspn(p, " ");
        if (i-- == 0 || !p[n]) {
            p += strspn(p, "[");
            /* "PROMPT|-" is a PROMPT; "bash|zsh" is one of those words */
            size_t len = *p >= 'a' && *p <= 'z' ? strcspn(p, "]. ") : strcspn(p, "|]. ");
            snprintf(out, size, "%.*s", (int)len, p);
            return;
        }
        p += n;
    }
}

int bt_args_end(struct bt_args *a)
{
    int min, max;
    bt_args_operand_counts(a->cmd->operands, &min, &max);
    if (a->help && a->n_operands > 0)
        return bt_args_fail(a,
                            "-h/--help goes alone: '%s' on the same line may be meant as "
                            "an argument (`baton help %s` prints the help; put -- before an "
                            "argument that starts with '-')",
                            a->operands[0], a->argv[0]);
    if (a->help) {
        bt_args_print_help(a->cmd, stdout);
        return -1;
    }
    if (a->n_operands < min) {
        char name[64];
        operand_name(a->cmd->operands, a->n_operands, name, sizeof(name));
        return bt_args_fail(a, "missing %s", name);
    }
    if (max >= 0 && a->n_operands > max)
        return bt_args_fail(a, "unexpected argument '%s'", a->operands[max]);
    return 0;
}

int bt_args_parse_plain(struct bt_args *a, const struct bt_cmd *cmd, int argc, char **argv)
{
    bt_args_init(a, cmd, argc, argv);
    if (bt_args_next(a) != 0)
        return BT_EXIT_USAGE; /* a command without options: only errors */
    return bt_args_end(a);
}

/* Append word to a line at *col, wrapping before WRAP. */
static void put_word(FILE *f, const char *word, int *col, int indent)
{
    int n = (int)strlen(word);
    if (*col > indent && *col + 1 + n > WRAP) {
        fprintf(f, "\n%*s", indent, "");
        *col = indent;
    } else if (*col != indent) {
        fputc(' ', f);
        (*col)++;
    }
    fputs(word, f);
    *col += n;
}

/* "[-c CODER]" or "[--json]": o as the usage line shows it. */
static void usage_word(const struct bt_opt *o, char *word, size_t size)
{
    if (o->letter)
        snprintf(word, size, "[-%c%s%s]", o->letter, o->value ? " " : "", o->value ? o->value : "");
    else
        snprintf(word, size, "[--%s%s%s]", o->name, o->value ? " " : "", o->value ? o->value : "");
}

void bt_args_usage(const struct bt_cmd *cmd, struct bt_buf *b)
{
    char word[128];
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++) {
        usage_word(o, word, sizeof(word));
        bt_buf_addf(b, "%s%s", b->len ? " " : "", word);
    }
    if (cmd->operands && cmd->operands[0])
        bt_buf_addf(b, "%s%s", b->len ? " " : "", cmd->operands);
}

void bt_args_print_usage(const struct bt_cmd *cmd, FILE *f)
{
    char word[128];
    int col = fprintf(f, "usage: baton %s", cmd->name);
    int indent = col + 1;
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++) {
        usage_word(o, word, sizeof(word));
        put_word(f, word, &col, indent);
    }
    if (cmd->operands && cmd->operands[0])
        put_word(f, cmd->operands, &col, indent);
    fputc('\n', f);
}

/* "  -c, --coder CODER" or "      --json", padded to the help column. */
static void print_option(const struct bt_opt *o, FILE *f)
{
    char head[96];
    if (o->letter)
        snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->letter, o->name, o->value ? " " : "",
                 o->value ? o->value : "");
    else
        snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->value ? " " : "",
                 o->value ? o->value : "");
    int n = fprintf(f, "%s", head);
    const char *p = o->help;
    if (n >= HELP_COLUMN - 1) {
        fputc('\n', f);
        n = 0;
    }
    while (*p) {
        size_t len = strcspn(p, "\n");
        fprintf(f, "%*s%.*s\n", HELP_COLUMN - n, "", (int)len, p);
        n = 0;
        p += len + (p[len] == '\n');
    }
}

void bt_args_print_help(const struct bt_cmd *cmd, FILE *f)
{
    bt_args_print_usage(cmd, f);
    fprintf(f, "\n%s.\n", cmd->summary);
    fputs("\noptions:\n", f);
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++)
        print_option(o, f);
    fputs("  -h, --help             this help\n", f);
    if (cmd->notes && cmd->notes[0])
        fprintf(f, "\n%s", cmd->notes);
}
