/* SPDX-License-Identifier: MIT */
/*
 * cmd-group: `baton group ls [--json]` lists the groups of conversations
 * started together (`run -c a,b,c`), newest first; `baton group show GROUP
 * [--json]` puts a group's conversations side by side (cmd-group.h), as
 * the service sums them (service-group.c).
 */
#include "cmd-group.h"

#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "json.h"
#include "service-work.h"
#include "view.h"

void bt_cmd_members_table(FILE *f, const struct bt_store_conversation *v,
                          const struct bt_service_member *m, size_t n)
{
    fprintf(f, "%-9s %-12s %-11s %9s %9s %9s %5s %13s  %s\n", "CODER", "CONVERSATION", "STATUS",
            "TIME", "TOKENS", "COST", "FILES", "+/-", "BRANCH");
    for (size_t i = 0; i < n; i++) {
        char tokens[32] = "-", cost[32] = "-", files[32] = "-", lines[48] = "-";
        if (m[i].tokens >= 0)
            snprintf(tokens, sizeof tokens, "%lld", (long long)m[i].tokens);
        if (m[i].cost_usd >= 0)
            snprintf(cost, sizeof cost, "$%.4f", m[i].cost_usd);
        if (m[i].files >= 0) {
            snprintf(files, sizeof files, "%lld", (long long)m[i].files);
            snprintf(lines, sizeof lines, "+%lld -%lld", (long long)m[i].added,
                     (long long)m[i].removed);
        }
        fprintf(f, "%-9s %-12.12s %-11s %8.1fs %9s %9s %5s %13s  ", v[i].coder, v[i].id, m[i].state,
                (double)m[i].duration_ms / 1000.0, tokens, cost, files, lines);
        const char *branch = v[i].worktree.branch ? v[i].worktree.branch : "-";
        bt_term_write(f, branch, strlen(branch));
        fputc('\n', f);
    }
}

/* One group, side by side (service-group.c); the exit code. */
static int show(struct bt_store *s, const char *text, int json)
{
    char id[BT_ID_SIZE];
    int rc = bt_store_group_resolve(s, text, id);
    if (rc == BT_ENOTFOUND || rc == BT_EAMBIGUOUS)
        return bt_cmd_fail(BT_EXIT_USAGE, "%s",
                           rc == BT_EAMBIGUOUS ? bt_store_errmsg(s)
                                               : "no group matches that (baton group ls)");
    struct bt_service_group g;
    if (rc || (rc = bt_service_group_show(s, id, &g)) != 0) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read group %s: %s", id, bt_store_errmsg(s));
    } else if (json) {
        struct bt_buf b = BT_BUF_INIT;
        bt_view_group(&b, &g);
        bt_buf_addc(&b, '\n');
        fputs(b.data, stdout);
        bt_buf_release(&b);
    } else {
        fputs("group ", stdout);
        fputs(g.group.id, stdout);
        fputs("  ", stdout);
        bt_term_write(stdout, g.group.name, strlen(g.group.name));
        putchar('\n');
        bt_cmd_members_table(stdout, g.conv, g.member, g.n);
    }
    bt_service_group_release(&g);
    return rc;
}

/* Every group, a line each (JSON lines with --json); the exit code. */
static int list(struct bt_store *s, int json)
{
    struct bt_store_group *v = NULL;
    size_t n = 0;
    if (bt_store_group_list(s, 0, &v, &n) != 0)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot list groups: %s", bt_store_errmsg(s));
    for (size_t i = 0; i < n; i++) {
        char ts[48];
        if (json) {
            struct bt_buf b = BT_BUF_INIT;
            bt_buf_addc(&b, '{');
            bt_view_group_head(&b, &v[i]);
            bt_buf_addf(&b, ",\"members\":%lld}\n", (long long)v[i].members);
            fputs(b.data, stdout);
            bt_buf_release(&b);
            continue;
        }
        bt_time_local(v[i].created_ms, ts);
        printf("%.12s  %2lld  %s  ", v[i].id, (long long)v[i].members, ts);
        bt_term_write(stdout, v[i].name, strlen(v[i].name));
        putchar('\n');
    }
    bt_store_group_list_free(v, n);
    return 0;
}

static const struct bt_opt group_opts[] = {
    {.id = 'j',
     .name = "json",
     .help = "ls: one JSON object per group per line; show: the\ngroup with its members as "
             "one JSON object"},
    {0}};

const struct bt_cmd bt_cmd_def_group = {
    .name = "group",
    .run = bt_cmd_group,
    .operands = "ls|show [GROUP]",
    .summary = "groups of conversations started together (run -c a,b,c)",
    .opts = group_opts,
    .notes = "ls: the groups, newest first: id, conversations, when, the prompt's first\n"
             "line. show GROUP (an id or a unique prefix of one): its conversations side\n"
             "by side: coder, status of the last turn, time, tokens and cost of its turns,\n"
             "files changed with lines added and removed, branch. `baton diff`, `keep`\n"
             "and `rm` take each conversation.\n"};

int bt_cmd_group(int argc, char **argv)
{
    struct bt_args a;
    int id, json = 0;
    bt_args_init(&a, &bt_cmd_def_group, argc, argv);
    while ((id = bt_args_next(&a)) > 0)
        json = 1; /* --json: the only option */
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *what = a.operands[0];
    int is_ls = strcmp(what, "ls") == 0, is_show = strcmp(what, "show") == 0;
    if (!is_ls && !is_show)
        return bt_args_fail(&a, "'%s' is not ls or show", what);
    if (is_show && a.n_operands < 2)
        return bt_args_fail(&a, "missing GROUP (baton group ls lists them)");
    if (is_ls && a.n_operands > 1)
        return bt_args_fail(&a, "unexpected argument '%s'", a.operands[1]);
    struct bt_store *s;
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    rc = is_ls ? list(s, json) : show(s, a.operands[1], json);
    bt_store_close(s);
    return rc;
}
