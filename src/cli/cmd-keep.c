/* SPDX-License-Identifier: MIT */
/*
 * cmd-keep: `baton keep CONV [--prune] [--json]` brings the work of a
 * conversation's own worktree (run --worktree) into the branch it started
 * from (src/repo.h, bt_repo_keep): the worktree's changes committed on its
 * branch, then a fast-forward or a merge commit; a conflict leaves the
 * base as it was. --prune then removes the worktree and its branch, whose
 * work the base holds now, and in a group (run -c a,b,c) the other
 * conversations' worktrees and branches, the results not kept. The work is
 * the service's (service-keep.c); this prints what it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "json.h"
#include "service-work.h"

struct keep_args {
    const char *conv; /* as typed */
    int prune;
    int json;
};

static int parse(int argc, char **argv, struct keep_args *k)
{
    struct bt_args a;
    int id;
    bt_args_init(&a, &bt_cmd_def_keep, argc, argv);
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

static void say_json(const struct bt_service_kept *k)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "conversation", k->conversation);
    bt_json_member(&b, "branch", k->branch);
    bt_json_member(&b, "base", k->base);
    bt_json_member(&b, "how", bt_service_kept_how(k->kept.how));
    bt_json_member(&b, "commit", k->kept.commit);
    bt_buf_addf(&b, ",\"committed\":%s", k->kept.committed ? "true" : "false");
    bt_json_member(&b, "checkout", k->kept.checkout);
    bt_buf_addf(&b, ",\"pruned\":%s,\"pruned_others\":[", k->pruned ? "true" : "false");
    for (size_t i = 1; i < k->pruned_n; i++) { /* [0]: its own */
        if (i > 1)
            bt_buf_addc(&b, ',');
        bt_json_quote(&b, k->pruned_v[i].conversation, strlen(k->pruned_v[i].conversation));
    }
    bt_buf_adds(&b, "]}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

static void say(const struct bt_service_kept *k)
{
    const char *br = k->branch, *base = k->base;
    if (k->kept.committed)
        printf("committed the worktree's changes on %s\n", br);
    if (k->kept.how == BT_REPO_KEPT_NONE)
        printf("%s has everything of %s already (%.12s)\n", base, br, k->kept.commit);
    else if (k->kept.how == BT_REPO_KEPT_FAST_FORWARD)
        printf("fast-forwarded %s to %s (%.12s)\n", base, br, k->kept.commit);
    else
        printf("merged %s into %s (%.12s)\n", br, base, k->kept.commit);
    if (k->kept.checkout) {
        fputs("updated the files of ", stdout);
        bt_term_write(stdout, k->kept.checkout, strlen(k->kept.checkout));
        putchar('\n');
    } else if (k->kept.how != BT_REPO_KEPT_NONE) {
        printf("%s is checked out nowhere: only the branch moved\n", base);
    }
}

/* "removed worktree P and branch B" of a worktree pruned. */
static void say_removed(const struct bt_service_pruned *p)
{
    const char *path = p->path, *branch = p->branch, *leftover = p->leftover;
    fputs(leftover ? "removed what was left of worktree " : "removed worktree ", stdout);
    bt_term_write(stdout, path, strlen(path));
    fputs(" and branch ", stdout);
    bt_term_write(stdout, branch, strlen(branch));
    if (leftover) {
        fputs(" (", stdout);
        bt_term_write(stdout, leftover, strlen(leftover));
        fputc(')', stdout);
    }
    fputc('\n', stdout);
}

/* Keep conv's work (service-keep.c); the exit code. */
static int keep(struct bt_store *s, const char *conv, const struct keep_args *a)
{
    struct bt_service_kept k;
    int rc = bt_service_keep(s, conv, a->prune, &k), code = 0;
    int kept = rc == 0 || k.branch != NULL; /* kept, maybe not pruned */
    if (kept && k.kept.commit[0] && !a->json)
        say(&k);
    if (rc)
        code = bt_cmd_fail(k.result == BT_SERVICE_USAGE ? BT_EXIT_USAGE : BT_EXIT_FAILED, "%s",
                           k.message);
    for (size_t i = 0; i < k.pruned_n && !a->json; i++)
        say_removed(&k.pruned_v[i]);
    fflush(stdout);
    for (size_t i = 0; i < k.notes.n; i++)
        fprintf(stderr, "baton: %s\n", k.notes.v[i]);
    if (rc == 0 && a->json)
        say_json(&k);
    bt_service_kept_release(&k);
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
    if ((rc = bt_cmd_resolve(s, a.conv, id)) == 0)
        rc = keep(s, id, &a);
    bt_store_close(s);
    return rc;
}
