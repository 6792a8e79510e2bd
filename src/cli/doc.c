/* SPDX-License-Identifier: MIT */
/*
 * doc: the model the man page and the shell completions are made from (a
 * command's help text, parsed) and the roff escaping of the page. See
 * doc.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"
#include "doc.h"

/* --- the model ---------------------------------------------------------- */

int bt_doc_is_help(const struct bt_doc_item *it)
{
    return it->is_opt && it->lng && strcmp(it->lng, "--help") == 0;
}

/* The public commands' names of t, space-separated (owned): the choices
 * of `baton help COMMAND`. */
static char *command_names(const struct bt_cmd_table *t)
{
    struct bt_buf b = BT_BUF_INIT;
    for (size_t i = 0; t && i < t->n; i++)
        if (bt_doc_public(t->cmds[i]))
            bt_buf_addf(&b, "%s%s", b.len ? " " : "", t->cmds[i]->name);
    return bt_buf_detach(&b, NULL);
}

int bt_doc_public(const struct bt_cmd *cmd)
{
    return strncmp(cmd->name, "__", 2) != 0;
}

/* 1 if s[0..n) is "a|b|c" of lower-case words: literal choices. */
static int is_choice_list(const char *s, size_t n)
{
    if (n == 0 || !memchr(s, '|', n))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && s[i] != '|' && s[i] != '-')
            return 0;
    return 1;
}

/* "a|b|c" as "a b c" (owned). */
static char *choices_of(const char *s, size_t n)
{
    char *c = bt_xstrndup(s, n);
    for (char *p = c; *p; p++)
        if (*p == '|')
            *p = ' ';
    return c;
}

static enum bt_doc_value value_of_name(const char *name)
{
    if (strcmp(name, "CODER") == 0)
        return BT_DOC_VALUE_CODER;
    if (strcmp(name, "DIR") == 0)
        return BT_DOC_VALUE_DIR;
    if (strcmp(name, "CONV") == 0)
        return BT_DOC_VALUE_CONV;
    return BT_DOC_VALUE_NONE;
}

static struct bt_doc_item *new_item(struct bt_doc_cmd *d, int is_opt)
{
    d->items = bt_xrealloc(d->items, (d->nitems + 1) * sizeof(*d->items));
    struct bt_doc_item *it = &d->items[d->nitems++];
    memset(it, 0, sizeof(*it));
    it->is_opt = is_opt;
    return it;
}

/* Append line[0..n) to *text, a space between lines. */
static void join_line(char **text, const char *line, size_t n)
{
    while (n > 0 && line[0] == ' ')
        line++, n--;
    while (n > 0 && line[n - 1] == ' ')
        n--;
    if (n == 0)
        return;
    char *t = *text ? bt_xasprintf("%s %.*s", *text, (int)n, line) : bt_xstrndup(line, n);
    free(*text);
    *text = t;
}

/* Append every line of text ("\n" between them) to *dst. */
static void join_lines(char **dst, const char *text)
{
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        join_line(dst, l, n);
        l += n + (l[n] == '\n');
    }
}

/* One option of the table. */
static void add_option(struct bt_doc_cmd *d, const struct bt_opt *o)
{
    struct bt_doc_item *it = new_item(d, 1);
    if (o->letter)
        it->shrt = bt_xasprintf("-%c", o->letter);
    it->lng = bt_xasprintf("--%s", o->name);
    it->arg = o->value ? bt_xstrdup(o->value) : NULL;
    it->first_len = strcspn(o->help, "\n");
    join_lines(&it->text, o->help);
    if (o->value && o->choices) {
        it->choices = choices_of(o->choices, strlen(o->choices));
        it->value = BT_DOC_VALUE_CHOICE;
    } else if (o->value) {
        it->value = value_of_name(o->value);
    }
}

/* The operands: the words outside brackets ("CONV", "bash|zsh", "WORD..."). */
static void parse_operands(const struct bt_cmd_table *t, struct bt_doc_cmd *d)
{
    const char *u = d->cmd->operands ? d->cmd->operands : "";
    int depth = 0;
    for (const char *p = u; *p;) {
        if (*p == '[' || *p == ']') {
            depth += *p == '[' ? 1 : -1;
            p++;
            continue;
        }
        size_t len = strcspn(p, " []");
        if (len == 0) {
            p++;
            continue;
        }
        if (depth == 0 || (len == 7 && strncmp(p, "COMMAND", 7) == 0)) {
            d->args = bt_xrealloc(d->args, (d->nargs + 1) * sizeof(*d->args));
            struct bt_doc_arg *a = &d->args[d->nargs++];
            memset(a, 0, sizeof(*a));
            a->name = bt_xstrndup(p, len);
            a->repeat = len > 3 && strcmp(a->name + len - 3, "...") == 0;
            if (strcmp(a->name, "COMMAND") == 0) {
                a->value = BT_DOC_VALUE_CHOICE;
                a->choices = command_names(t);
            } else if (is_choice_list(p, len)) {
                a->value = BT_DOC_VALUE_CHOICE;
                a->choices = choices_of(p, len);
            } else {
                a->value = value_of_name(a->name);
            }
        }
        p += len;
    }
}

