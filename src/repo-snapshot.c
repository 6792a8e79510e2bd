/* SPDX-License-Identifier: MIT */
/*
 * repo-snapshot: a working tree's snapshot as a git tree, written to
 * baton's store of the repository (repo-store.c), never to the user's
 * repository (repo.h, bt_repo_snapshot). What is untracked is what the
 * user's own index does not hold; such files are taken only where the
 * repository wants them seen and only within bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "repo-int.h"

#include <git2/sys/repository.h> /* git_repository_set_index, _set_odb */

#define MIB (1024.0 * 1024.0)

/* The cache of snapshots of a working tree: an index file of baton's own
 * in the store, named after the working tree's git directory (each
 * worktree of a repository has its own files), whose entries' file times
 * spare the next snapshot re-reading files that did not change. Owned. */
static char *cache_path(git_repository *user, git_repository *store)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)git_repository_path(user); *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return bt_xasprintf("%sindex-%016llx", git_repository_path(store), (unsigned long long)h);
}

/* A new cache starts as a copy of the repository's index (its file times
 * spare the first snapshot reading every tracked file), when libgit2 can
 * read that index (not a split or sparse one: then it starts empty). The
 * cache of an earlier baton (snapshots/<hash>.index) goes: its entries
 * name blobs that only the user's repository held. */
static void seed(git_repository *user, const char *snapshots, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return;
    char *old = bt_xasprintf("%s/%s.index", snapshots, strrchr(path, '-') + 1);
    unlink(old);
    free(old);
    char *from = bt_xasprintf("%sindex", git_repository_path(user));
    size_t len = 0;
    char *bytes = bt_read_file(from, &len);
    git_index *probe = NULL;
    if (bytes && git_index_open(&probe, from) == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 && write(fd, bytes, len) != (ssize_t)len)
            unlink(path);
        if (fd >= 0)
            close(fd);
    }
    git_index_free(probe);
    free(bytes);
    free(from);
}

/* What one snapshot is made with. */
struct snap {
    git_repository *user, *store;
    git_index *idx;              /* the cache, the index of the snapshot */
    struct bt_repo_tracked mine; /* the user's own index: what is tracked */
    git_index *mine_git;         /* the same through libgit2, when that file is
                                    not one repo-tracked.c reads */
    char *cache;                 /* idx's file */
    int untracked;               /* 0: untracked files are left out */
    size_t files;                /* the untracked files the snapshot holds */
    uint64_t bytes;              /* and their size */
    struct bt_strv adds;         /* the untracked files to add, once within bounds */
    int stale;                   /* the cache names an object no database has */
    char *own;                   /* baton's home inside the working tree, or NULL */
};

static int tracked(struct snap *s, const char *path)
{
    size_t at;
    return s->mine_git ? git_index_find(&at, s->mine_git, path) == 0
                       : bt_repo_tracked_has(&s->mine, path);
}

/* Whether path (resolved) is dir (resolved) or inside it. */
static int within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 &&
           (path[n] == '\0' || path[n] == '/' || (n && dir[n - 1] == '/'));
}

/* Whether the repository wants its untracked files seen: not when it says
 * status.showUntrackedFiles=no (git also takes any false boolean, in any
 * case: "False", "OFF", ""; a dotfiles repository of a home), nor when
 * its working tree is the home directory itself or holds it (a
 * repository at / or /home takes the home's keys as much). */
static int untracked_wanted(git_repository *user)
{
    git_config *cfg = NULL;
    git_buf v = {0};
    int wanted = 1, b = 1;
    if (git_repository_config_snapshot(&cfg, user) == 0 &&
        git_config_get_string_buf(&v, cfg, "status.showUntrackedFiles") == 0 && v.ptr)
        wanted = !(strcmp(v.ptr, "no") == 0 || (git_config_parse_bool(&b, v.ptr) == 0 && !b));
    git_buf_dispose(&v);
    git_config_free(cfg);
    const char *home = getenv("HOME"), *wd = git_repository_workdir(user);
    char *h = home && *home ? realpath(home, NULL) : NULL, *w = wd ? realpath(wd, NULL) : NULL;
    if (h && w && within(h, w))
        wanted = 0;
    free(h);
    free(w);
    return wanted;
}

/* Baton's own home (the parent of snapshots) as a path of the working
 * tree with a final '/', when it is inside it (BATON_HOME in the
 * repository): its database, run files and this store are never a
 * snapshot's untracked files. NULL when it is elsewhere. Owned. */
static char *own_home(git_repository *user, const char *snapshots)
{
    const char *wd = git_repository_workdir(user);
    char *s = realpath(snapshots, NULL), *w = wd ? realpath(wd, NULL) : NULL, *rel = NULL;
    char *slash = s ? strrchr(s, '/') : NULL;
    if (slash && slash != s)
        *slash = '\0';
    size_t n = w ? strlen(w) : 0;
    if (slash && slash != s && w && within(s, w) && strcmp(s, w) != 0)
        rel = bt_xasprintf("%s/", s + n + (w[n - 1] != '/'));
    free(s);
    free(w);
    return rel;
}

