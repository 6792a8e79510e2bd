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

/* oid in hex into out. */
void bt_repo_hex(const git_oid *oid, char out[BT_REPO_OID_SIZE]);

#endif