void bt_doc_parse(const struct bt_cmd_table *t, const struct bt_cmd *cmd, struct bt_doc_cmd *out)
{
    static const struct bt_opt help = {'h', 'h', "help", NULL, "this help", NULL};
    memset(out, 0, sizeof(*out));
    out->cmd = cmd;
    parse_operands(t, out);
    for (const struct bt_opt *o = cmd->opts; o && o->id; o++)
        add_option(out, o);
    add_option(out, &help);
    struct bt_doc_item *cur = NULL; /* the paragraph a line continues */
    for (const char *line = cmd->notes ? cmd->notes : ""; *line;) {
        size_t n = strcspn(line, "\n");
        if (strspn(line, " ") == n) {
            cur = NULL; /* a blank line ends the paragraph */
        } else {
            if (!cur)
                cur = new_item(out, 0);
            join_line(&cur->text, line, n);
        }
        line += n + (line[n] == '\n');
    }
}

void bt_doc_release(struct bt_doc_cmd *d)
{
    for (size_t i = 0; i < d->nitems; i++) {
        free(d->items[i].shrt);
        free(d->items[i].lng);
        free(d->items[i].arg);
        free(d->items[i].choices);
        free(d->items[i].text);
    }
    for (size_t i = 0; i < d->nargs; i++) {
        free(d->args[i].name);
        free(d->args[i].choices);
    }
    free(d->items);
    free(d->args);
    memset(d, 0, sizeof(*d));
}

/* --- roff --------------------------------------------------------------- */

/* The length of b's last line. */
static size_t col(const struct bt_buf *b)
{
    size_t i = b->len;
    while (i > 0 && b->data[i - 1] != '\n')
        i--;
    return b->len - i;
}

/* Append s as roff text: backslash as \e, every hyphen as \- (options stay
 * copyable), `code` in bold, non-ASCII as \[uXXXX], and \& before a '.' or
 * '\'' that would start a line (a control line otherwise). */
void bt_doc_roff_text(struct bt_buf *b, const char *s)
{
    int bold = 0;
    for (size_t i = 0; s[i];) {
        unsigned char c = (unsigned char)s[i];
        if ((c == '.' || c == '\'') && (b->len == 0 || b->data[b->len - 1] == '\n'))
            bt_buf_adds(b, "\\&");
        if (c >= 0x80) {
            /* decode one UTF-8 sequence; an invalid byte becomes U+FFFD */
            size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
            unsigned cp = 0xfffd;
            if (len > 1 && bt_utf8_invalid_at(s + i, len) == len) {
                cp = c & (0x3fu >> (len - 1));
                for (size_t k = 1; k < len; k++)
                    cp = cp << 6 | ((unsigned char)s[i + k] & 0x3fu);
            } else {
                len = 1;
            }
            bt_buf_addf(b, "\\[u%04X]", cp);
            i += len;
            continue;
        }
        if (c == '\\')
            bt_buf_adds(b, "\\e");
        else if (c == '-')
            bt_buf_adds(b, "\\-");
        else if (c == '`')
            bt_buf_adds(b, (bold = !bold) ? "\\fB" : "\\fR");
        else if (c <= ' ' && col(b) >= 64)
            bt_buf_addc(b, '\n'); /* short input lines, as man page linters like */
        else
            bt_buf_addc(b, (char)(c < ' ' ? ' ' : c));
        i++;
    }
    if (bold)
        bt_buf_adds(b, "\\fR");
}

/* s[0..n) in font f ('B' or 'I'), escaped. */
void bt_doc_roff_font(struct bt_buf *b, char f, const char *s, size_t n)
{
    char *t = bt_xstrndup(s, n);
    bt_buf_addf(b, "\\f%c", f);
    bt_doc_roff_text(b, t);
    bt_buf_adds(b, "\\fR");
    free(t);
}

/* A usage line: option names and literal words bold, placeholders
 * (upper case) italic, brackets and bars roman. A bracketed group is never
 * broken across lines (the caller turns hyphenation off). */
void bt_doc_roff_usage(struct bt_buf *b, const char *u)
{
    int depth = 0;
    for (const char *p = u; *p;) {
        size_t len = strcspn(p, " []|");
        if (len == 0) {
            depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
            bt_buf_adds(b, *p == ' ' && depth > 0 ? "\\ " : (char[]){*p, '\0'});
            p++;
            continue;
        }
        int literal = p[0] == '-';
        for (size_t i = 0; i < len && !literal; i++)
            literal = islower((unsigned char)p[i]);
        bt_doc_roff_font(b, literal ? 'B' : 'I', p, len);
        p += len;
    }
}