static int is_own(const struct snap *s, const char *path)
{
    return s->own && strncmp(path, s->own, strlen(s->own)) == 0;
}

/* The cache's untracked entries: left out when untracked files are not
 * wanted or one is ignored now (a .env the user ignored since), else
 * counted. */
static int count_cached(struct snap *s)
{
    size_t j = s->mine.paths.n; /* both sorted: walked together, from the end */
    for (size_t i = git_index_entrycount(s->idx); i-- > 0;) {
        const git_index_entry *e = git_index_get_byindex(s->idx, i);
        int ignored = 0, c = 1;
        while (!s->mine_git && j > 0 && (c = strcmp(s->mine.paths.v[j - 1], e->path)) > 0)
            j--;
        if (s->mine_git ? tracked(s, e->path) : j > 0 && c == 0)
            continue;
        if (s->untracked && git_ignore_path_is_ignored(&ignored, s->user, e->path) != 0)
            return -1;
        if (!s->untracked || ignored || is_own(s, e->path)) {
            if (git_index_remove(s->idx, e->path, git_index_entry_stage(e)) != 0)
                return -1;
            continue;
        }
        s->files++;
        s->bytes += e->file_size;
    }
    return 0;
}

/* An untracked file the working tree has (new, or changed since the
 * cache): counted with its size now, added later. */
static void count_new(struct snap *s, const char *path)
{
    struct stat st;
    char *full = bt_xasprintf("%s%s", git_repository_workdir(s->user), path);
    uint64_t size = lstat(full, &st) == 0 ? (uint64_t)st.st_size : 0;
    const git_index_entry *old = git_index_get_bypath(s->idx, path, 0);
    if (old)
        s->bytes -= old->file_size < s->bytes ? old->file_size : s->bytes;
    else
        s->files++;
    s->bytes += size;
    if (size > BT_REPO_UNTRACKED_MAX_FILE)
        s->bytes = UINT64_MAX; /* one file over its bound: over, whatever the sum */
    bt_strv_push(&s->adds, path);
    free(full);
}

/* Bring the cache to the working tree: what one pass over it (a diff of
 * the index to the files: one stat a file) finds added, modified or
 * deleted. Tracked files are updated at once; untracked ones are counted
 * and wait for the bounds. An untracked directory that comes whole
 * ("sub/") is a repository inside, which libgit2 1.5.1 refuses to add as
 * an "invalid path" where git would record a gitlink: left out. */
static int update_from_worktree(struct snap *s)
{
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags =
        GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_INCLUDE_TYPECHANGE;
    if (s->cache) /* the stat data refreshed: the cache file is baton's (never the user's) */
        o.flags |= GIT_DIFF_UPDATE_INDEX;
    git_diff *d = NULL;
    int rc = git_diff_index_to_workdir(&d, s->user, s->idx, &o);
    for (size_t i = 0; rc == 0 && i < git_diff_num_deltas(d); i++) {
        const git_diff_delta *e = git_diff_get_delta(d, i);
        const char *path = e->new_file.path;
        size_t n = strlen(path);
        if (e->status == GIT_DELTA_DELETED)
            rc = git_index_remove_bypath(s->idx, e->old_file.path);
        else if (!n || path[n - 1] == '/')
            continue;
        else if (tracked(s, path))
            rc = git_index_add_bypath(s->idx, path);
        else if (s->untracked && !is_own(s, path))
            count_new(s, path);
    }
    git_diff_free(d);
    return rc;
}

/* Whether an untracked file libgit2 would not add is left out of the
 * snapshot rather than failing it: one gone since the pass over the
 * working tree (a build's temporary file), or a name git refuses to track
 * ("git~1", ".git." and the like: `git add` says "invalid path" too). One
 * such file lost every turn's changes in its repository. */
static int left_out(int rc)
{
    const git_error *e = git_error_last();
    return rc == GIT_ENOTFOUND ||
           (e && e->klass == GIT_ERROR_INDEX && strncmp(e->message, "invalid path", 12) == 0);
}

/* -EFBIG with *why when the untracked files are over their bounds. */
static int check_bounds(const struct snap *s, char **why)
{
    if (s->files > BT_REPO_UNTRACKED_MAX_FILES)
        *why = bt_xasprintf("%zu untracked files, more than the %d a snapshot takes", s->files,
                            BT_REPO_UNTRACKED_MAX_FILES);
    else if (s->bytes == UINT64_MAX)
        *why = bt_xasprintf("an untracked file is over the %.0f MiB a snapshot takes of one",
                            BT_REPO_UNTRACKED_MAX_FILE / MIB);
    else if (s->bytes > BT_REPO_UNTRACKED_MAX_BYTES)
        *why = bt_xasprintf("the untracked files have %.1f MiB, more than the %.0f MiB a "
                            "snapshot takes",
                            (double)s->bytes / MIB, BT_REPO_UNTRACKED_MAX_BYTES / MIB);
    else
        return 0;
    return -EFBIG;
}

/* The index a snapshot is made with: baton's cache when usable, else
 * the repository's own, loaded in memory and never written. The user's
 * own index is read apart: what it holds is what is tracked. */
