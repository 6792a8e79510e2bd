/* SPDX-License-Identifier: MIT */
/*
 * cmd-diff: `baton diff CONV [--turn N] [--stat] [--json]`, what a turn or
 * the whole conversation changed in its git working tree, from the
 * snapshots its runs kept (src/repo.h, docs/events.md "changes"): a
 * unified diff as git prints it (colour on a terminal only), a diffstat,
 * or the changes as JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "repo.h"
#include "store.h"
#include "util.h"

struct diff_opts {
    int64_t turn; /* 0: the whole conversation */
    int stat, json;
};

/* The snapshots that bound turn (0: every turn) among the runs v: the
 * first snapshot before, the last after. A turn run again (retry) is its
 * last run's. Returns 0, or BT_ENOTFOUND when no run of it kept both. */
static int bounds(const struct bt_store_run *v, size_t n, int64_t turn, const char **from,
                  const char **to)
{
    *from = *to = NULL;
    for (size_t i = 0; i < n; i++) {
        if ((turn && v[i].turn != turn) || !v[i].tree_start || !v[i].tree_end)
            continue;
        if (!*from || turn)
            *from = v[i].tree_start; /* a turn: its last run's */
        *to = v[i].tree_end;
    }
    return *from && *to ? 0 : BT_ENOTFOUND;
}

static int has_turn(const struct bt_store_run *v, size_t n, int64_t turn)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].turn == turn)
            return 1;
    return 0;
}

/* " path | N +++--" per file, then the sums, as `git diff --stat` says
 * them (the bar scaled to at most 40 signs). */
static void print_stat(const struct bt_repo_changes *c)
{
    size_t width = 0;
    int64_t most = 0;
    char **names = bt_xcalloc(c->n ? c->n : 1, sizeof(char *));
    for (size_t i = 0; i < c->n; i++) {
        const struct bt_repo_change *ch = &c->v[i];
        names[i] =
            ch->old_path ? bt_xasprintf("%s => %s", ch->old_path, ch->path) : bt_xstrdup(ch->path);
        width = strlen(names[i]) > width ? strlen(names[i]) : width;
        most = ch->added + ch->removed > most ? ch->added + ch->removed : most;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct bt_repo_change *ch = &c->v[i];
        if (ch->binary) {
            printf(" %-*s | Bin\n", (int)width, names[i]);
            continue;
        }
        int64_t total = ch->added + ch->removed;
        int64_t plus = most > 40 ? ch->added * 40 / most : ch->added;
        int64_t minus = most > 40 ? ch->removed * 40 / most : ch->removed;
        printf(" %-*s | %lld ", (int)width, names[i], (long long)total);
        for (int64_t k = 0; k < plus; k++)
            putchar('+');
        for (int64_t k = 0; k < minus; k++)
            putchar('-');
        putchar('\n');
    }
    printf(" %zu file%s changed, %lld insertion%s(+), %lld deletion%s(-)\n", c->n,
           c->n == 1 ? "" : "s", (long long)c->added, c->added == 1 ? "" : "s",
           (long long)c->removed, c->removed == 1 ? "" : "s");
    for (size_t i = 0; i < c->n; i++)
        free(names[i]);
    free(names);
}

static int print_json(const char *conv, const struct diff_opts *o, const char *dir,
                      const char *from, const char *to)
{
    char *why = NULL;
    char *changes = bt_repo_changes_summary(dir, from, to, &why);
    if (!changes) {
        int rc = bt_cmd_fail(BT_EXIT_FAILED, "%s", why);
        free(why);
        return rc;
    }
    printf("{\"conversation\":\"%s\",\"turn\":", conv);
    if (o->turn)
        printf("%lld", (long long)o->turn);
    else
        fputs("null", stdout);
    printf(",\"from\":\"%s\",\"to\":\"%s\",\"changes\":%s}\n", from, to, changes);
    free(changes);
    return 0;
}

static int print_diff(const struct diff_opts *o, const char *dir, const char *from, const char *to)
{
    char *why = NULL;
    int rc = 0;
    if (o->stat) {
        struct bt_repo_changes c;
        if ((rc = bt_repo_changes(dir, from, to, &c, &why)) == 0)
            print_stat(&c);
        bt_repo_changes_release(&c);
    } else {
        const char *nc = getenv("NO_COLOR");
        int colour = isatty(STDOUT_FILENO) && !(nc && *nc);
        struct bt_buf out = BT_BUF_INIT;
        if ((rc = bt_repo_diff(dir, from, to, colour, &out, &why)) == 0 && out.len)
            fwrite(out.data, 1, out.len, stdout);
        bt_buf_release(&out);
    }
    if (rc)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "%s", why);
    free(why);
    return rc;
}

static int diff_conversation(struct bt_store *s, const char *id, const struct diff_opts *o)
{
    struct bt_store_conversation conv = {0};
    struct bt_store_run *v = NULL;
    size_t n = 0;
    const char *from, *to;
    int rc;
    if (bt_store_conversation_get(s, id, &conv) || bt_store_run_list(s, id, &v, &n))
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id, bt_store_errmsg(s));
    else if (o->turn && !has_turn(v, n, o->turn))
        rc = bt_cmd_fail(BT_EXIT_USAGE, "conversation %s has no turn %lld", id, (long long)o->turn);
    else if (bounds(v, n, o->turn, &from, &to) != 0)
        rc = bt_cmd_fail(BT_EXIT_FAILED,
                         "no changes were recorded for %s: its directory %s is not in a git "
                         "repository, or the turn%s did not end with a snapshot",
                         o->turn ? "that turn" : "this conversation", conv.cwd, o->turn ? "" : "s");
    else {
        /* without a worktree of its own, the directory is shared */
        fprintf(stderr,
                "baton: the changes in %s during the turn%s: edits of your own made "
                "meanwhile are among them\n",
                conv.cwd, o->turn ? "" : "s");
        rc = o->json ? print_json(id, o, conv.cwd, from, to) : print_diff(o, conv.cwd, from, to);
    }
    bt_store_run_list_free(v, n);
    bt_store_conversation_release(&conv);
    return rc;
}

int bt_cmd_diff(int argc, char **argv)
{
    struct bt_args a;
    struct diff_opts o = {0};
    int opt;
    bt_args_init(&a, argc, argv);
    while ((opt = bt_args_next(&a)) > 0) {
        if (opt == 's') {
            o.stat = 1;
        } else if (opt == 'j') {
            o.json = 1;
        } else {
            char *end = NULL;
            errno = 0;
            long long t = strtoll(a.value, &end, 10);
            if (errno || !*a.value || *end || t < 1)
                return bt_args_fail(&a, "--turn takes a turn number (1, 2, ...), not '%s'",
                                    a.value);
            o.turn = t;
        }
    }
    int rc = opt < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.stat && o.json)
        return bt_args_fail(&a, "--stat and --json are two outputs: take one");
    struct bt_store *s;
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], id)) == 0)
        rc = diff_conversation(s, id, &o);
    bt_store_close(s);
    return rc;
}
