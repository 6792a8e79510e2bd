/* SPDX-License-Identifier: MIT */
/*
 * cmd-group: `baton group ls [--json]` lists the groups of conversations
 * started together (`run -c a,b,c`), newest first; `baton group show GROUP
 * [--json]` puts a group's conversations side by side (cmd-group.h).
 */
#include "cmd-group.h"

#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "json.h"
#include "repo.h"
#include "view.h"

/* Add the runs' time, tokens and cost. */
static void sum_runs(const struct bt_store_run *r, size_t n, struct bt_cmd_member *m)
{
    int64_t now = bt_now_ms();
    for (size_t i = 0; i < n; i++) {
        int64_t end = r[i].ended_ms ? r[i].ended_ms : now;
        m->duration_ms += end > r[i].started_ms ? end - r[i].started_ms : 0;
        const struct bt_usage *u = &r[i].usage;
        int64_t t = (u->input_tokens > 0 ? u->input_tokens : 0) +
                    (u->output_tokens > 0 ? u->output_tokens : 0);
        if (u->input_tokens >= 0 || u->output_tokens >= 0)
            m->tokens = (m->tokens < 0 ? 0 : m->tokens) + t;
        if (u->cost_usd >= 0)
            m->cost_usd = (m->cost_usd < 0 ? 0 : m->cost_usd) + u->cost_usd;
    }
}

/* The changes from the first run's snapshot to the last one's. */
static void sum_changes(struct bt_store *s, const struct bt_store_conversation *c,
                        const struct bt_store_run *r, size_t n, struct bt_cmd_member *m)
{
    const char *from = NULL, *to = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!from && r[i].tree_start)
            from = r[i].tree_start;
        if (r[i].tree_end)
            to = r[i].tree_end;
    }
    struct bt_repo_changes ch = {0};
    char *why = NULL;
    const char *dir = c->worktree.repo ? c->worktree.repo : c->cwd;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s));
    if (from && to && bt_repo_changes(dir, snapshots, from, to, &ch, &why) == 0) {
        m->files = (int64_t)ch.n;
        m->added = ch.added;
        m->removed = ch.removed;
    }
    bt_repo_changes_release(&ch);
    free(snapshots);
    free(why);
}

int bt_cmd_member_of(struct bt_store *s, const struct bt_store_conversation *c,
                     struct bt_cmd_member *m)
{
    *m = (struct bt_cmd_member){.state = "new", .tokens = -1, .cost_usd = -1, .files = -1};
    struct bt_store_run *r = NULL;
    size_t n = 0;
    if (bt_store_run_list(s, c->id, &r, &n) != 0)
        return BT_ESTORE;
    if (c->last_run[0])
        m->state = bt_view_run_state(c->last_run_state, c->waiting);
    sum_runs(r, n, m);
    sum_changes(s, c, r, n, m);
    bt_store_run_list_free(r, n);
    return 0;
}

void bt_cmd_members_table(FILE *f, const struct bt_store_conversation *v,
                          const struct bt_cmd_member *m, size_t n)
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

void bt_cmd_member_json(struct bt_buf *b, const struct bt_store_conversation *c,
                        const struct bt_cmd_member *m)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "conversation", c->id);
    bt_json_member(b, "coder", c->coder);
    bt_json_member(b, "model", c->model);
    bt_json_member(b, "status", m->state);
    bt_buf_addf(b, ",\"duration_ms\":%lld", (long long)m->duration_ms);
    if (m->tokens >= 0)
        bt_buf_addf(b, ",\"tokens\":%lld", (long long)m->tokens);
    else
        bt_buf_adds(b, ",\"tokens\":null");
    if (m->cost_usd >= 0)
        bt_buf_addf(b, ",\"cost_usd\":%.6f", m->cost_usd);
    else
        bt_buf_adds(b, ",\"cost_usd\":null");
    if (m->files >= 0)
        bt_buf_addf(b, ",\"files\":%lld,\"added\":%lld,\"removed\":%lld", (long long)m->files,
                    (long long)m->added, (long long)m->removed);
    else
        bt_buf_adds(b, ",\"files\":null,\"added\":null,\"removed\":null");
    bt_buf_adds(b, ",\"worktree\":");
    bt_view_worktree(b, &c->worktree);
    bt_buf_addc(b, '}');
}

/* The group object of --json: id, name, created, members (its rows). */
static void group_json(struct bt_buf *b, const struct bt_store_group *g,
                       const struct bt_store_conversation *v, const struct bt_cmd_member *m,
                       size_t n)
{
    char ts[32];
    bt_time_rfc3339(g->created_ms, ts);
    bt_buf_addc(b, '{');
    bt_json_member(b, "id", g->id);
    bt_json_member(b, "name", g->name);
    bt_json_member(b, "created", ts);
    bt_buf_adds(b, ",\"members\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            bt_buf_addc(b, ',');
        bt_cmd_member_json(b, &v[i], &m[i]);
    }
    bt_buf_adds(b, "]}\n");
}

/* One group, side by side; the exit code. */
static int show(struct bt_store *s, const char *text, int json)
{
    char id[BT_ID_SIZE];
    int rc = bt_store_group_resolve(s, text, id);
    if (rc == BT_ENOTFOUND || rc == BT_EAMBIGUOUS)
        return bt_cmd_fail(BT_EXIT_USAGE, "%s",
                           rc == BT_EAMBIGUOUS ? bt_store_errmsg(s)
                                               : "no group matches that (baton group ls)");
    struct bt_store_group g;
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (rc || (rc = bt_store_group_get(s, id, &g, &v, &n)) != 0)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot read group %s: %s", id, bt_store_errmsg(s));
    struct bt_cmd_member *m = bt_xcalloc(n ? n : 1, sizeof *m);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = bt_cmd_member_of(s, &v[i], &m[i]);
    if (rc) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read group %s: %s", id, bt_store_errmsg(s));
    } else if (json) {
        struct bt_buf b = BT_BUF_INIT;
        group_json(&b, &g, v, m, n);
        fputs(b.data, stdout);
        bt_buf_release(&b);
    } else {
        fputs("group ", stdout);
        fputs(g.id, stdout);
        fputs("  ", stdout);
        bt_term_write(stdout, g.name, strlen(g.name));
        putchar('\n');
        bt_cmd_members_table(stdout, v, m, n);
    }
    free(m);
    bt_store_conversation_list_free(v, n);
    bt_store_group_release(&g);
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
            bt_time_rfc3339(v[i].created_ms, ts);
            bt_buf_addc(&b, '{');
            bt_json_member(&b, "id", v[i].id);
            bt_json_member(&b, "name", v[i].name);
            bt_json_member(&b, "created", ts);
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
    bt_args_init(&a, argc, argv);
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