static int open_indexes(struct snap *s, const char *snapshots)
{
    char *mine = bt_xasprintf("%sindex", git_repository_path(s->user));
    int rc = bt_repo_tracked_read(mine, &s->mine) == 0 ? 0 : git_index_open(&s->mine_git, mine);
    free(mine);
    if (rc)
        return rc;
    char *path = cache_path(s->user, s->store);
    seed(s->user, snapshots, path);
    if (git_index_open(&s->idx, path) == 0 && git_repository_set_index(s->user, s->idx) == 0) {
        s->cache = path;
        return 0;
    }
    git_index_free(s->idx);
    s->idx = NULL;
    free(path);
    return git_repository_index(&s->idx, s->user);
}

/* s->idx as the working tree is, within bounds; 0, -EFBIG or BT_EPROTO. */
static int index_of_worktree(struct snap *s, const char *snapshots, char **why)
{
    int rc = open_indexes(s, snapshots);
    if (rc == 0)
        rc = count_cached(s);
    if (rc == 0)
        rc = update_from_worktree(s);
    if (rc) {
        *why = bt_repo_why("cannot read the working tree");
        return BT_EPROTO;
    }
    if ((rc = check_bounds(s, why)) != 0)
        return rc;
    for (size_t i = 0; i < s->adds.n; i++)
        if ((rc = git_index_add_bypath(s->idx, s->adds.v[i])) != 0 && !left_out(rc)) {
            *why = bt_repo_why("cannot read the working tree");
            return BT_EPROTO;
        }
    return 0;
}

/* Every object written through the user's repository (the blobs
 * git_index_add_bypath hashes, the trees of git_index_write_tree) goes to
 * the store's database: its alternates still read the user's. */
static int write_to_store(struct snap *s, char **why)
{
    git_odb *odb = NULL;
    int rc = git_repository_odb(&odb, s->store) || git_repository_set_odb(s->user, odb);
    git_odb_free(odb);
    if (rc)
        *why = bt_repo_why("cannot open baton's snapshot store");
    return rc ? BT_EPROTO : 0;
}

static int snapshot_in(struct snap *s, const char *dir, const char *snapshots, const char *ref,
                       char oid[BT_REPO_OID_SIZE], char **why)
{
    git_oid tree;
    git_reference *r = NULL;
    int rc;
    if (git_repository_is_bare(s->user)) {
        *why = bt_xasprintf("the repository of %s is bare: it has no working tree", dir);
        return -EINVAL;
    }
    s->untracked = untracked_wanted(s->user);
    s->own = own_home(s->user, snapshots);
    if ((rc = write_to_store(s, why)) != 0 || (rc = index_of_worktree(s, snapshots, why)) != 0)
        return rc;
    if (git_index_write_tree(&tree, s->idx) != 0) {
        *why = bt_repo_why("cannot write the snapshot");
        s->stale = s->cache != NULL;
        return BT_EPROTO;
    }
    if (bt_repo_store_own(s->user, s->store, &tree) != 0) { /* a blob gone: see stale */
        *why = bt_xstrdup("cannot keep the snapshot: a file's blob is in no object database");
        s->stale = s->cache != NULL;
        return BT_EPROTO;
    }
    if (ref && git_reference_create(&r, s->store, ref, &tree, 1, "baton snapshot") != 0) {
        *why = bt_repo_why("cannot keep the snapshot");
        return BT_EPROTO;
    }
    git_reference_free(r);
    bt_repo_hex(&tree, oid);
    if (s->cache && git_index_write(s->idx) == 0) /* the cache only; another baton's may win */
        chmod(s->cache, 0600);                    /* as baton's other files */
    return 0;
}

static int snapshot_once(const char *dir, const char *snapshots, const char *ref,
                         char oid[BT_REPO_OID_SIZE], int *stale, char **why)
{
    struct snap s = {0};
    bt_strv_init(&s.adds);
    int rc = bt_repo_store_open(dir, snapshots, &s.user, &s.store, why);
    if (rc == 0)
        rc = snapshot_in(&s, dir, snapshots, ref, oid, why);
    *stale = s.stale;
    if (s.stale) /* the next try starts afresh from the user's index */
        unlink(s.cache);
    bt_strv_release(&s.adds);
    git_index_free(s.idx);
    git_index_free(s.mine_git);
    bt_strv_release(&s.mine.paths);
    free(s.cache);
    free(s.own);
    git_repository_free(s.store);
    git_repository_free(s.user);
    return rc;
}

int bt_repo_snapshot(const char *dir, const char *snapshots, const char *ref,
                     char oid[BT_REPO_OID_SIZE], char **why)
{
    *why = NULL;
    oid[0] = '\0';
    int stale = 0;
    int rc = snapshot_once(dir, snapshots, ref, oid, &stale, why);
    if (rc && stale) {
        /* a blob the cache names was only in the user's repository, whose
         * git gc pruned it (the user unstaged a file, say): once more,
         * the cache made anew */
        free(*why);
        *why = NULL;
        rc = snapshot_once(dir, snapshots, ref, oid, &stale, why);
    }
    return rc;
}
