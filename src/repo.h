/* SPDX-License-Identifier: MIT */
/*
 * repo: baton's git work, through libgit2 (Debian's 1.5.1): a
 * conversation's own worktree and branch (repo-worktree.c), snapshots of a
 * working tree as git trees in baton's own store (repo-snapshot.c,
 * repo-store.c) and the changes between two of them (repo-diff.c).
 * Nothing here runs git; nothing here writes the user's index, branches
 * other than the one it made, or files outside the worktree it made.
 *
 * The repository of a directory is found from it upward, not into
 * GIT_CEILING_DIRECTORIES (GIT_DIR and GIT_WORK_TREE are not read).
 *
 * Errors: each function returns 0 or a negative code, *why (owned) then a
 * sentence for the user with libgit2's own words where it gave any:
 *   BT_ENOTFOUND  no git repository at or above the directory
 *   -EINVAL       a repository baton cannot use for this (bare, no commit
 *                 yet, a branch name git refuses or one that exists)
 *   -EBUSY        a worktree with changes, which is kept (remove)
 *   BT_EPROTO     libgit2 failed (its message in *why)
 */
#ifndef BT_REPO_H
#define BT_REPO_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define BT_REPO_OID_SIZE 41 /* a SHA-1 object id in hex, NUL-terminated */

/* Start libgit2 now, on this thread, as every call of this module does
 * once anyway. For a process that calls this module from threads that
 * never end (libuv's pool: baton serve's rm and handoff): libgit2's start
 * starts OpenSSL (through libssh2, Debian's libgit2 1.5.1), whose state
 * for the starting thread is freed only when that thread ends. */
void bt_repo_start(void);

/* A conversation's worktree, as made (bt_repo_worktree_add). */
struct bt_repo_worktree {
    char *path;   /* its directory: absolute, resolved */
    char *cwd;    /* the directory asked for, as the worktree has it (path
                     and the directory's place in its repository) */
    char *branch; /* its branch, "baton/<name>" unless named */
    char *base;   /* the branch it started from ("main"), or the commit id
                     when HEAD was detached */
    char *start;  /* the commit it started from (hex) */
    char *repo;   /* the repository's git directory (its common one) */
};
void bt_repo_worktree_release(struct bt_repo_worktree *wt);

/* Make a worktree for the repository that holds dir (a subdirectory is
 * fine: the worktree has the whole repository) at path (which must not
 * exist; its parent is made), on a new branch (NULL: "baton/<name>", name
 * being path's last component) from HEAD's commit, checked out. Returns 0
 * with *wt filled, or an error above: not a repository, bare, no commit
 * yet, a branch name git refuses or that exists, path taken. Nothing is
 * left behind by a failure. */
int bt_repo_worktree_add(const char *dir, const char *path, const char *branch,
                         struct bt_repo_worktree *wt, char **why);

/* Whether the worktree at path has changes a removal would lose: files
 * modified, added or deleted against its HEAD, or untracked files that
 * are not ignored. *dirty 1 or 0. */
int bt_repo_worktree_dirty(const char *path, int *dirty, char **why);

/* What bt_repo_worktree_remove without force would say: 0 when removing
 * wt loses nothing, -EBUSY with *why (changes, or commits only its branch
 * holds), or an error above (BT_ENOTFOUND: its repository is gone).
 * Changes nothing. */
int bt_repo_worktree_kept(const struct bt_repo_worktree *wt, char **why);

/* Remove the worktree wt (path, branch, base, repo as made) and its
 * branch. Kept (-EBUSY, nothing removed) unless force when that would
 * lose work: it is locked; its checkout (where git has it now, if moved)
 * has changes (bt_repo_worktree_dirty), a HEAD off its branch (detached or
 * another branch) or initialized submodules (their repositories live in
 * its git directory); or its branch has commits its base does not. A
 * worktree directory that is gone already is pruned from the repository
 * all the same; a branch that is gone is not an error, and one checked
 * out elsewhere stays: then *why (owned) notes it with 0. Nothing else of
 * the repository is touched. Returns 0, -EBUSY, or an error above. */
int bt_repo_worktree_remove(const struct bt_repo_worktree *wt, int force, char **why);

/* What bt_repo_worktree_drop may lose. */
enum bt_repo_drop {
    BT_REPO_DROP_NOTHING, /* as bt_repo_worktree_remove without force */
    BT_REPO_DROP_WORK,    /* the work in it and on its branch (a result not
                             kept), but not what the user did to it: moved,
                             locked, a HEAD off its branch, submodules */
    BT_REPO_DROP_ALL,     /* as with force */
};

/* bt_repo_worktree_remove with what it may lose said. */
int bt_repo_worktree_drop(const struct bt_repo_worktree *wt, enum bt_repo_drop drop, char **why);

/* --- repo-keep.c ------------------------------------------------------ */

enum bt_repo_kept_how {
    BT_REPO_KEPT_NONE,         /* the base had everything of the branch already */
    BT_REPO_KEPT_FAST_FORWARD, /* the base moved up to the branch */
    BT_REPO_KEPT_MERGE,        /* a merge commit of the two */
};

/* What bt_repo_keep did. */
struct bt_repo_kept {
    enum bt_repo_kept_how how;
    char commit[BT_REPO_OID_SIZE]; /* the base's tip now (hex) */
    int committed;                 /* 1: the worktree's changes were committed
                                      on its branch first */
    char *checkout;                /* the working tree where the base is checked
                                      out, its files and index updated (owned);
                                      NULL: checked out nowhere, only the
                                      branch moved */
};
void bt_repo_kept_release(struct bt_repo_kept *k);

