/* SPDX-License-Identifier: MIT */
/* repo: what the repo files share (repo-int.h). */
#include "repo-int.h"

#include <pthread.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    git_libgit2_init(); /* for the process's life: libgit2 keeps caches per process */
}

void bt_repo_start(void)
{
    pthread_once(&once, init);
}

char *bt_repo_why(const char *what)
{
    const git_error *e = git_error_last();
    return bt_xasprintf("%s: %s", what, e && e->message ? e->message : "libgit2 failed");
}

/* 1 if d is a ceiling of GIT_CEILING_DIRECTORIES (ceilings, colon
 * separated): the search stops before it. */
static int is_ceiling(const char *d, const char *ceilings)
{
    size_t n = strlen(d);
    for (const char *c = ceilings; c && *c;) {
        size_t k = strcspn(c, ":");
        while (k > 1 && c[k - 1] == '/')
            k--;
        if (k == n && strncmp(c, d, n) == 0)
            return 1;
        c += strcspn(c, ":");
        c += *c == ':';
    }
    return 0;
}

/* 0 when no directory from dir up (to a ceiling) holds a .git or is a
 * git directory itself, so there is no repository; 1 when there may be
 * one (libgit2 decides). Asked first because starting libgit2 is not
 * free: Debian's loads and parses every system CA certificate for its TLS
 * (mbedTLS) at git_libgit2_init, milliseconds a process that a turn
 * outside git need not pay. */
static int may_be_repo(const char *dir)
{
    char *d = realpath(dir, NULL);
    const char *ceilings = getenv("GIT_CEILING_DIRECTORIES");
    int maybe = d == NULL; /* cannot tell: libgit2 will */
    for (size_t n = d ? strlen(d) : 0; d && !maybe;) {
        struct stat st;
        char *git = bt_xasprintf("%s/.git", n ? d : "");
        char *head = bt_xasprintf("%s/HEAD", n ? d : "");
        char *objects = bt_xasprintf("%s/objects", n ? d : "");
        maybe = lstat(git, &st) == 0 || (stat(head, &st) == 0 && stat(objects, &st) == 0);
        free(objects);
        free(head);
        free(git);
        char *slash = strrchr(d, '/');
        if (maybe || !slash || n == 0)
            break;
        *slash = '\0';
        n = strlen(d);
        if (is_ceiling(n ? d : "/", ceilings))
            break;
    }
    free(d);
    return maybe;
}

int bt_repo_open(const char *dir, git_repository **repo, char **why)
{
    *repo = NULL;
    if (!may_be_repo(dir)) {
        *why = bt_xasprintf("%s is not in a git repository", dir);
        return BT_ENOTFOUND;
    }
    pthread_once(&once, init);
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

/* Shared by the worktree files (repo-worktree.c, repo-remove.c,
 * repo-keep.c), kept here below them so their calls go one way. */

const char *bt_repo_worktree_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
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
