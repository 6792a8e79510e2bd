/* SPDX-License-Identifier: MIT */
/* cmd-ls: `baton ls` lists conversations, newest activity first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-opts.h"
#include "cmd.h"
#include "store.h"
#include "view.h"

#define MAX_LIMIT 1000000

static void print_json(struct bt_cmd_list *l, const struct bt_store_conversation *c)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_view_conversation(&b, c);
    bt_cmd_list_put(l, b.data);
    bt_buf_release(&b);
}

static int parse(int argc, char **argv, struct bt_cmd_list *l, size_t *limit)
{
    struct bt_args a;
    int id;
    bt_args_init(&a, &bt_cmd_def_ls, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'j' || id == 'J') {
            if (bt_cmd_list_option(l, &a, id))
                return BT_EXIT_USAGE;
        } else if ((*limit = bt_cmd_parse_count(a.value, MAX_LIMIT)) == 0)
            return bt_args_fail(&a, "--limit takes a number from 1 to %d, not '%s'", MAX_LIMIT,
                                a.value);
    }
    return id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
}

static const struct bt_opt ls_opts[] = {
    LIST_OPTS("conversation"),
    {.id = 'n',
     .name = "limit",
     .value = "N",
     .help = "at most N conversations, newest first (default: all)"},
    {0}};

const struct bt_cmd bt_cmd_def_ls = {
    .name = "ls",
    .run = bt_cmd_ls,
    .operands = "",
    .summary = "list conversations, newest first",
    .opts = ls_opts,
    .notes = "Times are local, with their zone; --json gives them in UTC (RFC 3339).\n"};

int bt_cmd_ls(int argc, char **argv)
{
    struct bt_cmd_list l = {0};
    size_t limit = 0;
    int rc = parse(argc, argv, &l, &limit);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (bt_store_conversation_list(s, limit, &v, &n) != 0) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot list conversations: %s", bt_store_errmsg(s));
    } else {
        for (size_t i = 0; i < n; i++)
            l.format ? print_json(&l, &v[i]) : bt_cmd_print_conversation(&v[i]);
        bt_cmd_list_end(&l);
    }
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
    return rc;
}
