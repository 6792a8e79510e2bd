/* SPDX-License-Identifier: MIT */
/* cmd-ls: `baton ls` lists conversations, newest activity first. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "store.h"

static void print_json(const struct bt_store_conversation *c)
{
    struct bt_buf b = BT_BUF_INIT;
    char ts[32];
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "id", c->id);
    bt_json_member(&b, "title", c->title);
    bt_json_member(&b, "coder", c->coder);
    bt_json_member(&b, "model", c->model);
    bt_json_member(&b, "cwd", c->cwd);
    bt_json_member(&b, "native_session_id", c->native_session_id);
    bt_json_member(&b, "status", bt_store_conv_status_name(c->status));
    bt_json_member(&b, "last_run", c->last_run[0] ? c->last_run : NULL);
    bt_json_member(&b, "last_run_state",
                   c->last_run[0] ? bt_store_run_state_name(c->last_run_state) : NULL);
    bt_time_rfc3339(c->created_ms, ts);
    bt_json_member(&b, "created", ts);
    bt_time_rfc3339(c->updated_ms, ts);
    bt_json_member(&b, "updated", ts);
    bt_buf_adds(&b, "}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

void bt_cmd_print_conversation(const struct bt_store_conversation *c)
{
    char ts[32];
    bt_time_rfc3339(c->updated_ms, ts);
    ts[16] = '\0'; /* minutes are enough here */
    const char *state = c->last_run[0] ? bt_store_run_state_name(c->last_run_state) : "new";
    if (c->status != BT_STORE_CONV_ACTIVE)
        state = bt_store_conv_status_name(c->status);
    printf("%.12s  %-6s %-11s %s  ", c->id, c->coder, state, ts);
    bt_term_write(stdout, c->title, strlen(c->title));
    putchar('\n');
}

int bt_cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c != 'j')
            return c == 'h' ? bt_help(argv[0]) : bt_bad_option(argv);
        json = 1;
    }
    if (optind != argc)
        return bt_usage(argv[0]);
    struct bt_store *s;
    int rc = bt_cmd_open_store(&s);
    if (rc)
        return rc;
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (bt_store_conversation_list(s, 0, &v, &n) != 0) {
        rc = bt_fail(BT_EXIT_FAILED, "cannot list conversations: %s", bt_store_errmsg(s));
    } else {
        for (size_t i = 0; i < n; i++)
            json ? print_json(&v[i]) : bt_cmd_print_conversation(&v[i]);
    }
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
    return rc;
}
