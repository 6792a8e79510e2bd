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

/* Why repo cannot give a worktree its HEAD (a static sentence), or NULL. */
static const char *unusable(git_repository *repo)
{
    if (git_repository_is_bare(repo))
        return "is a bare repository: it has no working tree to start from";
    if (git_repository_head_unborn(repo) == 1)
        return "has no commit yet: commit something first";
    return NULL;
}

static int first_ref(const char *name, void *data)
{
    *(char **)data = bt_xstrdup(name + strlen("refs/heads/"));
    return 1; /* one is enough */
}

/* A branch whose name is a directory of name's ("baton/x" for
 * "baton/x/y"), or lies in name as a directory (owned), or NULL. */
static char *name_clash(git_repository *repo, const char *name)
{
    char *found = NULL, *glob = bt_xasprintf("refs/heads/%s/*", name);
    git_reference_foreach_glob(repo, glob, first_ref, &found);
    free(glob);
    for (const char *s = strchr(name, '/'); !found && s; s = strchr(s + 1, '/')) {
        char *prefix = bt_xstrndup(name, (size_t)(s - name));
        git_reference *ref = NULL;
        if (git_branch_lookup(&ref, repo, prefix, GIT_BRANCH_LOCAL) == 0)
            found = prefix;
        else
            free(prefix);
        git_reference_free(ref);
    }
    return found;
}

/* The new branch's name (owned), or NULL with *why. */
static char *branch_name(git_repository *repo, const char *path, const char *branch, char **why)
{
    char *name =
        branch ? bt_xstrdup(branch) : bt_xasprintf("baton/%s", bt_repo_worktree_name(path));
    int valid = 0;
    git_reference *old = NULL;
    char *clash = NULL;
    if (git_branch_name_is_valid(&valid, name) != 0 || !valid || name[0] == '-') {
        *why = bt_xasprintf("'%s' is not a name git takes for a branch", name);
    } else if (git_branch_lookup(&old, repo, name, GIT_BRANCH_LOCAL) == 0) {
        *why = bt_xasprintf("a branch '%s' exists already: name another with --branch", name);
        git_reference_free(old);
    } else if ((clash = name_clash(repo, name)) != NULL) {
        *why = bt_xasprintf("a branch '%s' exists, so git cannot make '%s' (one would be a "
                            "directory of the other): name another with --branch",
                            clash, name);
        free(clash);
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
    int rc = git_worktree_add(&w, repo, bt_repo_worktree_name(path), path, &o);
    if (rc != 0) {
        *why = bt_repo_why("cannot make the worktree");
        git_branch_delete(ref);
    }
    git_worktree_free(w);
    git_reference_free(ref);
    return rc ? BT_EPROTO : 0;
}

/* A repository whose files pass a git filter command libgit2 cannot run
 * (repo-filter.c): the worktree would hold their raw form. */
static int filters_refused(git_repository *repo, git_commit *commit, char **why)
{
    char *name = NULL;
    if (!bt_repo_filter_used(repo, commit, &name))
        return 0;
    *why = bt_xasprintf("the repository runs its files through the git filter '%s' (git-lfs, "
                        "git-crypt, ...), which libgit2 cannot run: the worktree would hold "
                        "their raw form",
                        name);
    free(name);
    return -EINVAL;
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

/* The worktree has dir's place only when HEAD has files there: an
 * ignored, untracked or empty directory (or one inside .git) is not in
 * it. Taken back, with its branch, when it has not. */
static int has_place(struct bt_repo_worktree *wt, const char *dir, char **why)
{
    struct stat st;
    if (stat(wt->cwd, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    *why = bt_xasprintf("%s is not in the repository's HEAD (ignored, untracked, empty, or in "
                        ".git): a worktree would not have it",
                        dir);
    char *ignored = NULL;
    bt_repo_worktree_remove(wt, 1, &ignored);
    free(ignored);
    bt_repo_worktree_release(wt);
    return -EINVAL;
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
               (rc = filters_refused(repo, commit, why)) == 0 &&
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
        rc = has_place(wt, dir, why);
    }
    free(name);
    free(base);
    git_commit_free(commit);
    git_repository_free(repo);
    return rc;
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
