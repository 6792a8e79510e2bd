/* SPDX-License-Identifier: MIT */
/*
 * repo-worktree: a conversation's own git worktree and branch (repo.h),
 * made and removed with libgit2 as `git worktree add -b BRANCH PATH` and
 * `git worktree remove` + `git branch -d` would.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "repo-int.h"

void bt_repo_worktree_release(struct bt_repo_worktree *wt)
{
    free(wt->path);
    free(wt->cwd);
    free(wt->branch);
    free(wt->base);
    free(wt->start);
    free(wt->repo);
    *wt = (struct bt_repo_worktree){0};
}

/* The last component of path (a worktree's name in .git/worktrees/). */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Why repo cannot give a worktree its HEAD (a static sentence), or NULL. */
static const char *unusable(git_repository *repo)
{
    if (git_repository_is_bare(repo))
        return "is a bare repository: it has no working tree to start from";
    if (git_repository_head_unborn(repo) == 1)
        return "has no commit yet: commit something first";
    return NULL;
}

/* The new branch's name (owned), or NULL with *why. */
static char *branch_name(git_repository *repo, const char *path, const char *branch, char **why)
{
    char *name = branch ? bt_xstrdup(branch) : bt_xasprintf("baton/%s", base_name(path));
    int valid = 0;
    git_reference *old = NULL;
    if (git_branch_name_is_valid(&valid, name) != 0 || !valid || name[0] == '-') {
        *why = bt_xasprintf("'%s' is not a name git takes for a branch", name);
    } else if (git_branch_lookup(&old, repo, name, GIT_BRANCH_LOCAL) == 0) {
        *why = bt_xasprintf("a branch '%s' exists already: name another with --branch", name);
        git_reference_free(old);
    } else {
        return name;
    }
    free(name);
    return NULL;
}

/* HEAD's commit, and what the worktree starts from: HEAD's branch, or
 * the commit's id for a detached HEAD. */
static int head_of(git_repository *repo, git_commit **commit, char **base, char **why)
{
    git_reference *head = NULL;
    git_object *obj = NULL;
    if (git_repository_head(&head, repo) != 0 ||
        git_reference_peel(&obj, head, GIT_OBJECT_COMMIT) != 0) {
        git_reference_free(head);
        *why = bt_repo_why("cannot read HEAD");
        return BT_EPROTO;
    }
    *commit = (git_commit *)obj;
    if (git_repository_head_detached(repo) == 1) {
        char hex[BT_REPO_OID_SIZE];
        bt_repo_hex(git_commit_id(*commit), hex);
        *base = bt_xstrdup(hex);
    } else {
        *base = bt_xstrdup(git_reference_shorthand(head));
    }
    git_reference_free(head);
    return 0;
}

/* dir's place in repo's working tree, "" for its top ("sub/dir/"). */
static char *place_in(git_repository *repo, const char *dir)
{
    const char *top = git_repository_workdir(repo); /* with a trailing '/' */
    char real[PATH_MAX];
    if (!top || !realpath(dir, real))
        return bt_xstrdup("");
    size_t n = strlen(top);
    size_t m = strlen(real);
    if (m + 1 == n && strncmp(real, top, m) == 0)
        return bt_xstrdup(""); /* the top itself */
    return strncmp(real, top, n) == 0 ? bt_xstrdup(real + n) : bt_xstrdup("");
}

/* Make the branch and the worktree on it; undo the branch on failure. */
static int add(git_repository *repo, const char *path, const char *name, git_commit *commit,
               char **why)
{
    git_reference *ref = NULL;
    git_worktree *w = NULL;
    if (git_branch_create(&ref, repo, name, commit, 0) != 0) {
        *why = bt_repo_why("cannot make the branch");
        return BT_EPROTO;
    }
    git_worktree_add_options o;
    git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
    o.ref = ref;
    int rc = git_worktree_add(&w, repo, base_name(path), path, &o);
    if (rc != 0) {
        *why = bt_repo_why("cannot make the worktree");
        git_branch_delete(ref);
    }
    git_worktree_free(w);
    git_reference_free(ref);
    return rc ? BT_EPROTO : 0;
}

