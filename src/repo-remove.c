/* SPDX-License-Identifier: MIT */
/*
 * repo-remove: removing a conversation's worktree and branch (repo.h,
 * bt_repo_worktree_kept and _remove) as `git worktree remove` and `git
 * branch -d` would, and refusing, without force, whenever that would lose
 * work: changes in it, commits only its branch has, commits made on a
 * detached HEAD or another branch there, initialized submodules (their
 * repositories live in its git directory), or a lock.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "repo-int.h"

/* 1 if path is a worktree of repo: only then is its directory removed
 * (a directory someone put where it was is not baton's). */
int bt_repo_is_worktree_of(git_repository *repo, const char *path)
{
    git_repository *w = NULL;
    int ours = git_repository_open_ext(&w, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
               git_repository_is_worktree(w) == 1 &&
               strcmp(git_repository_commondir(w), git_repository_commondir(repo)) == 0;
    git_repository_free(w);
    return ours;
}

/* How many commits the branch br has that wt's base does not (the base
 * branch, else the commit it names, else the commit wt started from). */
static int ahead_of_base(git_repository *repo, const struct bt_repo_worktree *wt, git_reference *br,
                         size_t *ahead, char **why)
{
    git_oid base;
    git_reference *b = NULL;
    if (git_branch_lookup(&b, repo, wt->base, GIT_BRANCH_LOCAL) == 0) {
        git_reference *direct = NULL;
        int ok = git_reference_resolve(&direct, b) == 0;
        if (ok)
            git_oid_cpy(&base, git_reference_target(direct));
        git_reference_free(direct);
        git_reference_free(b);
        if (!ok)
            goto fail;
    } else if (git_oid_fromstr(&base, wt->base) != 0 && git_oid_fromstr(&base, wt->start) != 0) {
        goto fail;
    }
    size_t behind;
    const git_oid *tip = git_reference_target(br);
    if (tip && git_graph_ahead_behind(ahead, &behind, repo, tip, &base) == 0)
        return 0;
fail:
    *why = bt_repo_why("cannot compare the branch with its base");
    return BT_EPROTO;
}

/* 1 if the directory dir has an entry. */
static int has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int any = 0;
    while (d && !any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return any;
}

/* Why the checkout w of wt must be kept (owned), or NULL: its HEAD not on
 * its branch, initialized submodules, changes. */
static char *checkout_keeps(git_repository *w, const struct bt_repo_worktree *wt, const char *path,
                            int work_ok, int *rc, char **why)
{
    git_reference *head = NULL;
    char *name = bt_xasprintf("refs/heads/%s", wt->branch), *keep = NULL;
    char *modules = bt_xasprintf("%smodules", git_repository_path(w));
    size_t n = 0;
    if (git_repository_head_detached(w) == 1)
        keep = bt_xasprintf("%s has a detached HEAD (commits made there are on no branch): "
                            "`git switch %s` there, or use --force",
                            path, wt->branch);
    else if (git_repository_head(&head, w) == 0 && strcmp(git_reference_name(head), name) != 0)
        keep = bt_xasprintf("%s is on branch %s, not %s: `git switch %s` there, or use --force",
                            path, git_reference_shorthand(head), wt->branch, wt->branch);
    else if (has_entries(modules))
        keep = bt_xasprintf("%s has initialized submodules, whose repositories (and commits) "
                            "live only in it: use --force to remove them",
                            path);
    else if (!work_ok && (*rc = bt_repo_changes_count(w, &n, why)) == 0 && n)
        keep = bt_xasprintf("%s has changes (%zu file%s): commit or discard them, or use --force",
                            path, n, n == 1 ? "" : "s");
    git_reference_free(head);
    free(modules);
    free(name);
    return keep;
}

/* Why wt must be kept (owned), or NULL: a lock, what its checkout holds
 * (where git has it now: a moved worktree is found), or commits only its
 * branch holds. */
static char *keep_why(git_repository *repo, const struct bt_repo_worktree *wt, git_reference *br,
                      int work_ok, int *rc, char **why)
{
    size_t ahead = 0;
    git_worktree *reg = NULL;
    char *keep = NULL;
    if (git_worktree_lookup(&reg, repo, bt_repo_worktree_name(wt->path)) == 0) {
        git_buf reason = {0};
        const char *path = git_worktree_path(reg);
        git_repository *w = NULL;
        int locked = git_worktree_is_locked(&reason, reg) > 0;
        while (reason.size &&
               (reason.ptr[reason.size - 1] == '\n' || reason.ptr[reason.size - 1] == '\r'))
            reason.ptr[--reason.size] = '\0';
        if (locked)
            keep = bt_xasprintf("%s is locked%s%s: `git worktree unlock %s` first, or use --force",
                                path, reason.size ? ": " : "", reason.size ? reason.ptr : "", path);
        else if (work_ok && strcmp(path, wt->path) != 0)
            keep = bt_xasprintf("it was moved to %s: remove it there yourself", path);
        else if (bt_repo_is_worktree_of(repo, path) && git_repository_open(&w, path) == 0)
            keep = checkout_keeps(w, wt, path, work_ok, rc, why);
        git_repository_free(w);
        git_buf_dispose(&reason);
        git_worktree_free(reg);
    }
    if (keep || *rc || work_ok)
        return keep;
    if (br && (*rc = ahead_of_base(repo, wt, br, &ahead, why)) != 0)
        return NULL;
    if (ahead)
        return bt_xasprintf("branch %s has %zu commit%s that %s does not: merge %s, or use "
                            "--force",
                            wt->branch, ahead, ahead == 1 ? "" : "s", wt->base,
                            ahead == 1 ? "it" : "them");
    return NULL;
}

/* Prune wt from repo, with its directory (where git has it now) when that
 * is still the worktree: 1, 0 when git has it no more, or an error. */
static int prune(git_repository *repo, const struct bt_repo_worktree *wt, char **why)
{
    git_worktree *w = NULL;
    if (git_worktree_lookup(&w, repo, bt_repo_worktree_name(wt->path)) != 0)
        return 0; /* pruned already */
    git_worktree_prune_options o;
    git_worktree_prune_options_init(&o, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
    o.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
    if (bt_repo_is_worktree_of(repo, git_worktree_path(w)))
        o.flags |= GIT_WORKTREE_PRUNE_WORKING_TREE;
    int rc = git_worktree_prune(w, &o);
    git_worktree_free(w);
    if (rc) {
        *why = bt_repo_why("cannot remove the worktree");
        return BT_EPROTO;
    }
    return 1;
}

/* Open wt's repository, look its branch up (*br NULL when gone) and say
 * why it must be kept as drop allows (*keep, owned, NULL: it may go). */
static int judge(const struct bt_repo_worktree *wt, enum bt_repo_drop drop, git_repository **repo,
                 git_reference **br, char **keep, char **why)
{
    *why = *keep = NULL;
    *br = NULL;
    int rc = bt_repo_open_gitdir(wt->repo, repo, why);
    if (rc)
        return rc;
    if (git_branch_lookup(br, *repo, wt->branch, GIT_BRANCH_LOCAL) != 0)
        *br = NULL; /* gone already */
    if (drop != BT_REPO_DROP_ALL)
        *keep = keep_why(*repo, wt, *br, drop == BT_REPO_DROP_WORK, &rc, why);
    return rc;
}

int bt_repo_worktree_kept(const struct bt_repo_worktree *wt, char **why)
{
    git_repository *repo = NULL;
    git_reference *br = NULL;
    char *keep;
    int rc = judge(wt, BT_REPO_DROP_NOTHING, &repo, &br, &keep, why);
    if (keep) {
        *why = keep;
        rc = -EBUSY;
    }
    git_reference_free(br);
    git_repository_free(repo);
    return rc;
}

int bt_repo_worktree_remove(const struct bt_repo_worktree *wt, int force, char **why)
{
    return bt_repo_worktree_drop(wt, force ? BT_REPO_DROP_ALL : BT_REPO_DROP_NOTHING, why);
}

int bt_repo_worktree_drop(const struct bt_repo_worktree *wt, enum bt_repo_drop drop, char **why)
{
    git_repository *repo = NULL;
    git_reference *br = NULL;
    char *keep;
    int rc = judge(wt, drop, &repo, &br, &keep, why);
    if (rc && !repo)
        return rc;
    if (keep) {
        *why = keep;
        rc = -EBUSY;
    }
    int pruned = 0;
    if (rc == 0 && (pruned = prune(repo, wt, why)) < 0)
        rc = pruned;
    /* the reference alone: git_branch_delete also drops the branch's
     * config section (baton sets none) through a regex match that leaks
     * in libgit2 1.5.1 (fixed by libgit2 PR #6382, in 1.6) */
    int out = br && git_branch_is_checked_out(br) == 1;
    if (rc == 0 && br && !out && git_reference_delete(br) != 0) {
        *why = bt_repo_why("cannot delete the branch");
        rc = BT_EPROTO;
    } else if (rc == 0 && (out || !br || !pruned)) {
        *why = bt_xasprintf("%s%s%s", !pruned ? "the worktree was gone already" : "",
                            !pruned && (out || !br) ? "; " : "",
                            out   ? "its branch is checked out elsewhere, so it stays"
                            : !br ? "its branch was gone already"
                                  : "");
    }
    git_reference_free(br);
    git_repository_free(repo);
    return rc;
}
