/* SPDX-License-Identifier: MIT */
/*
 * cmd-keep: `baton keep CONV [--prune] [--json]` brings the work of a
 * conversation's own worktree (run --worktree) into the branch it started
 * from (src/repo.h, bt_repo_keep): the worktree's changes committed on its
 * branch, then a fast-forward or a merge commit; a conflict leaves the
 * base as it was. --prune then removes the worktree and its branch, whose
 * work the base holds now, and in a group (run -c a,b,c) the other
 * conversations' worktrees and branches, the results not kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-worktree.h"
#include "cmd.h"
#include "error.h"
#include "json.h"

struct keep_args {
    const char *conv; /* as typed */
    int prune;
    int json;
};

static int parse(int argc, char **argv, struct keep_args *k)
{
    struct bt_args a;
    int id;
    bt_args_init(&a, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'p')
            k->prune = 1;
        else
            k->json = 1;
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    k->conv = a.operands[0];
    return rc;
}

/* The message of the commit of the worktree's changes. */
static char *message_of(const struct bt_store_conversation *c)
{
    return bt_xasprintf("%s\n\nThe work of baton conversation %s (%s%s%s).\n",
                        *c->title ? c->title : "baton", c->id, c->coder, c->model ? ", " : "",
                        c->model ? c->model : "");
}

static const char *how_name(enum bt_repo_kept_how how)
{
    return how == BT_REPO_KEPT_MERGE          ? "merge"
           : how == BT_REPO_KEPT_FAST_FORWARD ? "fast-forward"
                                              : "none";
}

static void say_json(const struct bt_store_conversation *c, const struct bt_repo_kept *k,
                     int pruned, const struct bt_strv *others)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "conversation", c->id);
    bt_json_member(&b, "branch", c->worktree.branch);
    bt_json_member(&b, "base", c->worktree.base);
    bt_json_member(&b, "how", how_name(k->how));
    bt_json_member(&b, "commit", k->commit);
    bt_buf_addf(&b, ",\"committed\":%s", k->committed ? "true" : "false");
    bt_json_member(&b, "checkout", k->checkout);
    bt_buf_addf(&b, ",\"pruned\":%s,\"pruned_others\":[", pruned ? "true" : "false");
    for (size_t i = 0; i < others->n; i++) {
        if (i)
            bt_buf_addc(&b, ',');
        bt_json_quote(&b, others->v[i], strlen(others->v[i]));
    }
    bt_buf_adds(&b, "]}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

static void say(const struct bt_store_conversation *c, const struct bt_repo_kept *k)
{
    const char *br = c->worktree.branch, *base = c->worktree.base;
    if (k->committed)
        printf("committed the worktree's changes on %s\n", br);
    if (k->how == BT_REPO_KEPT_NONE)
        printf("%s has everything of %s already (%.12s)\n", base, br, k->commit);
    else if (k->how == BT_REPO_KEPT_FAST_FORWARD)
        printf("fast-forwarded %s to %s (%.12s)\n", base, br, k->commit);
    else
        printf("merged %s into %s (%.12s)\n", br, base, k->commit);
    if (k->checkout) {
        fputs("updated the files of ", stdout);
        bt_term_write(stdout, k->checkout, strlen(k->checkout));
        putchar('\n');
    } else if (k->how != BT_REPO_KEPT_NONE) {
        printf("%s is checked out nowhere: only the branch moved\n", base);
    }
}

/* --prune in a group: the other conversations' worktrees and branches go,
 * with what they hold (keeping one result means dropping the others);
 * their conversations stay. Those removed are named in *done. */
static void prune_others(struct bt_store *s, const struct bt_store_conversation *c, int quiet,
                         struct bt_strv *done)
{
    struct bt_store_group g;
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (!c->group[0] || bt_store_group_get(s, c->group, &g, &v, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].id, c->id) == 0 || !v[i].worktree.path)
            continue;
        if (v[i].last_run_state == BT_STORE_RUN_RUNNING) {
            fprintf(stderr, "baton: kept the worktree of %.12s (%s): a turn of it runs\n", v[i].id,
                    v[i].coder);
            continue;
        }
        /* one the user moved, locked or worked in is kept, and said */
        if (bt_cmd_worktree_remove(&v[i], BT_REPO_DROP_WORK, quiet) == 0)
            bt_strv_push(done, v[i].id);
    }
    bt_store_conversation_list_free(v, n);
    bt_store_group_release(&g);
}