/* path must not exist; its parent is made (in a directory that exists). */
static int place_free(const char *path, char **why)
{
    struct stat st;
    size_t n = strlen(path);
    if (!n || path[n - 1] == '/' || path[0] != '/') { /* its last component names it */
        *why = bt_xasprintf("'%s' is not an absolute path ending in the worktree's name", path);
        return -EINVAL;
    }
    if (lstat(path, &st) == 0) {
        *why = bt_xasprintf("%s exists already", path);
        return -EEXIST;
    }
    char *parent = bt_xstrdup(path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    int rc = mkdir(parent, 0700) == 0 || errno == EEXIST ? 0 : -errno;
    if (rc)
        *why = bt_xasprintf("cannot make %s: %s", parent, bt_strerror(rc));
    free(parent);
    return rc;
}

int bt_repo_worktree_add(const char *dir, const char *path, const char *branch,
                         struct bt_repo_worktree *wt, char **why)
{
    *wt = (struct bt_repo_worktree){0};
    *why = NULL;
    git_repository *repo;
    int rc = bt_repo_open(dir, &repo, why);
    if (rc)
        return rc;
    git_commit *commit = NULL;
    char *name = NULL, *base = NULL;
    const char *bad = unusable(repo);
    if (bad) {
        *why = bt_xasprintf("the repository of %s %s", dir, bad);
        rc = -EINVAL;
    } else if ((name = branch_name(repo, path, branch, why)) == NULL) {
        rc = -EINVAL;
    } else if ((rc = head_of(repo, &commit, &base, why)) == 0 &&
               (rc = place_free(path, why)) == 0 &&
               (rc = add(repo, path, name, commit, why)) == 0) {
        char *place = place_in(repo, dir);
        char hex[BT_REPO_OID_SIZE];
        bt_repo_hex(git_commit_id(commit), hex);
        wt->path = realpath(path, NULL);
        wt->cwd = bt_xasprintf("%s/%s", wt->path ? wt->path : path, place);
        wt->branch = name;
        wt->base = base;
        wt->start = bt_xstrdup(hex);
        wt->repo = bt_xstrdup(git_repository_commondir(repo));
        name = base = NULL;
        free(place);
        if (!wt->path)
            wt->path = bt_xstrdup(path);
        size_t n = strlen(wt->cwd);
        if (n > 1 && wt->cwd[n - 1] == '/')
            wt->cwd[n - 1] = '\0';
    }
    free(name);
    free(base);
    git_commit_free(commit);
    git_repository_free(repo);
    return rc;
}

int bt_repo_changes_count(git_repository *repo, size_t *n, char **why)
{
    git_status_options o;
    git_status_options_init(&o, GIT_STATUS_OPTIONS_VERSION);
    o.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    o.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
    git_status_list *list = NULL;
    if (git_status_list_new(&list, repo, &o) != 0) {
        *why = bt_repo_why("cannot read the worktree's status");
        return BT_EPROTO;
    }
    *n = git_status_list_entrycount(list);
    git_status_list_free(list);
    return 0;
}

int bt_repo_worktree_dirty(const char *path, int *dirty, char **why)
{
    *why = NULL;
    git_repository *repo;
    int rc = bt_repo_open(path, &repo, why);
    size_t n = 0;
    if (rc == 0)
        rc = bt_repo_changes_count(repo, &n, why);
    *dirty = n > 0;
    git_repository_free(repo);
    return rc;
}

/* 1 if path is a worktree of repo: only then is its directory removed
 * (a directory someone put where it was is not baton's). */
static int is_worktree_of(git_repository *repo, const char *path)
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

/* Why wt must be kept (owned), or NULL: uncommitted changes, or commits
 * only its branch holds. */
static char *keep_why(git_repository *repo, const struct bt_repo_worktree *wt, git_reference *br,
                      int *rc, char **why)
{
    size_t n = 0, ahead = 0;
    git_repository *w = NULL;
    if (is_worktree_of(repo, wt->path) && git_repository_open(&w, wt->path) == 0) {
        *rc = bt_repo_changes_count(w, &n, why);
        git_repository_free(w);
        if (*rc)
            return NULL;
        if (n)
            return bt_xasprintf("%s has changes (%zu file%s): commit or discard them, or use "
                                "--force",
                                wt->path, n, n == 1 ? "" : "s");
    }
    if (br && (*rc = ahead_of_base(repo, wt, br, &ahead, why)) != 0)
        return NULL;
    if (ahead)
        return bt_xasprintf("branch %s has %zu commit%s that %s does not: merge %s, or use "
                            "--force",
                            wt->branch, ahead, ahead == 1 ? "" : "s", wt->base,
                            ahead == 1 ? "it" : "them");
    return NULL;
}

/* Prune wt from repo, with its directory when that is still the
 * worktree. */
static int prune(git_repository *repo, const struct bt_repo_worktree *wt, char **why)
{
    git_worktree *w = NULL;
    if (git_worktree_lookup(&w, repo, base_name(wt->path)) != 0)
        return 0; /* pruned already */
    git_worktree_prune_options o;
    git_worktree_prune_options_init(&o, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
    o.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
    if (is_worktree_of(repo, wt->path))
        o.flags |= GIT_WORKTREE_PRUNE_WORKING_TREE;
    int rc = git_worktree_prune(w, &o);
    git_worktree_free(w);
    if (rc) {
        *why = bt_repo_why("cannot remove the worktree");
        return BT_EPROTO;
    }
    return 0;
}

int bt_repo_worktree_kept(const struct bt_repo_worktree *wt, char **why)
{
    *why = NULL;
    git_repository *repo;
    int rc = bt_repo_open_gitdir(wt->repo, &repo, why);
    if (rc)
        return rc;
    git_reference *br = NULL;
    if (git_branch_lookup(&br, repo, wt->branch, GIT_BRANCH_LOCAL) != 0)
        br = NULL;
    char *keep = keep_why(repo, wt, br, &rc, why);
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
    *why = NULL;
    git_repository *repo;
    int rc = bt_repo_open_gitdir(wt->repo, &repo, why);
    if (rc)
        return rc;
    git_reference *br = NULL;
    if (git_branch_lookup(&br, repo, wt->branch, GIT_BRANCH_LOCAL) != 0)
        br = NULL; /* gone already */
    char *keep = force ? NULL : keep_why(repo, wt, br, &rc, why);
    if (keep) {
        *why = keep;
        rc = -EBUSY;
    }
    if (rc == 0)
        rc = prune(repo, wt, why);
    /* the reference alone: git_branch_delete also drops the branch's
     * config section (baton sets none) through a regex match that leaks
     * in libgit2 1.5.1 (fixed by libgit2 PR #6382, in 1.6) */
    if (rc == 0 && br && git_branch_is_checked_out(br) != 1 && git_reference_delete(br) != 0) {
        *why = bt_repo_why("cannot delete the branch");
        rc = BT_EPROTO;
    }
    git_reference_free(br);
    git_repository_free(repo);
    return rc;
}
