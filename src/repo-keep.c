/* SPDX-License-Identifier: MIT */
/*
 * repo-keep: bring a conversation's worktree branch into the branch it
 * started from (repo.h, bt_repo_keep), as `git commit -a` (with untracked
 * files) in the worktree and then `git merge` into the base would: a
 * fast-forward, or a merge commit. The merge is made in memory and the
 * base's working tree checked for the user's edits before anything of the
 * base is written, so a conflict leaves the base as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "repo-int.h"

void bt_repo_kept_release(struct bt_repo_kept *k)
{
    free(k->checkout);
    *k = (struct bt_repo_kept){0};
}

/* The identity of baton's commits: the user's (user.name and user.email
 * of the repository's configuration), else "baton". */
static int signature(git_repository *repo, git_signature **sig)
{
    if (git_signature_default(sig, repo) == 0)
        return 0;
    return git_signature_now(sig, "baton", "baton@localhost");
}

/* Commit on HEAD's branch the index of w's files as they are (git add -A:
 * ignored files left out). */
static int commit_all(git_repository *w, const char *message, char **why)
{
    char *all[] = {"*"};
    git_strarray paths = {all, 1};
    git_index *idx = NULL;
    git_tree *tree = NULL;
    git_object *parent = NULL;
    git_signature *sig = NULL;
    git_oid tree_id, id;
    int rc = git_repository_index(&idx, w);
    if (rc == 0)
        rc = git_index_add_all(idx, &paths, GIT_INDEX_ADD_DEFAULT, NULL, NULL);
    if (rc == 0)
        rc = git_index_update_all(idx, &paths, NULL, NULL);
    if (rc == 0 && (rc = git_index_write(idx)) == 0 &&
        (rc = git_index_write_tree(&tree_id, idx)) == 0)
        rc = git_tree_lookup(&tree, w, &tree_id);
    if (rc == 0)
        rc = git_revparse_single(&parent, w, "HEAD^{commit}");
    if (rc == 0 && (rc = signature(w, &sig)) == 0) {
        const git_commit *parents[] = {(const git_commit *)parent};
        rc = git_commit_create(&id, w, "HEAD", sig, sig, NULL, message, tree, 1, parents);
    }
    if (rc)
        *why = bt_repo_why("cannot commit the worktree's changes");
    git_signature_free(sig);
    git_object_free(parent);
    git_tree_free(tree);
    git_index_free(idx);
    return rc ? BT_EPROTO : 0;
}

