/* SPDX-License-Identifier: MIT */
/*
 * repo-store: baton's own object database for the snapshots of a
 * repository (repo-int.h, bt_repo_store_open). A snapshot's tree holds
 * the working tree's untracked files (a .env), so its objects and the
 * references that keep them must not be in the user's repository, where
 * `git push --mirror` or `git clone --mirror` would carry them. They live
 * in a bare repository of baton's under $BATON_HOME/snapshots/<key>/,
 * which borrows the user's objects read-only through
 * objects/info/alternates (gitrepository-layout(5)), as `git clone
 * --shared` does: a snapshot costs only what the repository lacks.
 * References of earlier versions (refs/baton/ in the user's repository)
 * are moved here on first use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "repo-int.h"

#include <git2/sys/odb_backend.h> /* a backend freed when the odb did not take it */

/* FNV-1a of s in hex: a file name for a path. */
static void fnv(const char *s, char out[17])
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The common git directory of user, resolved, without its last '/'. */
static char *common_dir(git_repository *user)
{
    char *real = realpath(git_repository_commondir(user), NULL);
    if (!real) {
        real = bt_xstrdup(git_repository_commondir(user));
        size_t n = strlen(real);
        while (n > 1 && real[n - 1] == '/')
            real[--n] = '\0';
    }
    return real;
}

/* Write text to path whole (0600), through a file beside it renamed over
 * it: a reader sees the old text or the new one. */
