/* SPDX-License-Identifier: MIT */
/* repo-int: what the repo files share (repo.c): libgit2 set up once, its
 * errors as sentences, a repository opened for a directory. */
#ifndef BT_REPO_INT_H
#define BT_REPO_INT_H

#include <git2.h>

#include "repo.h"

/* "WHAT: libgit2's last message" (owned). */
char *bt_repo_why(const char *what);

/* The repository that holds dir (dir or a directory above it), opened.
 * Returns 0; BT_ENOTFOUND (*why says so) when there is none; BT_EPROTO. */
int bt_repo_open(const char *dir, git_repository **repo, char **why);

/* The repository whose git directory is gitdir, opened (not searched
 * for: one that is gone is not looked for above). 0, BT_ENOTFOUND when
 * gitdir is gone, BT_EPROTO. */
int bt_repo_open_gitdir(const char *gitdir, git_repository **repo, char **why);

/* The number of changes git status sees in repo's working tree:
 * modified, added, deleted, renamed, untracked and not ignored. */
int bt_repo_changes_count(git_repository *repo, size_t *n, char **why);

/* The last component of a worktree's path: its name in .git/worktrees/. */
const char *bt_repo_worktree_name(const char *path);

/* 1 if path is a worktree of repo (opened there, not searched for). */
int bt_repo_is_worktree_of(git_repository *repo, const char *path);

/* 0, or -EINVAL with *why when a working tree of repo is in the middle
 * of a merge, rebase, cherry-pick, revert, bisect or am (repo-checkout.c). */
int bt_repo_busy(git_repository *repo, char **why);

/* Where branch ref is checked out: *w opened (NULL: nowhere); -EINVAL
 * with *why when it is a working tree baton cannot find. */
int bt_repo_checkout_find(git_repository *repo, git_reference *ref, git_repository **w, char **why);

/* Move branch ref from commit old to tip; its checkout w (may be NULL)
 * updated as `git merge` would, refused (BT_ECONFLICT, *why naming the
 * files) before anything is written when the user's edits there touch
 * the paths it changes, an index.lock or a sparse checkout is there. */
int bt_repo_checkout_advance(git_repository *repo, git_repository *w, git_reference *ref,
                             git_commit *old, const git_oid *tip, char **why);

/* 1 with *name (owned) when a .gitattributes of commit's tree (or the
 * repository's info/attributes, or the user's core.attributesFile) gives
 * files a filter with a clean, smudge
 * or process command configured (git-lfs, git-crypt): libgit2 runs none
 * of those, so what it writes would be raw. */
int bt_repo_filter_used(git_repository *repo, git_commit *commit, char **name);

/* The repository that holds dir (*user) and baton's store of its
 * snapshots (*store), a bare repository at <snapshots>/<key>/ (key: FNV-1a
 * of the common git directory's resolved path), made 0700 if missing,
 * whose objects/info/alternates borrows the user's objects read-only;
 * references refs/baton/ an earlier baton left in the user's repository
 * are moved into it first (repo-store.c). Both opened, or neither: 0,
 * BT_ENOTFOUND (no repository), -EINVAL (a bare one: no store is made),
 * BT_EPROTO. */
int bt_repo_store_open(const char *dir, const char *snapshots, git_repository **user,
                       git_repository **store, char **why);

/* Copy into store's own objects the blobs of snapshot tree that differ
 * from user's HEAD and that only the user's repository has (a file only
 * its index held), so its git gc cannot take them from the snapshot.
 * 0, or BT_EPROTO (libgit2's message). */
int bt_repo_store_own(git_repository *user, git_repository *store, const git_oid *tree);

/* Remove the empty directories under repo's <common dir>/<prefix>, the
 * prefix's own too: libgit2 leaves a deleted reference's behind. */
void bt_repo_prune_refs_dirs(git_repository *repo, const char *prefix);

/* Remove path and everything under it, links not followed. */
void bt_repo_remove_tree(const char *path);

/* The paths a git index file holds, sorted as git sorts them (a path
 * of a conflict once for each stage). */
struct bt_repo_tracked {
    struct bt_strv paths;
};

/* Read the index file at path (versions 2 to 4; its checksum not
 * verified) into *t. 0 (a missing file too: none), t->paths to release;
 * -EINVAL when it is not such a file, -EIO: nothing to release. */
int bt_repo_tracked_read(const char *path, struct bt_repo_tracked *t);

/* 1 if t holds path. */
int bt_repo_tracked_has(const struct bt_repo_tracked *t, const char *path);

/* oid in hex into out. */
void bt_repo_hex(const git_oid *oid, char out[BT_REPO_OID_SIZE]);

#endif