/* Commit what wt's worktree has that its HEAD has not; k->committed. */
static int commit_worktree(const struct bt_repo_worktree *wt, const char *message,
                           struct bt_repo_kept *k, char **why)
{
    git_repository *w = NULL;
    size_t n = 0;
    /* not searched for above: a worktree that is gone leaves its branch */
    if (git_repository_open_ext(&w, wt->path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0)
        return 0;
    int rc = bt_repo_changes_count(w, &n, why);
    if (rc == 0 && n) {
        rc = commit_all(w, message, why);
        k->committed = rc == 0;
    }
    git_repository_free(w);
    return rc;
}

/* The commit a local branch points at, with the branch. */
static int branch_tip(git_repository *repo, const char *name, git_reference **ref, git_commit **tip)
{
    git_object *obj = NULL;
    if (git_branch_lookup(ref, repo, name, GIT_BRANCH_LOCAL) != 0)
        return BT_ENOTFOUND;
    if (git_reference_peel(&obj, *ref, GIT_OBJECT_COMMIT) != 0) {
        git_reference_free(*ref);
        *ref = NULL;
        return BT_EPROTO;
    }
    *tip = (git_commit *)obj;
    return 0;
}

/* The conflicted paths of idx as "a.txt, b/c.txt" (at most 10 named). */
static char *conflicts_of(git_index *idx)
{
    struct bt_buf b = BT_BUF_INIT;
    git_index_conflict_iterator *it = NULL;
    const git_index_entry *anc, *ours, *theirs;
    size_t n = 0;
    if (git_index_conflict_iterator_new(&it, idx) == 0) {
        while (git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
            const git_index_entry *e = ours ? ours : theirs ? theirs : anc;
            if (n++ < 10)
                bt_buf_addf(&b, "%s%s", n > 1 ? ", " : "", e->path);
        }
        git_index_conflict_iterator_free(it);
    }
    if (n > 10)
        bt_buf_addf(&b, " and %zu more", n - 10);
    return bt_buf_detach(&b, NULL);
}

/* The merge commit of base and branch, made in memory, written to the
 * object database (no reference moves); BT_ECONFLICT when they conflict. */
static int merge_commit(git_repository *repo, const struct bt_repo_worktree *wt, git_commit *base,
                        git_commit *branch, git_oid *out, char **why)
{
    git_index *idx = NULL;
    git_tree *tree = NULL;
    git_signature *sig = NULL;
    git_oid tree_id;
    int rc = BT_EPROTO;
    if (git_merge_commits(&idx, repo, base, branch, NULL) != 0) {
        *why = bt_repo_why("cannot merge");
    } else if (git_index_has_conflicts(idx)) {
        char *paths = conflicts_of(idx);
        *why = bt_xasprintf("%s and %s conflict in %s: nothing was merged", wt->branch, wt->base,
                            paths);
        free(paths);
        rc = BT_ECONFLICT;
    } else if (git_index_write_tree_to(&tree_id, idx, repo) != 0 ||
               git_tree_lookup(&tree, repo, &tree_id) != 0 || signature(repo, &sig) != 0) {
        *why = bt_repo_why("cannot write the merge");
    } else {
        char *message = bt_xasprintf("Merge branch '%s' into %s\n", wt->branch, wt->base);
        const git_commit *parents[] = {base, branch};
        rc = git_commit_create(out, repo, NULL, sig, sig, NULL, message, tree, 2, parents);
        if (rc)
            *why = bt_repo_why("cannot write the merge");
        free(message);
        rc = rc ? BT_EPROTO : 0;
    }
    git_signature_free(sig);
    git_tree_free(tree);
    git_index_free(idx);
    return rc;
}

/* The working tree that has branch ref checked out, opened, or NULL: the
 * repository's own, or one of its worktrees. */
static git_repository *checked_out(git_repository *repo, git_reference *ref)
{
    const char *name = git_reference_name(ref);
    git_reference *head = NULL;
    git_repository *w = NULL;
    if (!git_repository_is_bare(repo) && git_repository_head(&head, repo) == 0 &&
        strcmp(git_reference_name(head), name) == 0 &&
        git_repository_open(&w, git_repository_workdir(repo)) == 0) {
        git_reference_free(head);
        return w;
    }
    git_reference_free(head);
    git_strarray names = {0};
    if (git_worktree_list(&names, repo) != 0)
        return NULL;
    for (size_t i = 0; !w && i < names.count; i++) {
        git_worktree *wt = NULL;
        if (git_repository_head_for_worktree(&head, repo, names.strings[i]) == 0 &&
            strcmp(git_reference_name(head), name) == 0 &&
            git_worktree_lookup(&wt, repo, names.strings[i]) == 0)
            git_repository_open_from_worktree(&w, wt);
        git_worktree_free(wt);
        git_reference_free(head);
        head = NULL;
    }
    git_strarray_dispose(&names);
    return w;
}

/* Move branch ref from old to tip; where it is checked out, its files and
 * index follow as `git merge` updates them, refused (BT_ECONFLICT) before
 * anything is written when the user's edits there are in the way. */
static int advance(git_repository *repo, git_reference *ref, git_commit *old, const git_oid *tip,
                   struct bt_repo_kept *k, char **why)
{
    git_repository *w = checked_out(repo, ref);
    git_commit *to = NULL;
    git_tree *baseline = NULL;
    int rc = 0;
    if (w) {
        git_checkout_options o;
        git_checkout_options_init(&o, GIT_CHECKOUT_OPTIONS_VERSION);
        o.checkout_strategy = GIT_CHECKOUT_SAFE;
        if (git_commit_tree(&baseline, old) != 0 || git_commit_lookup(&to, w, tip) != 0) {
            rc = BT_EPROTO;
            *why = bt_repo_why("cannot read the merged commit");
        } else {
            o.baseline = baseline;
            int err = git_checkout_tree(w, (const git_object *)to, &o);
            if (err == GIT_ECONFLICT) {
                rc = BT_ECONFLICT;
                *why = bt_xasprintf("your edits in %s are in the way of files the merge changes: "
                                    "commit or stash them, then keep again; nothing was merged",
                                    git_repository_workdir(w));
            } else if (err) {
                rc = BT_EPROTO;
                *why = bt_repo_why("cannot update the files of the branch's checkout");
            } else {
                k->checkout = bt_xstrdup(git_repository_workdir(w));
            }
        }
    }
    git_reference *moved = NULL;
    if (rc == 0 && git_reference_set_target(&moved, ref, tip, "baton keep") != 0) {
        rc = BT_EPROTO;
        *why = bt_repo_why("cannot move the branch");
    }
    git_reference_free(moved);
    git_tree_free(baseline);
    git_commit_free(to);
    git_repository_free(w);
    return rc;
}

/* Bring branch into base (both looked up); k filled. */
static int bring_in(git_repository *repo, const struct bt_repo_worktree *wt, struct bt_repo_kept *k,
                    char **why)
{
    git_reference *base_ref = NULL, *branch_ref = NULL;
    git_commit *base = NULL, *branch = NULL;
    int rc = branch_tip(repo, wt->base, &base_ref, &base);
    if (rc == BT_ENOTFOUND) {
        size_t n = strlen(wt->base);
        int commit = n == BT_REPO_OID_SIZE - 1 && strspn(wt->base, "0123456789abcdef") == n;
        *why = commit ? bt_xasprintf("it started from a detached HEAD (commit %.12s): there is "
                                     "no branch to keep it in; merge %s yourself",
                                     wt->base, wt->branch)
                      : bt_xasprintf("the branch %s it started from is gone", wt->base);
        rc = -EINVAL;
    } else if (rc == 0 && (rc = branch_tip(repo, wt->branch, &branch_ref, &branch)) != 0) {
        *why = bt_xasprintf("its branch %s is gone", wt->branch);
        rc = -EINVAL;
    } else if (rc == 0) {
        const git_oid *b = git_commit_id(base), *t = git_commit_id(branch);
        git_oid tip;
        if (git_oid_equal(b, t) || git_graph_descendant_of(repo, b, t) == 1) {
            k->how = BT_REPO_KEPT_NONE;
            git_oid_cpy(&tip, b);
        } else if (git_graph_descendant_of(repo, t, b) == 1) {
            k->how = BT_REPO_KEPT_FAST_FORWARD;
            git_oid_cpy(&tip, t);
            rc = advance(repo, base_ref, base, &tip, k, why);
        } else {
            k->how = BT_REPO_KEPT_MERGE;
            if ((rc = merge_commit(repo, wt, base, branch, &tip, why)) == 0)
                rc = advance(repo, base_ref, base, &tip, k, why);
        }
        if (rc == 0)
            bt_repo_hex(&tip, k->commit);
    } else {
        *why = bt_repo_why("cannot read the branch it started from");
    }
    git_commit_free(base);
    git_commit_free(branch);
    git_reference_free(base_ref);
    git_reference_free(branch_ref);
    return rc;
}

int bt_repo_keep(const struct bt_repo_worktree *wt, const char *message, struct bt_repo_kept *k,
                 char **why)
{
    *k = (struct bt_repo_kept){0};
    *why = NULL;
    git_repository *repo = NULL;
    int rc = bt_repo_open_gitdir(wt->repo, &repo, why);
    if (rc == 0)
        rc = commit_worktree(wt, message, k, why);
    if (rc == 0)
        rc = bring_in(repo, wt, k, why);
    git_repository_free(repo);
    return rc;
}
