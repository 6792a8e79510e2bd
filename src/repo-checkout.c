/* SPDX-License-Identifier: MIT */
/*
 * repo-checkout: moving a branch where it may be checked out (repo-int.h):
 * found in the repository's own working tree or one of its worktrees,
 * refused while git is in the middle of something there, and updated as
 * `git merge` updates it, only when none of the user's edits (staged,
 * unstaged or untracked) touch the paths the move changes: checked first,
 * so a refusal writes nothing, and a failure half-way puts those paths
 * back. Ignored files count as the user's too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "repo-int.h"

/* Why repo is in the middle of something (static), or NULL. */
static const char *in_progress(git_repository *repo)
{
    switch (git_repository_state(repo)) {
    case GIT_REPOSITORY_STATE_NONE: return NULL;
    case GIT_REPOSITORY_STATE_MERGE: return "a merge";
    case GIT_REPOSITORY_STATE_REVERT:
    case GIT_REPOSITORY_STATE_REVERT_SEQUENCE: return "a revert";
    case GIT_REPOSITORY_STATE_CHERRYPICK:
    case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE: return "a cherry-pick";
    case GIT_REPOSITORY_STATE_BISECT: return "a bisect";
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE: return "a git am";
    default: return "a rebase";
    }
}

int bt_repo_busy(git_repository *repo, char **why)
{
    const char *what = in_progress(repo);
    git_strarray names = {0};
    char *where = what ? bt_xstrdup(git_repository_workdir(repo) ? git_repository_workdir(repo)
                                                                 : git_repository_path(repo))
                       : NULL;
    if (!what && git_worktree_list(&names, repo) == 0) {
        for (size_t i = 0; !what && i < names.count; i++) {
            git_worktree *wt = NULL;
            git_repository *w = NULL;
            if (git_worktree_lookup(&wt, repo, names.strings[i]) == 0 &&
                git_repository_open_from_worktree(&w, wt) == 0 && (what = in_progress(w)) != NULL)
                where = bt_xstrdup(git_worktree_path(wt));
            git_repository_free(w);
            git_worktree_free(wt);
        }
        git_strarray_dispose(&names);
    }
    if (what)
        *why = bt_xasprintf("%s is in progress in %s: finish or abort it first", what, where);
    free(where);
    return what ? -EINVAL : 0;
}

int bt_repo_checkout_find(git_repository *repo, git_reference *ref, git_repository **w, char **why)
{
    const char *name = git_reference_name(ref);
    git_reference *head = NULL;
    *w = NULL;
    if (git_repository_head(&head, repo) == 0 && strcmp(git_reference_name(head), name) == 0) {
        const char *dir = git_repository_workdir(repo);
        git_reference_free(head);
        if (dir && git_repository_open(w, dir) == 0)
            return 0;
        /* git init --separate-git-dir: its working tree is not written down */
        *why = bt_xasprintf("%s is checked out in a working tree baton cannot find (a "
                            "repository made with --separate-git-dir?): merge it yourself",
                            git_reference_shorthand(ref));
        return -EINVAL;
    }
    git_reference_free(head);
    git_strarray names = {0};
    if (git_worktree_list(&names, repo) != 0)
        return 0;
    for (size_t i = 0; !*w && i < names.count; i++) {
        git_worktree *wt = NULL;
        if (git_repository_head_for_worktree(&head, repo, names.strings[i]) == 0 &&
            strcmp(git_reference_name(head), name) == 0 &&
            git_worktree_lookup(&wt, repo, names.strings[i]) == 0)
            git_repository_open_from_worktree(w, wt);
        git_worktree_free(wt);
        git_reference_free(head);
        head = NULL;
    }
    git_strarray_dispose(&names);
    return 0;
}

/* The paths of a diff, old and new, into v. */
static void paths_of(git_diff *d, struct bt_strv *v)
{
    for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
        const git_diff_delta *e = git_diff_get_delta(d, i);
        bt_strv_push(v, e->new_file.path);
        if (strcmp(e->old_file.path, e->new_file.path) != 0)
            bt_strv_push(v, e->old_file.path);
    }
}

/* 1 if a and b name the same path, or one is a directory above the other
 * (a directory may come as "dir/"). */
static int overlap(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    while (n > 1 && a[n - 1] == '/')
        n--;
    while (m > 1 && b[m - 1] == '/')
        m--;
    size_t k = n < m ? n : m;
    return strncmp(a, b, k) == 0 && (n == m || (n < m ? b[n] : a[m]) == '/');
}

/* The user's edits in w (staged against old, unstaged, untracked) that
 * touch a path of changed, named "a.txt, b.txt" (owned), or NULL. */
static char *edits_in_the_way(git_repository *w, git_tree *old, const struct bt_strv *changed)
{
    git_index *idx = NULL;
    git_diff *staged = NULL, *unstaged = NULL;
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    /* ignored files too (a cache, a local .env): git merge would overwrite
     * them, and no snapshot holds them; an ignored directory comes whole */
    o.flags =
        GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_INCLUDE_IGNORED;
    struct bt_strv mine;
    bt_strv_init(&mine);
    if (git_repository_index(&idx, w) == 0 &&
        git_diff_tree_to_index(&staged, w, old, idx, NULL) == 0 &&
        git_diff_index_to_workdir(&unstaged, w, idx, &o) == 0) {
        paths_of(staged, &mine);
        paths_of(unstaged, &mine);
    }
    struct bt_buf b = BT_BUF_INIT;
    size_t hits = 0;
    for (size_t i = 0; i < mine.n; i++) {
        size_t seen = 0; /* staged and changed since: one name */
        while (seen < i && strcmp(mine.v[seen], mine.v[i]) != 0)
            seen++;
        for (size_t j = 0; seen == i && j < changed->n; j++)
            if (overlap(mine.v[i], changed->v[j])) {
                if (hits++ < 10)
                    bt_buf_addf(&b, "%s%s", hits > 1 ? ", " : "", mine.v[i]);
                break;
            }
    }
    if (hits > 10)
        bt_buf_addf(&b, " and %zu more", hits - 10);
    bt_strv_release(&mine);
    git_diff_free(unstaged);
    git_diff_free(staged);
    git_index_free(idx);
    return bt_buf_detach(&b, NULL);
}

