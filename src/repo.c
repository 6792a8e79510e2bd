/* SPDX-License-Identifier: MIT */
/* repo: what the repo files share (repo-int.h). */
#include "repo-int.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "error.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    git_libgit2_init(); /* for the process's life: libgit2 keeps caches per process */
}

char *bt_repo_why(const char *what)
{
    const git_error *e = git_error_last();
    return bt_xasprintf("%s: %s", what, e && e->message ? e->message : "libgit2 failed");
}

int bt_repo_open(const char *dir, git_repository **repo, char **why)
{
    pthread_once(&once, init);
    *repo = NULL;
    /* found as git finds it: up from dir, not into GIT_CEILING_DIRECTORIES
     * (git(1) ENVIRONMENT), nor across a file system unless
     * GIT_DISCOVERY_ACROSS_FILESYSTEM (libgit2 reads that one itself) */
    int rc = git_repository_open_ext(repo, dir, 0, getenv("GIT_CEILING_DIRECTORIES"));
    if (rc == GIT_ENOTFOUND) {
        *why = bt_xasprintf("%s is not in a git repository", dir);
        return BT_ENOTFOUND;
    }
    if (rc) {
        char *what = bt_xasprintf("cannot open the git repository of %s", dir);
        *why = bt_repo_why(what);
        free(what);
        return BT_EPROTO;
    }
    return 0;
}

void bt_repo_hex(const git_oid *oid, char out[BT_REPO_OID_SIZE])
{
    git_oid_tostr(out, BT_REPO_OID_SIZE, oid);
}

int bt_repo_open_gitdir(const char *gitdir, git_repository **repo, char **why)
{
    struct stat st;
    pthread_once(&once, init);
    *repo = NULL;
    if (stat(gitdir, &st) != 0) {
        *why = bt_xasprintf("the repository %s is gone", gitdir);
        return BT_ENOTFOUND;
    }
    if (git_repository_open_ext(repo, gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
        char *what = bt_xasprintf("cannot open the git repository %s", gitdir);
        *why = bt_repo_why(what);
        free(what);
        return BT_EPROTO;
    }
    return 0;
}