/* Keep c's work; the exit code. */
static int keep(struct bt_store *s, const struct bt_store_conversation *c,
                const struct keep_args *a)
{
    if (!c->worktree.path)
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %.12s has no worktree of its own (run --worktree): its "
                           "changes are in %s already",
                           c->id, c->cwd);
    if (c->last_run_state == BT_STORE_RUN_RUNNING)
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %.12s has a turn running: wait for it to end or cancel "
                           "it, then keep it",
                           c->id);
    struct bt_repo_worktree wt = bt_cmd_worktree_of(c);
    struct bt_repo_kept k;
    char *why = NULL, *message = message_of(c);
    int rc = bt_repo_keep(&wt, message, &k, &why), code = 0, pruned = 0;
    if (rc == -EINVAL)
        code = bt_cmd_fail(BT_EXIT_USAGE, "cannot keep conversation %.12s: %s", c->id, why);
    else if (rc)
        code = bt_cmd_fail(BT_EXIT_FAILED, "cannot keep conversation %.12s: %s%s", c->id, why,
                           k.committed ? " (its changes are committed on its branch)" : "");
    if (rc == 0 && !a->json)
        say(c, &k);
    struct bt_strv others;
    bt_strv_init(&others);
    if (rc == 0 && a->prune) {
        fflush(stdout);
        code = bt_cmd_worktree_remove(c, BT_REPO_DROP_NOTHING, a->json);
        pruned = code == 0;
        if (pruned)
            prune_others(s, c, a->json, &others);
    }
    if (rc == 0 && a->json)
        say_json(c, &k, pruned, &others);
    bt_strv_release(&others);
    bt_repo_kept_release(&k);
    free(message);
    free(why);
    return code;
}

static const struct bt_opt keep_opts[] = {
    {.id = 'p',
     .name = "prune",
     .help = "then remove the worktree and its branch (the base\nholds their work now) and, in a "
             "group, the other\nconversations' worktrees and branches with their\nwork"},
    {.id = 'j',
     .name = "json",
     .help = "{conversation, branch, base, how, commit, committed,\ncheckout, pruned, "
             "pruned_others} as "
             "one JSON object"},
    {0}};

const struct bt_cmd bt_cmd_def_keep = {
    .name = "keep",
    .run = bt_cmd_keep,
    .operands = "CONV",
    .summary = "bring a worktree conversation's work into the branch it started from",
    .opts = keep_opts,
    .notes = "For a conversation with a worktree of its own (run --worktree): its changes\n"
             "are committed on its branch (as you, by git's user.name and user.email, else\n"
             "as baton), then the branch it started from is fast-forwarded to it or gets a\n"
             "merge commit. Where that branch is checked out, its files follow, never over\n"
             "edits of yours: those, or a conflict between the two branches, leave it as it\n"
             "was (exit 1, the files named). A worktree made from a detached HEAD has no\n"
             "branch to go to (exit 2).\n"};

int bt_cmd_keep(int argc, char **argv)
{
    struct keep_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    struct bt_store_conversation c = {0};
    if ((rc = bt_cmd_resolve(s, a.conv, id)) == 0) {
        if (bt_store_conversation_get(s, id, &c) != 0)
            rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id,
                             bt_store_errmsg(s));
        else
            rc = keep(s, &c, &a);
    }
    bt_store_conversation_release(&c);
    bt_store_close(s);
    return rc;
}