/* Why w cannot be updated before anything is written (owned), or NULL. */
static char *cannot_update(git_repository *w, git_tree *old, const struct bt_strv *changed)
{
    const char *dir = git_repository_workdir(w);
    char *lock = bt_xasprintf("%sindex.lock", git_repository_path(w)), *why = NULL;
    struct stat st;
    git_index *idx = NULL;
    int sparse = 0;
    if (git_repository_index(&idx, w) == 0)
        for (size_t i = 0; !sparse && i < git_index_entrycount(idx); i++)
            sparse = (git_index_get_byindex(idx, i)->flags_extended &
                      GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0;
    git_index_free(idx);
    if (lstat(lock, &st) == 0)
        why = bt_xasprintf("another git command is working in %s (%s exists): try again when it "
                           "is done",
                           dir, lock);
    else if (sparse)
        why = bt_xasprintf("%s is a sparse checkout, which baton does not update: merge it "
                           "yourself",
                           dir);
    else {
        char *names = edits_in_the_way(w, old, changed);
        if (names && *names)
            why = bt_xasprintf("your edits in %s are in the way of the files it changes (%s): "
                               "commit or stash them, then keep again",
                               dir, names);
        free(names);
    }
    free(lock);
    return why;
}

/* Check out the paths of changed from tree in w as they are there (put
 * back after a failure: they held none of the user's edits). */
static void put_back(git_repository *w, git_tree *tree, const struct bt_strv *changed)
{
    git_checkout_options o;
    git_checkout_options_init(&o, GIT_CHECKOUT_OPTIONS_VERSION);
    o.checkout_strategy =
        GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
    o.paths.strings = changed->v;
    o.paths.count = changed->n;
    git_checkout_tree(w, (const git_object *)tree, &o);
}

/* Update w's files and index from old to new (a dry run first). */
static int update(git_repository *w, git_tree *old, git_tree *new, const struct bt_strv *changed,
                  char **why)
{
    git_checkout_options o;
    git_checkout_options_init(&o, GIT_CHECKOUT_OPTIONS_VERSION);
    o.checkout_strategy = GIT_CHECKOUT_SAFE | GIT_CHECKOUT_DRY_RUN;
    o.baseline = old;
    if (git_checkout_tree(w, (const git_object *)new, &o) != 0) {
        *why = bt_repo_why("the files of its checkout cannot be updated");
        return BT_ECONFLICT;
    }
    o.checkout_strategy = GIT_CHECKOUT_SAFE;
    if (git_checkout_tree(w, (const git_object *)new, &o) != 0) {
        *why = bt_repo_why("the files of its checkout cannot be updated (put back as they were)");
        put_back(w, old, changed);
        return BT_EPROTO;
    }
    return 0;
}

int bt_repo_checkout_advance(git_repository *repo, git_repository *w, git_reference *ref,
                             git_commit *old, const git_oid *tip, char **why)
{
    git_commit *to = NULL;
    git_tree *from = NULL, *into = NULL;
    git_diff *d = NULL;
    struct bt_strv changed;
    bt_strv_init(&changed);
    int rc = 0;
    if (git_commit_lookup(&to, repo, tip) != 0 || git_commit_tree(&from, old) != 0 ||
        git_commit_tree(&into, to) != 0 || git_diff_tree_to_tree(&d, repo, from, into, NULL) != 0) {
        *why = bt_repo_why("cannot read the commits");
        rc = BT_EPROTO;
    }
    /* the checkout's own objects: libgit2 checks out only a tree of the
     * repository it updates */
    git_tree *w_from = NULL, *w_into = NULL;
    if (rc == 0 && w &&
        (git_tree_lookup(&w_from, w, git_tree_id(from)) != 0 ||
         git_tree_lookup(&w_into, w, git_tree_id(into)) != 0)) {
        *why = bt_repo_why("cannot read the commits in the checkout");
        rc = BT_EPROTO;
    }
    if (rc == 0 && w) {
        paths_of(d, &changed);
        *why = cannot_update(w, w_from, &changed);
        rc = *why ? BT_ECONFLICT : update(w, w_from, w_into, &changed, why);
    }
    git_reference *moved = NULL;
    if (rc == 0 && git_reference_set_target(&moved, ref, tip, "baton keep") != 0) {
        *why = bt_repo_why("cannot move the branch");
        rc = BT_EPROTO;
        if (w)
            put_back(w, w_from, &changed);
    }
    git_reference_free(moved);
    git_tree_free(w_into);
    git_tree_free(w_from);
    git_diff_free(d);
    git_tree_free(into);
    git_tree_free(from);
    git_commit_free(to);
    bt_strv_release(&changed);
    return rc;
}