/* Bring the work of worktree wt into the branch it started from
 * (wt->base): first its changes (as bt_repo_worktree_dirty sees them) are
 * committed on its branch with message, under the user's git identity
 * (user.name, user.email) or else "baton"; then the base is fast-forwarded
 * to the branch, or gets a merge commit of the two. Where the base is
 * checked out (the user's checkout, or another worktree), its files and
 * index are updated as `git merge` would, never over the user's edits.
 * Returns 0 with *k filled (release it); -EINVAL when the base is no
 * branch (a detached HEAD's commit) or a branch is gone; BT_ECONFLICT when
 * the two conflict, or the user's edits where the base is checked out are
 * in the way (*why names the files or the place): the base and its files
 * are then as they were, the commit on the worktree's branch stays; or an
 * error above. */
int bt_repo_keep(const struct bt_repo_worktree *wt, const char *message, struct bt_repo_kept *k,
                 char **why);

/* --- repo-snapshot.c, repo-store.c, repo-diff.c ---------------------- */

/* Snapshots of a working tree live in baton's own store of its
 * repository: a bare repository at <snapshots>/<key>/ (snapshots is
 * $BATON_HOME/snapshots, made 0700; key the FNV-1a of the repository's
 * common git directory), which borrows the repository's objects read-only
 * through objects/info/alternates. Nothing is written into the user's
 * repository: no object, reference, index or configuration. References
 * refs/baton/ that an earlier baton made there are moved into the store
 * (with the objects HEAD does not hold) by the first call of any function
 * below, then deleted there: what they kept is unreachable in the user's
 * repository, and its `git gc` prunes it. docs/snapshots.md. */

/* The bounds of a snapshot's untracked files (those the user's index does
 * not hold): over any, bt_repo_snapshot makes none (-EFBIG). */
#define BT_REPO_UNTRACKED_MAX_FILES 10000                 /* files */
#define BT_REPO_UNTRACKED_MAX_FILE (8ULL * 1024 * 1024)   /* bytes, one file */
#define BT_REPO_UNTRACKED_MAX_BYTES (64ULL * 1024 * 1024) /* bytes, all */

/* Snapshot the working tree of the repository that holds dir: a git tree
 * of its files as they are (tracked files as modified; untracked ones
 * that are not ignored, unless the repository has
 * status.showUntrackedFiles=no or its working tree is $HOME; submodules
 * as their HEAD; an untracked repository inside is left out), written to
 * baton's store (above), in oid (hex). The user's index and files are not
 * touched: baton keeps an index of its own per working tree in the store,
 * so a later snapshot re-reads only the files whose times changed. ref
 * (may be NULL) names a reference made in the store to keep the tree
 * ("refs/baton/<conversation>/<run>/<which>"). Returns 0; -EINVAL (a bare
 * repository); -EFBIG with *why when the untracked files are over their
 * bounds (no snapshot); or an error above. */
int bt_repo_snapshot(const char *dir, const char *snapshots, const char *ref,
                     char oid[BT_REPO_OID_SIZE], char **why);

/* Delete the references under prefix ("refs/baton/<conversation>/") of
 * baton's store of the repository that holds dir, and the empty
 * directories they leave; a store left with no reference is removed
 * whole, its objects with it. Returns 0 (also when there is no such
 * reference, no repository any more, or no snapshots directory: none is
 * made). */
int bt_repo_refs_delete(const char *dir, const char *snapshots, const char *prefix, char **why);

/* One file changed between two trees. */
struct bt_repo_change {
    char *path;     /* its path in the repository (the new one of a rename) */
    char *old_path; /* a rename's old path, else NULL */
    char status;    /* 'A' added, 'M' modified, 'D' deleted, 'R' renamed, 'T' type changed */
    int binary;     /* 1: no line counts */
    int64_t added;  /* lines added */
    int64_t removed;
};
struct bt_repo_changes {
    struct bt_repo_change *v; /* in path order */
    size_t n;
    int64_t added, removed; /* the sums */
};
void bt_repo_changes_release(struct bt_repo_changes *c);

/* The changes from tree from to tree to (hex ids, as bt_repo_snapshot
 * gives them) in baton's store (snapshots, above) of the repository that
 * holds dir, renames found as `git diff -M` does. */
int bt_repo_changes(const char *dir, const char *snapshots, const char *from, const char *to,
                    struct bt_repo_changes *c, char **why);

/* c as the JSON array turn.completed's changes holds:
 * [{path, old_path?, status: added|modified|deleted|renamed|typechange,
 *   binary?, added, removed}] (docs/events.md). Appended to out. */
void bt_repo_changes_json(const struct bt_repo_changes *c, struct bt_buf *out);

/* The changes from tree from to tree to as turn.completed's changes
 * holds them: {"files": (bt_repo_changes_json), "added": N, "removed": N}
 * (owned), or NULL with *why. */
char *bt_repo_changes_summary(const char *dir, const char *snapshots, const char *from,
                              const char *to, char **why);

/* The top directory of the working tree of the repository that holds dir
 * (owned, no final '/'), or NULL with *why (no repository, a bare one). */
char *bt_repo_top(const char *dir, char **why);

/* The unified diff from tree from to tree to, as `git diff -M from to`
 * prints it (paths a/ and b/, binary files named), appended to out; with
 * colour, git's default colours for a terminal. */
int bt_repo_diff(const char *dir, const char *snapshots, const char *from, const char *to,
                 int colour, struct bt_buf *out, char **why);

#endif
