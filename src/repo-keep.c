/* SPDX-License-Identifier: MIT */
/*
 * repo-keep: bring a conversation's worktree branch into the branch it
 * started from (repo.h, bt_repo_keep), as `git commit -a` (with untracked
 * files) in the worktree and then `git merge` into the base would: a
 * fast-forward, or a merge commit. Everything that can refuse is checked
 * before the worktree's changes are committed; the merge is made in
 * memory, and the base's checkout is updated only when none of the user's
 * edits are in the way (repo-checkout.c), so a refusal or a conflict
 * leaves the base as it was. Keeps of one repository take turns (a lock
 * on its git directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

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

/* What keep works on, looked up and checked before anything is written. */
struct keep {
    git_repository *repo;
    git_repository *w;     /* the conversation's checkout, NULL when gone */
    git_repository *where; /* the base's checkout, NULL when none */
    git_reference *base_ref, *branch_ref;
    git_commit *base, *branch;
};

static void keep_release(struct keep *p)
{
    git_commit_free(p->base);
    git_commit_free(p->branch);
    git_reference_free(p->base_ref);
    git_reference_free(p->branch_ref);
    git_repository_free(p->where);
    git_repository_free(p->w);
}

/* The worktree's checkout, where git has it now (moved: found), when it
 * is still one of repo's; its HEAD must be on its branch. */
static int open_checkout(struct keep *p, const struct bt_repo_worktree *wt, char **why)
{
    git_worktree *reg = NULL;
    if (git_worktree_lookup(&reg, p->repo, bt_repo_worktree_name(wt->path)) == 0 &&
        bt_repo_is_worktree_of(p->repo, git_worktree_path(reg)))
        git_repository_open_from_worktree(&p->w, reg);
    git_worktree_free(reg);
    if (!p->w) {
        *why = bt_xasprintf("its worktree %s is gone (or is not baton's any more): what its "
                            "branch holds can be merged with `git merge %s`",
                            wt->path, wt->branch);
        return -EINVAL;
    }
    git_reference *head = NULL;
    char *name = bt_xasprintf("refs/heads/%s", wt->branch);
    int on = git_repository_head(&head, p->w) == 0 && git_repository_head_detached(p->w) != 1 &&
             strcmp(git_reference_name(head), name) == 0;
    if (!on)
        *why = bt_xasprintf("the HEAD of %s is not on its branch %s (detached, or another "
                            "branch): `git switch %s` there first",
                            git_repository_workdir(p->w), wt->branch, wt->branch);
    git_reference_free(head);
    free(name);
    return on ? 0 : -EINVAL;
}

/* Look everything up; -EINVAL (or BT_EPROTO) with *why when keep must not
 * go on. Nothing is written. */
static int prepare(struct keep *p, const struct bt_repo_worktree *wt, char **why)
{
    char *filter = NULL;
    int rc = branch_tip(p->repo, wt->base, &p->base_ref, &p->base);
    if (rc == BT_ENOTFOUND) {
        size_t n = strlen(wt->base);
        int commit = n == BT_REPO_OID_SIZE - 1 && strspn(wt->base, "0123456789abcdef") == n;
        *why = commit ? bt_xasprintf("it started from a detached HEAD (commit %.12s): there is "
                                     "no branch to keep it in; merge %s yourself",
                                     wt->base, wt->branch)
                      : bt_xasprintf("the branch %s it started from is gone", wt->base);
        return -EINVAL;
    }
    if (rc == 0 && (rc = branch_tip(p->repo, wt->branch, &p->branch_ref, &p->branch)) != 0) {
        *why = bt_xasprintf("its branch %s is gone", wt->branch);
        return -EINVAL;
    }
    if (rc) {
        *why = bt_repo_why("cannot read the branches");
        return rc;
    }
    if ((rc = open_checkout(p, wt, why)) != 0 || (rc = bt_repo_busy(p->repo, why)) != 0 ||
        (rc = bt_repo_checkout_find(p->repo, p->base_ref, &p->where, why)) != 0)
        return rc;
    if (bt_repo_filter_used(p->repo, p->base, &filter) ||
        bt_repo_filter_used(p->repo, p->branch, &filter)) {
        *why =
            bt_xasprintf("the repository runs its files through the git filter '%s' "
                         "(git-lfs, git-crypt, ...), which libgit2 cannot run: merge %s yourself",
                         filter, wt->branch);
        free(filter);
        return -EINVAL;
    }
    return 0;
}

