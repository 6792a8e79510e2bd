/* SPDX-License-Identifier: MIT */
/*
 * cmd-search: `baton search WORD...` finds the conversations whose title or
 * one of whose messages holds every word (bt_store_search: full-text, the
 * words taken literally), newest activity first, each with an excerpt of
 * its best-matching message. Exits like grep: 0 when something matched, 1
 * when nothing did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-opts.h"
#include "cmd.h"
#include "error.h"
#include "store.h"
#include "view.h"

#define DEFAULT_LIMIT 50
#define MAX_LIMIT 1000000

static void print_json(struct bt_cmd_list *l, const struct bt_store_search_hit *h)
{
    const struct bt_store_conversation *c = &h->conv;
    struct bt_buf b = BT_BUF_INIT;
    char ts[32];
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "id", c->id);
    bt_json_member(&b, "title", c->title);
    bt_json_member(&b, "coder", c->coder);
    bt_json_member(&b, "status", bt_store_conv_status_name(c->status));
    bt_json_member(&b, "last_run_state",
                   c->last_run[0] ? bt_view_run_state(c->last_run_state, c->waiting) : NULL);
    bt_time_rfc3339(c->updated_ms, ts);
    bt_json_member(&b, "updated", ts);
    bt_json_member(&b, "snippet", h->snippet);
    bt_buf_addc(&b, '}');
    bt_cmd_list_put(l, b.data);
    bt_buf_release(&b);
}

/* The line `baton ls` prints, then the snippet indented on the next line. */
static void print_human(const struct bt_store_search_hit *h)
{
    bt_cmd_print_conversation(&h->conv);
    if (h->snippet && *h->snippet) {
        fputs("    ", stdout);
        bt_term_write(stdout, h->snippet, strlen(h->snippet));
        putchar('\n');
    }
}

static const struct bt_opt search_opts[] = {
    LIST_OPTS("conversation"),
    {.id = 'n',
     .name = "limit",
     .value = "N",
     .help = "at most N conversations, newest first (default 50)"},
    {0}};

const struct bt_cmd bt_cmd_def_search = {
    .name = "search",
    .run = bt_cmd_search,
    .operands = "WORD...",
    .summary = "find conversations by words in their title or messages",
    .opts = search_opts,
    .notes = "A conversation matches when its title or one of its messages holds every\n"
             "WORD (case and accents ignored; words are plain text, never query syntax).\n"
             "Exit 0 when something matched, 1 when nothing did.\n"};

int bt_cmd_search(int argc, char **argv)
{
    struct bt_args a;
    struct bt_cmd_list l = {0};
    int id;
    size_t limit = DEFAULT_LIMIT;
    bt_args_init(&a, &bt_cmd_def_search, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'j' || id == 'J') {
            if (bt_cmd_list_option(&l, &a, id))
                return BT_EXIT_USAGE;
        } else if ((limit = bt_cmd_parse_count(a.value, MAX_LIMIT)) == 0)
            return bt_args_fail(&a, "--limit takes a number from 1 to %d, not '%s'", MAX_LIMIT,
                                a.value);
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_buf text = BT_BUF_INIT;
    for (int i = 0; i < a.n_operands; i++) {
        if (i > 0)
            bt_buf_addc(&text, ' ');
        bt_buf_adds(&text, a.operands[i]);
    }
    /* the store checks these too; here they are usage errors before the
     * store is opened */
    const char *bad = NULL;
    if (bt_utf8_invalid_at(text.data, text.len) != text.len)
        bad = "the search text is not valid UTF-8";
    else if (text.data[strspn(text.data, " \t\n\r\v\f")] == '\0')
        bad = "nothing to search for";
    struct bt_store *s = NULL;
    rc = bad ? bt_args_fail(&a, "%s", bad) : bt_cmd_open_store(&s);
    if (rc) {
        bt_buf_release(&text);
        return rc;
    }
    struct bt_store_search_hit *v = NULL;
    size_t n = 0;
    int more = 0;
    int err = bt_store_search(s, text.data, limit, &v, &n, &more);
    if (err == -EINVAL) {
        rc = bt_cmd_fail(BT_EXIT_USAGE, "%s", bt_store_errmsg(s));
    } else if (err) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot search: %s", bt_store_errmsg(s));
    } else if (n == 0) {
        bt_cmd_list_end(&l);
        rc = bt_cmd_fail(BT_EXIT_FAILED, "no conversation matches");
    } else {
        for (size_t i = 0; i < n; i++)
            l.format ? print_json(&l, &v[i]) : print_human(&v[i]);
        bt_cmd_list_end(&l);
        if (more)
            fprintf(stderr,
                    "baton: showing the newest %zu; more conversations match (--limit N "
                    "shows more)\n",
                    limit);
    }
    bt_store_search_free(v, n);
    bt_store_close(s);
    bt_buf_release(&text);
    return rc;
}