static int write_whole(const char *path, const char *text)
{
    char *tmp = bt_xasprintf("%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t n = strlen(text);
    int rc = fd < 0 ? -errno : write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* A new store at path: what libgit2 and git need of a bare repository
 * (HEAD, objects/, refs/, a config saying bare), made in a directory
 * beside it and renamed into place, so two batons racing leave one
 * whole store. 0, or -errno. */
static int store_make(const char *path)
{
    char *tmp = bt_xasprintf("%s.%ld.new", path, (long)getpid());
    const char *dirs[] = {"", "/objects", "/objects/info", "/refs", "/refs/heads"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof dirs / sizeof *dirs; i++) {
        char *d = bt_xasprintf("%s%s", tmp, dirs[i]);
        if (mkdir(d, 0700) != 0)
            rc = -errno;
        free(d);
    }
    char *head = bt_xasprintf("%s/HEAD", tmp), *cfg = bt_xasprintf("%s/config", tmp);
    if (rc == 0)
        rc = write_whole(head, "ref: refs/heads/main\n");
    if (rc == 0)
        rc = write_whole(cfg, "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
                              "\tlogallrefupdates = false\n");
    free(cfg);
    free(head);
    if (rc == 0 && rename(tmp, path) != 0 && errno != EEXIST && errno != ENOTEMPTY)
        rc = -errno;
    bt_repo_remove_tree(tmp); /* a race lost, or a failure: nothing left */
    free(tmp);
    return rc;
}

/* The store's objects/info/alternates names the user's objects (an
 * absolute path, so the store may be read from anywhere); rewritten only
 * when it names another (the repository moved, or a new store). */
static int store_borrow(const char *path, const char *common)
{
    char *file = bt_xasprintf("%s/objects/info/alternates", path);
    char *want = bt_xasprintf("%s/objects\n", common);
    char *have = bt_read_file(file, NULL);
    int rc = have && strcmp(have, want) == 0 ? 0 : write_whole(file, want);
    free(have);
    free(want);
    free(file);
    return rc;
}

void bt_repo_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *sub = bt_xasprintf("%s/%s", path, e->d_name);
        bt_repo_remove_tree(sub);
        free(sub);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

/* Remove the empty directories under dir, dir too if it empties. */
static void prune_empty(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *sub = bt_xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            prune_empty(sub);
        free(sub);
    }
    if (d)
        closedir(d);
    rmdir(dir); /* fails, as it should, while anything is left */
}

void bt_repo_prune_refs_dirs(git_repository *repo, const char *prefix)
{
    char *top = bt_xasprintf("%s%s", git_repository_commondir(repo), prefix);
    size_t n = strlen(top);
    while (n && top[n - 1] == '/')
        top[--n] = '\0';
    prune_empty(top);
    free(top);
}

/* --- moving refs/baton/ of earlier versions -------------------------- */

struct copy {
    git_odb *from, *to; /* the user's objects; the store's own (no alternates) */
    int failed;
};

/* Copy object id from c->from into c->to unless c->to has it. */
static void copy_object(struct copy *c, const git_oid *id)
{
    git_odb_object *o = NULL;
    git_oid out;
    if (git_odb_exists(c->to, id))
        return;
    if (git_odb_read(&o, c->from, id) != 0 ||
        git_odb_write(&out, c->to, git_odb_object_data(o), git_odb_object_size(o),
                      git_odb_object_type(o)) != 0)
        c->failed = 1;
    git_odb_object_free(o);
}

static int copy_tree_entry(const char *root, const git_tree_entry *e, void *data)
{
    (void)root;
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
        copy_object(data, git_tree_entry_id(e));
    return 0;
}

/* Copy into the store what snapshot tree id needs that the user's HEAD
 * does not hold: the blobs that differ from HEAD's (an untracked .env, a
 * modified file, one only the user's index held), and with trees its
 * trees. What only the user's repository held, unreachable there (an old
 * reference deleted, a file unstaged), its `git gc` prunes; what HEAD
 * holds stays borrowed. */
static void copy_snapshot(git_repository *user, struct copy *c, const git_oid *id, int trees)
{
    git_tree *snap = NULL, *head = NULL;
    git_object *h = NULL;
    git_diff *d = NULL;
    if (git_tree_lookup(&snap, user, id) != 0) {
        c->failed = 1;
        return;
    }
    if (git_revparse_single(&h, user, "HEAD^{tree}") == 0)
        head = (git_tree *)h;
    if (trees) {
        copy_object(c, id);
        git_tree_walk(snap, GIT_TREEWALK_PRE, copy_tree_entry, c);
    }
    if (git_diff_tree_to_tree(&d, user, head, snap, NULL) == 0)
        for (size_t i = 0; i < git_diff_num_deltas(d); i++) {
            const git_diff_delta *e = git_diff_get_delta(d, i);
            if (e->status != GIT_DELTA_DELETED && e->new_file.mode != GIT_FILEMODE_COMMIT)
                copy_object(c, &e->new_file.id);
        }
    git_diff_free(d);
    git_tree_free(head);
    git_tree_free(snap);
}

/* The store's own objects, without the alternates its odb reads too. */
static int own_odb(const char *path, git_odb **out)
{
    git_odb_backend *b = NULL;
    char *objects = bt_xasprintf("%s/objects", path);
    int rc = git_odb_new(out);
    if (rc == 0 && (rc = git_odb_backend_loose(&b, objects, -1, 0, 0, 0)) == 0 &&
        (rc = git_odb_add_backend(*out, b, 1)) != 0)
        b->free(b);
    free(objects);
    return rc;
}

/* Move the references refs/baton/ that an earlier baton made in the
 * user's repository into the store (objects copied first), then delete
 * them there. A reference is deleted only once the store holds it. */
static int migrate(git_repository *user, git_repository *store, const char *path, char **why)
{
    git_reference_iterator *it = NULL;
    git_reference *r;
    struct copy c = {0};
    int rc = 0, moved = 0;
    if (git_reference_iterator_glob_new(&it, user, "refs/baton/*") != 0)
        return 0;
    while (rc == 0 && git_reference_next(&r, it) == 0) {
        const git_oid *id = git_reference_target(r);
        git_reference *mine = NULL;
        if (!c.to && (git_repository_odb(&c.from, user) != 0 || own_odb(path, &c.to) != 0))
            rc = BT_EPROTO;
        if (rc == 0 && id)
            copy_snapshot(user, &c, id, 1);
        if (rc == 0 && id &&
            git_reference_create(&mine, store, git_reference_name(r), id, 1,
                                 "baton: moved from the repository") != 0)
            rc = BT_EPROTO;
        if (rc == 0 && git_reference_delete(r) != 0)
            rc = BT_EPROTO;
        moved += rc == 0;
        git_reference_free(mine);
        git_reference_free(r);
    }
    if (rc)
        *why = bt_repo_why("cannot move baton's old snapshot references out of the repository");
    git_reference_iterator_free(it);
    git_odb_free(c.from);
    git_odb_free(c.to);
    if (moved)
        bt_repo_prune_refs_dirs(user, "refs/baton/");
    return rc;
}

int bt_repo_store_own(git_repository *user, git_repository *store, const git_oid *tree)
{
    struct copy c = {0};
    int rc = git_repository_odb(&c.from, user) || own_odb(git_repository_path(store), &c.to);
    if (rc == 0)
        copy_snapshot(user, &c, tree, 0);
    git_odb_free(c.from);
    git_odb_free(c.to);
    return rc || c.failed ? BT_EPROTO : 0;
}

int bt_repo_store_open(const char *dir, const char *snapshots, git_repository **user,
                       git_repository **store, char **why)
{
    *store = NULL;
    int rc = bt_repo_open(dir, user, why);
    if (rc)
        return rc;
    if (git_repository_is_bare(*user)) { /* no snapshot ever: no store made for it */
        *why = bt_xasprintf("the repository of %s is bare: it has no working tree", dir);
        git_repository_free(*user);
        *user = NULL;
        return -EINVAL;
    }
    char *common = common_dir(*user), key[17];
    fnv(common, key);
    char *path = bt_xasprintf("%s/%s", snapshots, key);
    struct stat st;
    if (mkdir(snapshots, 0700) != 0 && errno != EEXIST)
        rc = -errno;
    if (rc == 0 && stat(path, &st) != 0)
        rc = store_make(path);
    if (rc == 0)
        rc = store_borrow(path, common);
    if (rc) {
        *why = bt_xasprintf("cannot make baton's snapshot store %s: %s", path, strerror(-rc));
        rc = BT_EPROTO;
    } else if (git_repository_open_ext(store, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
        char *what = bt_xasprintf("cannot open baton's snapshot store %s", path);
        *why = bt_repo_why(what);
        free(what);
        rc = BT_EPROTO;
    } else
        rc = migrate(*user, *store, path, why);
    free(path);
    free(common);
    if (rc) {
        git_repository_free(*store);
        git_repository_free(*user);
        *store = *user = NULL;
    }
    return rc;
}

int bt_repo_refs_delete(const char *dir, const char *snapshots, const char *prefix, char **why)
{
    *why = NULL;
    struct stat st;
    if (stat(snapshots, &st) != 0 && errno == ENOENT)
        return 0; /* no store, so no snapshot: none made now for nothing */
    git_repository *user, *store;
    int rc = bt_repo_store_open(dir, snapshots, &user, &store, why);
    if (rc == BT_ENOTFOUND || rc == -EINVAL) {
        free(*why);
        *why = NULL;
        return 0; /* no repository, or a bare one: no reference */
    }
    if (rc)
        return rc;
    char *glob = bt_xasprintf("%s*", prefix);
    git_reference_iterator *it = NULL;
    git_reference *r;
    if (git_reference_iterator_glob_new(&it, store, glob) == 0) {
        while (git_reference_next(&r, it) == 0) {
            if (git_reference_delete(r) != 0 && rc == 0) {
                *why = bt_repo_why("cannot delete a snapshot's reference");
                rc = BT_EPROTO;
            }
            git_reference_free(r);
        }
    }
    git_reference_iterator_free(it);
    free(glob);
    bt_repo_prune_refs_dirs(store, prefix);
    /* no snapshot left: the store goes whole, its objects (the untracked
     * files' copies) with it; else they stay until it empties */
    char *path = bt_xstrdup(git_repository_path(store));
    git_reference_iterator *all = NULL;
    int any = 1; /* when it cannot be told: kept */
    if (git_reference_iterator_glob_new(&all, store, "refs/baton/*") == 0) {
        git_reference *first = NULL;
        any = git_reference_next(&first, all) == 0;
        git_reference_free(first);
    }
    git_reference_iterator_free(all);
    git_repository_free(store);
    git_repository_free(user);
    if (rc == 0 && !any)
        bt_repo_remove_tree(path);
    free(path);
    return rc;
}