/* Commit what the worktree's checkout has that its HEAD has not. */
static int commit_changes(struct keep *p, const char *message, struct bt_repo_kept *k, char **why)
{
    size_t n = 0;
    int rc = p->w ? bt_repo_changes_count(p->w, &n, why) : 0;
    if (rc || !n)
        return rc;
    if ((rc = commit_all(p->w, message, why)) != 0)
        return rc;
    k->committed = 1;
    git_commit_free(p->branch); /* read again: the commit moved it */
    git_reference_free(p->branch_ref);
    p->branch = NULL;
    p->branch_ref = NULL;
    return 0;
}

/* Bring the branch into the base: nothing, a fast-forward or a merge. */
static int bring_in(struct keep *p, const struct bt_repo_worktree *wt, struct bt_repo_kept *k,
                    char **why)
{
    const git_oid *b = git_commit_id(p->base), *t = git_commit_id(p->branch);
    git_oid tip, common;
    int rc = 0;
    if (git_oid_equal(b, t) || git_graph_descendant_of(p->repo, b, t) == 1) {
        k->how = BT_REPO_KEPT_NONE;
        git_oid_cpy(&tip, b);
    } else if (git_merge_base(&common, p->repo, b, t) != 0) {
        *why = bt_xasprintf("%s and %s have no history in common: merge them yourself", wt->branch,
                            wt->base);
        return -EINVAL;
    } else if (git_graph_descendant_of(p->repo, t, b) == 1) {
        k->how = BT_REPO_KEPT_FAST_FORWARD;
        git_oid_cpy(&tip, t);
    } else {
        k->how = BT_REPO_KEPT_MERGE;
        rc = merge_commit(p->repo, wt, p->base, p->branch, &tip, why);
    }
    if (rc == 0 && k->how != BT_REPO_KEPT_NONE)
        rc = bt_repo_checkout_advance(p->repo, p->where, p->base_ref, p->base, &tip, why);
    if (rc == 0) {
        bt_repo_hex(&tip, k->commit);
        if (p->where && k->how != BT_REPO_KEPT_NONE)
            k->checkout = bt_xstrdup(git_repository_workdir(p->where));
    }
    return rc;
}

int bt_repo_keep(const struct bt_repo_worktree *wt, const char *message, struct bt_repo_kept *k,
                 char **why)
{
    *k = (struct bt_repo_kept){0};
    *why = NULL;
    struct keep p = {0};
    int rc = bt_repo_open_gitdir(wt->repo, &p.repo, why);
    if (rc)
        return rc;
    /* one keep of a repository at a time: a lock on its git directory,
     * which leaves no file behind */
    int lock = open(git_repository_commondir(p.repo), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock >= 0)
        flock(lock, LOCK_EX);
    rc = prepare(&p, wt, why);
    if (rc == 0)
        rc = commit_changes(&p, message, k, why);
    if (rc == 0 && k->committed && branch_tip(p.repo, wt->branch, &p.branch_ref, &p.branch) != 0) {
        *why = bt_repo_why("cannot read the branch after the commit");
        rc = BT_EPROTO;
    }
    if (rc == 0)
        rc = bring_in(&p, wt, k, why);
    if (lock >= 0)
        close(lock);
    keep_release(&p);
    git_repository_free(p.repo);
    return rc;
}
