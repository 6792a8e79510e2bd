/* SPDX-License-Identifier: MIT */
/*
 * unit-repo: baton's git work (src/repo.h) on scratch repositories the
 * tests make with git: worktrees made and removed (and kept when they
 * hold work), the repositories baton cannot use, snapshots of a working
 * tree and the changes between two, checked against `git diff` of the
 * same trees.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "repo-int.h"
#include "repo.h"
#include "support.h"

struct fixture {
    char *dir;  /* scratch root */
    char *repo; /* a repository with one commit on main */
};

static char *vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *vformat(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, again);
    va_end(again);
    assert_true(n >= 0);
    char *s = bt_xcalloc(1, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Run cmd through bash (no command processor of libc's); its stdout
 * (owned), the test failing when it fails. */
static char *run_sh(char *cmd)
{
    const char *argv[] = {"/bin/bash", "-c", cmd, NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    if (res.exit_code != 0)
        fail_msg("command failed (%d): %s: %s", res.exit_code, cmd, res.err.data);
    char *out = bt_xstrdup(res.out.data ? res.out.data : "");
    bt_test_result_release(&res);
    free(cmd);
    return out;
}

/* Run a shell command (quoted by the caller), failing the test if it fails. */
static void sh(const char *fmt, ...) BT_PRINTF(1, 2);
static void sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = vformat(fmt, ap);
    va_end(ap);
    free(run_sh(cmd));
}

/* A command's stdout (owned). */
static char *out_of(const char *fmt, ...) BT_PRINTF(1, 2);
static char *out_of(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = vformat(fmt, ap);
    va_end(ap);
    return run_sh(cmd);
}

/* s without its ANSI colour escapes (owned). */
static char *strip_escapes(const char *s)
{
    char *out = bt_xstrdup(s), *o = out;
    while (*s) {
        if (*s == '\033') {
            while (*s && *s != 'm')
                s++;
            if (*s)
                s++;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

static char *at(struct fixture *f, const char *name)
{
    return bt_xasprintf("%s/%s", f->dir, name);
}

#define GIT "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main"

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof(*f));
    /* outside every repository (the build tree is in baton's): a case
     * that finds none must not find one above */
    const char *tmp = getenv("TMPDIR");
    f->dir = bt_test_mkdtemp(tmp && *tmp ? tmp : "/tmp", "unit-repo");
    assert_non_null(f->dir);
    const char *argv[] = {"/usr/bin/git", "-C", f->dir, "rev-parse", "--git-dir", NULL};
    struct bt_test_run r = {.argv = argv, .timeout_s = 60};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    if (res.exit_code == 0)
        fail_msg("%s is inside a git repository: set TMPDIR to a directory that is not", f->dir);
    bt_test_result_release(&res);
    f->repo = at(f, "repo");
    sh(GIT " init -q '%s' && mkdir '%s/sub' && printf 'one\\ntwo\\n' > '%s/a.txt' && "
           "printf 'x\\n' > '%s/sub/b.txt' && printf 'ignored.log\\n' > '%s/.gitignore' && "
           "cd '%s' && " GIT " add -A && " GIT " commit -qm first",
       f->repo, f->repo, f->repo, f->repo, f->repo, f->repo);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_test_rmdir(f->dir);
    free(f->dir);
    free(f->repo);
    free(f);
    return 0;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void test_worktree_add_and_remove(void **state)
{
    struct fixture *f = *state;
    char *sub = bt_xasprintf("%s/sub", f->repo), *path = at(f, "worktrees/c0ffee"), *why;
    struct bt_repo_worktree wt;
    assert_int_equal(bt_repo_worktree_add(sub, path, NULL, &wt, &why), 0);
    assert_null(why);
    char *real = realpath(path, NULL);
    assert_string_equal(wt.path, real);
    char *cwd = bt_xasprintf("%s/sub", real);
    assert_string_equal(wt.cwd, cwd); /* the directory asked for, in the worktree */
    assert_string_equal(wt.branch, "baton/c0ffee");
    assert_string_equal(wt.base, "main");
    char *head = out_of("cd '%s' && git rev-parse HEAD | tr -d '\\n'", f->repo);
    assert_string_equal(wt.start, head);
    char *b = bt_xasprintf("%s/sub/b.txt", wt.path);
    assert_true(exists(b)); /* checked out */
    char *list = out_of("cd '%s' && git worktree list --porcelain", f->repo);
    assert_non_null(strstr(list, real));
    assert_non_null(strstr(list, "branch refs/heads/baton/c0ffee"));
    int dirty = -1;
    assert_int_equal(bt_repo_worktree_dirty(wt.path, &dirty, &why), 0);
    assert_int_equal(dirty, 0);
    /* an ignored file is no work to lose */
    sh("touch '%s/ignored.log'", wt.path);
    assert_int_equal(bt_repo_worktree_remove(&wt, 0, &why), 0);
    assert_false(exists(real));
    char *branches = out_of("cd '%s' && git branch --list 'baton/*'", f->repo);
    assert_string_equal(branches, "");
    char *after = out_of("cd '%s' && git worktree list --porcelain", f->repo);
    assert_null(strstr(after, real));
    bt_repo_worktree_release(&wt);
    free(after);
    free(branches);
    free(list);
    free(b);
    free(head);
    free(cwd);
    free(real);
    free(sub);
    free(path);
}

/* Uncommitted changes, untracked files and commits only the branch has
 * keep a worktree; --force removes it all the same. */
static void test_worktree_kept_with_work(void **state)
{
    struct fixture *f = *state;
    const char *cases[] = {"printf more >> a.txt", "touch new.txt",
                           GIT " commit -qam x --allow-empty"};
    const char *says[] = {"has changes (1 file)", "has changes (1 file)",
                          "has 1 commit that main does not"};
    for (size_t i = 0; i < 3; i++) {
        char *path = bt_xasprintf("%s/wt-%zu", f->dir, i), *why;
        struct bt_repo_worktree wt;
        assert_int_equal(bt_repo_worktree_add(f->repo, path, NULL, &wt, &why), 0);
        sh("cd '%s' && %s", wt.path, cases[i]);
        assert_int_equal(bt_repo_worktree_remove(&wt, 0, &why), -EBUSY);
        assert_non_null(strstr(why, says[i]));
        free(why);
        assert_true(exists(wt.path)); /* nothing removed */
        char *br = out_of("cd '%s' && git branch --list '%s'", f->repo, wt.branch);
        assert_true(strlen(br) > 0);
        assert_int_equal(bt_repo_worktree_remove(&wt, 1, &why), 0);
        assert_false(exists(wt.path));
        free(br);
        bt_repo_worktree_release(&wt);
        free(path);
    }
}

/* A worktree directory someone removed: pruned all the same; one put
 * back by someone else (not a worktree) is not removed. */
static void test_worktree_gone_or_replaced(void **state)
{
    struct fixture *f = *state;
    char *path = at(f, "wt-gone"), *why;
    struct bt_repo_worktree wt;
    assert_int_equal(bt_repo_worktree_add(f->repo, path, "mine", &wt, &why), 0);
    assert_string_equal(wt.branch, "mine");
    sh("rm -rf '%s' && mkdir '%s' && touch '%s/keep-me'", wt.path, wt.path, wt.path);
    assert_int_equal(bt_repo_worktree_remove(&wt, 0, &why), 0);
    char *keep = bt_xasprintf("%s/keep-me", wt.path);
    assert_true(exists(keep));
    char *list = out_of("cd '%s' && git worktree list --porcelain && git branch", f->repo);
    assert_null(strstr(list, "wt-gone"));
    assert_null(strstr(list, "mine"));
    free(list);
    free(keep);
    bt_repo_worktree_release(&wt);
    free(path);
}

/* What baton cannot use gets a clear error, and leaves nothing behind. */
static void test_worktree_refused(void **state)
{
    struct fixture *f = *state;
    char *why, *path = at(f, "wt");
    struct bt_repo_worktree wt;
    char *plain = at(f, "plain"), *bare = at(f, "bare.git"), *empty = at(f, "empty");
    sh("mkdir '%s' && " GIT " init -q --bare '%s' && " GIT " init -q '%s'", plain, bare, empty);
    struct {
        const char *dir, *branch;
        int rc;
        const char *says;
    } cases[] = {
        {plain, NULL, BT_ENOTFOUND, "is not in a git repository"},
        {bare, NULL, -EINVAL, "bare repository"},
        {empty, NULL, -EINVAL, "has no commit yet"},
        {f->repo, "main", -EINVAL, "a branch 'main' exists already"},
        {f->repo, "a..b", -EINVAL, "is not a name git takes"},
        {f->repo, "-x", -EINVAL, "is not a name git takes"},
        {f->repo, "has space", -EINVAL, "is not a name git takes"},
    };
    for (size_t i = 0; i < BT_ARRAY_SIZE(cases); i++) {
        assert_int_equal(bt_repo_worktree_add(cases[i].dir, path, cases[i].branch, &wt, &why),
                         cases[i].rc);
        if (!strstr(why, cases[i].says))
            fail_msg("case %zu: %s", i, why);
        free(why);
        assert_false(exists(path));
    }
    /* a path that exists */
    sh("mkdir '%s'", path);
    assert_int_equal(bt_repo_worktree_add(f->repo, path, NULL, &wt, &why), -EEXIST);
    free(why);
    char *br = out_of("cd '%s' && git branch --list 'baton/*'", f->repo);
    assert_string_equal(br, ""); /* no branch left by a failure */
    free(br);
    free(plain);
    free(bare);
    free(empty);
    free(path);
}

/* A detached HEAD is a commit to start from; spaces and non-ASCII in
 * paths are fine. */
static void test_worktree_detached_and_odd_paths(void **state)
{
    struct fixture *f = *state;
    char *odd = at(f, "r\xc3\xa9po with space"), *why;
    sh("cp -a '%s' '%s' && cd '%s' && git checkout -q --detach HEAD", f->repo, odd, odd);
    char *path = bt_xasprintf("%s/wt \xc3\xa9", f->dir);
    struct bt_repo_worktree wt;
    assert_int_equal(bt_repo_worktree_add(odd, path, "baton/\xc3\xa9t\xc3\xa9", &wt, &why), 0);
    char *head = out_of("cd '%s' && git rev-parse HEAD | tr -d '\\n'", odd);
    assert_string_equal(wt.base, head);
    assert_string_equal(wt.branch, "baton/\xc3\xa9t\xc3\xa9");
    assert_int_equal(bt_repo_worktree_remove(&wt, 0, &why), 0);
    assert_false(exists(path));
    bt_repo_worktree_release(&wt);
    free(head);
    free(path);
    free(odd);
}

/* Two snapshots and what changed between them, as `git diff -M` has it;
 * the user's index and files are not touched. */
static void test_snapshot_changes(void **state)
{
    struct fixture *f = *state;
    char a[BT_REPO_OID_SIZE], b[BT_REPO_OID_SIZE], *why;
    char *snaps = at(f, "snapshots");
    sh("cd '%s' && printf 'a\\nb\\nc\\nd\\ne\\nf\\n' > staged.txt && git add staged.txt", f->repo);
    char *status = out_of("cd '%s' && git status --porcelain", f->repo);
    char *objects = out_of("cd '%s' && find .git/objects .git/refs -type f | sort", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, "refs/baton/conv1/run1/start", a, &why), 0);
    /* modified, added (untracked), deleted, renamed, binary; ignored */
    sh("cd '%s' && printf 'one\\nTWO\\nthree\\n' > a.txt && printf 'new\\n' > new.txt && "
       "rm sub/b.txt && git mv staged.txt moved.txt && printf 'g\\n' >> moved.txt && "
       "git reset -q && printf '\\000\\001\\002' > bin.dat && touch ignored.log",
       f->repo);
    char *status2 = out_of("cd '%s' && git status --porcelain && git diff --cached", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, "refs/baton/conv1/run1/end", b, &why), 0);
    char *status3 = out_of("cd '%s' && git status --porcelain && git diff --cached", f->repo);
    assert_string_equal(status2, status3); /* the index as it was */
    (void)status;

    struct bt_repo_changes c;
    assert_int_equal(bt_repo_changes(f->repo, snaps, a, b, &c, &why), 0);
    /* the trees are in baton's store, not in the user's repository */
    sh("cd '%s' && ! git cat-file -e %s 2>/dev/null && ! git cat-file -e %s 2>/dev/null", f->repo,
       a, b);
    char *store = out_of("printf %%s '%s'/*", snaps);
    char *want = out_of("git --git-dir='%s' diff -M --numstat --name-status %s %s", store, a, b);
    struct bt_buf json = BT_BUF_INIT;
    bt_repo_changes_json(&c, &json);
    assert_string_equal(json.data,
                        "[{\"path\":\"a.txt\",\"status\":\"modified\",\"added\":2,\"removed\":1},"
                        "{\"path\":\"bin.dat\",\"status\":\"added\",\"binary\":true,\"added\":0,"
                        "\"removed\":0},"
                        "{\"path\":\"moved.txt\",\"old_path\":\"staged.txt\",\"status\":"
                        "\"renamed\",\"added\":1,\"removed\":0},"
                        "{\"path\":\"new.txt\",\"status\":\"added\",\"added\":1,\"removed\":0},"
                        "{\"path\":\"sub/b.txt\",\"status\":\"deleted\",\"added\":0,"
                        "\"removed\":1}]");
    assert_int_equal(c.added, 4);
    assert_int_equal(c.removed, 2);
    bt_repo_changes_release(&c);
    bt_buf_release(&json);

    /* the unified diff is git's, byte for byte but for a rename's
     * similarity score (libgit2 1.5.1 scores 92% where git 2.39 says 85%) */
    struct bt_buf diff = BT_BUF_INIT;
    assert_int_equal(bt_repo_diff(f->repo, snaps, a, b, 0, &diff, &why), 0);
    assert_non_null(strstr(diff.data, "\nsimilarity index 92%\n"));
    char *git = out_of("git --git-dir='%s' diff --no-color -M %s %s | sed 's/^similarity index "
                       "85%%/similarity index 92%%/'",
                       store, a, b);
    assert_string_equal(diff.data, git);
    /* coloured: the same text, each line in git's colour for its kind */
    char *plain = bt_xstrdup(diff.data);
    bt_buf_reset(&diff);
    assert_int_equal(bt_repo_diff(f->repo, snaps, a, b, 1, &diff, &why), 0);
    assert_non_null(strstr(diff.data, "\033[1mdiff --git a/a.txt b/a.txt\033[m\n"));
    assert_non_null(strstr(diff.data, "\033[36m@@ -1,2 +1,3 @@\033[m\n"));
    assert_non_null(strstr(diff.data, "\033[31m-two\033[m\n\033[32m+TWO\033[m\n"));
    assert_non_null(strstr(diff.data, "\n one\n")); /* context: uncoloured */
    char *stripped = strip_escapes(diff.data);
    assert_string_equal(stripped, plain);
    free(stripped);
    free(plain);
    bt_buf_release(&diff);

    /* the snapshots are kept by the store's references, none in the
     * user's repository; the store goes with the last of them */
    char *refs = out_of("git --git-dir='%s' for-each-ref --format='%%(refname)' refs/baton", store);
    assert_string_equal(refs, "refs/baton/conv1/run1/end\nrefs/baton/conv1/run1/start\n");
    char *mine = out_of("cd '%s' && find .git/objects .git/refs -type f | sort", f->repo);
    assert_string_equal(mine, objects); /* not one object or reference more */
    assert_int_equal(bt_repo_changes(f->repo, snaps, a, "nothex", &c, &why), -EINVAL);
    free(why);
    assert_int_equal(bt_repo_refs_delete(f->repo, snaps, "refs/baton/conv1/", &why), 0);
    char *none = out_of("ls -A '%s'", snaps);
    assert_string_equal(none, "");
    free(mine);
    free(objects);
    free(store);
    free(snaps);
    free(none);
    free(refs);
    free(git);
    free(want);
    free(status3);
    free(status2);
    free(status);
}

/* Through baton's cache of the index: the same trees; an untracked
 * repository inside left out (libgit2 refused the whole snapshot); a file
 * become a link one typechange; a name that is not UTF-8 still JSON text;
 * the user's index file byte for byte as it was; the references' empty
 * directories gone with them. */
static void test_snapshot_cache_and_odd_trees(void **state)
{
    struct fixture *f = *state;
    char a[BT_REPO_OID_SIZE], b[BT_REPO_OID_SIZE], c2[BT_REPO_OID_SIZE], *why;
    char *cache = at(f, "snapshots"), *index = bt_xasprintf("%s/.git/index", f->repo);
    size_t before_len = 0, after_len = 0;
    char *before = bt_read_file(index, &before_len);
    assert_non_null(before);
    sh("cd '%s' && " GIT " init -q inner && cd inner && touch i && " GIT " add i && " GIT
       " commit -qm i",
       f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, cache, "refs/baton/c/r/start", a, &why), 0);
    char *files = out_of("ls '%s'/*/index-*", cache);
    assert_int_equal(strlen(files), strlen(cache) + 1 + 16 + strlen("/index-") + 16 + 1);
    /* one store for the repository, its cache for this working tree */
    sh("cd '%s' && rm a.txt && ln -s sub/b.txt a.txt && printf z > \"$(printf 'bad\\377n')\"",
       f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, cache, "refs/baton/c/r/end", b, &why), 0);
    assert_int_equal(bt_repo_snapshot(f->repo, cache, NULL, c2, &why), 0);
    assert_string_equal(b, c2); /* nothing changed: the same tree, from the cache */
    char *after = bt_read_file(index, &after_len);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    char *changes = bt_repo_changes_summary(f->repo, cache, a, b, &why);
    assert_non_null(changes);
    assert_string_equal(changes, "{\"files\":["
                                 "{\"path\":\"a.txt\",\"status\":\"typechange\",\"added\":1,"
                                 "\"removed\":2},"
                                 "{\"path\":\"bad\xef\xbf\xbdn\",\"status\":\"added\",\"added\":1,"
                                 "\"removed\":0}],\"added\":2,\"removed\":2}"); /* git's numstat */
    assert_int_equal(bt_repo_refs_delete(f->repo, cache, "refs/baton/c/", &why), 0);
    char *left = out_of("ls -A '%s'", cache);
    assert_string_equal(left, ""); /* the store, its references' directories with it */
    free(left);
    free(changes);
    free(after);
    free(files);
    free(before);
    free(index);
    free(cache);
}

/* The paths of tree id in the store under snaps, one a line. */
static char *paths_of(const char *snaps, const char *id)
{
    return out_of("git --git-dir=\"$(printf %%s '%s'/*)\" ls-tree -r --name-only %s", snaps, id);
}

/* Untracked files are the repository's business only where it wants them
 * seen: status.showUntrackedFiles=no (a home's dotfiles repository) or a
 * working tree that is $HOME itself leave them out, and a .env that the
 * cache held from before goes too; an ignored one goes once ignored. */
static void test_snapshot_untracked_policy(void **state)
{
    struct fixture *f = *state;
    char id[BT_REPO_OID_SIZE], *why = NULL;
    char *snaps = at(f, "snapshots");
    sh("cd '%s' && printf 'KEY=secret\\n' > .env && printf x > notes.txt", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), 0);
    char *all = paths_of(snaps, id);
    assert_string_equal(all, ".env\n.gitignore\na.txt\nnotes.txt\nsub/b.txt\n");

    sh("cd '%s' && echo .env >> .gitignore", f->repo); /* the cache held it: it goes */
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), 0);
    char *ignored = paths_of(snaps, id);
    assert_string_equal(ignored, ".gitignore\na.txt\nnotes.txt\nsub/b.txt\n");

    sh("cd '%s' && git config status.showUntrackedFiles no", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), 0);
    char *none = paths_of(snaps, id);
    assert_string_equal(none, ".gitignore\na.txt\nsub/b.txt\n");

    sh("cd '%s' && git config --unset status.showUntrackedFiles", f->repo);
    char *home = getenv("HOME") ? bt_xstrdup(getenv("HOME")) : NULL;
    setenv("HOME", f->repo, 1); /* the working tree is the home directory */
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), 0);
    char *in_home = paths_of(snaps, id);
    assert_string_equal(in_home, ".gitignore\na.txt\nsub/b.txt\n");
    if (home)
        setenv("HOME", home, 1);
    else
        unsetenv("HOME");
    free(home);
    free(in_home);
    free(ignored);
    free(none);
    free(all);
    free(snaps);
}

/* Untracked files over a snapshot's bounds (one file, all of them, how
 * many) make no snapshot (-EFBIG, a reason); within them again, one. The
 * big files are sparse: over the bounds they are never read. */
static void test_snapshot_bounds(void **state)
{
    struct fixture *f = *state;
    char id[BT_REPO_OID_SIZE], *why = NULL;
    char *snaps = at(f, "snapshots");
    sh("cd '%s' && truncate -s %llu big.bin", f->repo, BT_REPO_UNTRACKED_MAX_FILE + 1);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), -EFBIG);
    assert_string_equal(why, "an untracked file is over the 8 MiB a snapshot takes of one");
    assert_string_equal(id, "");
    free(why);
    sh("cd '%s' && rm big.bin && for i in $(seq 9); do truncate -s %llu part$i.bin; done", f->repo,
       BT_REPO_UNTRACKED_MAX_FILE);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), -EFBIG);
    assert_string_equal(why, "the untracked files have 72.0 MiB, more than the 64 MiB a "
                             "snapshot takes");
    free(why);
    sh("cd '%s' && rm part*.bin && mkdir many && cd many && seq %d | xargs touch", f->repo,
       BT_REPO_UNTRACKED_MAX_FILES + 1);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), -EFBIG);
    assert_string_equal(why, "10001 untracked files, more than the 10000 a snapshot takes");
    free(why);
    sh("cd '%s' && rm -r many", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, id, &why), 0);
    assert_null(why);
    free(snaps);
}

/* References refs/baton/ of an earlier baton, in the user's repository,
 * move into the store on first use, with the objects HEAD lacks (the
 * untracked .env): gone from the repository, its `git gc --prune=now`
 * drops the .env's blob there and the store still has it. */
static void test_snapshot_old_refs_moved(void **state)
{
    struct fixture *f = *state;
    char *snaps = at(f, "snapshots"), *why = NULL;
    char *tree = out_of("cd '%s' && printf 'KEY=old\\n' > .env && export GIT_INDEX_FILE=.git/"
                        "old && git add -A && git write-tree && rm .git/old",
                        f->repo);
    tree[strcspn(tree, "\n")] = '\0';
    char *blob = out_of("cd '%s' && git rev-parse %s:.env", f->repo, tree);
    blob[strcspn(blob, "\n")] = '\0';
    sh("cd '%s' && git update-ref refs/baton/c1/r1/start %s && git update-ref "
       "refs/baton/c1/r1/end %s && git pack-refs --all",
       f->repo, tree, tree);
    struct bt_repo_changes c;
    assert_int_equal(bt_repo_changes(f->repo, snaps, tree, tree, &c, &why), 0);
    assert_int_equal(c.n, 0);
    bt_repo_changes_release(&c);
    char *left = out_of("cd '%s' && git for-each-ref refs/baton && ls .git/refs", f->repo);
    assert_string_equal(left, "heads\ntags\n"); /* refs/baton/ gone, its directories too */
    sh("cd '%s' && rm .env && git reflog expire --expire=now --all && git gc -q --prune=now && "
       "! git cat-file -e %s 2>/dev/null",
       f->repo, blob);
    char *store = out_of("printf %%s '%s'/*", snaps);
    char *kept = out_of("git --git-dir='%s' for-each-ref --format='%%(refname)' && git "
                        "--git-dir='%s' cat-file -p %s",
                        store, store, blob);
    assert_string_equal(kept, "refs/baton/c1/r1/end\nrefs/baton/c1/r1/start\nKEY=old\n");
    free(kept);
    free(store);
    free(left);
    free(blob);
    free(tree);
    free(snaps);
}

/* A file whose blob only the user's index held (staged, then unstaged
 * and pruned by the repository's git gc): the snapshot kept its own copy,
 * and the next one, from the cache, is the same whole tree. */
static void test_snapshot_staged_blob_kept(void **state)
{
    struct fixture *f = *state;
    char a[BT_REPO_OID_SIZE], b[BT_REPO_OID_SIZE], *why = NULL;
    char *snaps = at(f, "snapshots");
    sh("cd '%s' && printf 'v2\\n' > a.txt && git add a.txt", f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, a, &why), 0);
    sh("cd '%s' && git reset -q && git reflog expire --expire=now --all && git gc -q "
       "--prune=now && ! git cat-file -e $(git hash-object a.txt) 2>/dev/null",
       f->repo);
    assert_int_equal(bt_repo_snapshot(f->repo, snaps, NULL, b, &why), 0);
    assert_null(why);
    assert_string_equal(a, b);
    char *text = out_of("git --git-dir=\"$(printf %%s '%s'/*)\" cat-file -p %s:a.txt", snaps, b);
    assert_string_equal(text, "v2\n");
    free(text);
    free(snaps);
}

/* The paths of an index file read without libgit2, every version git
 * writes (2; 3 with an intent-to-add entry's extended flags; 4 with its
 * paths prefix-compressed), a conflict's path once a stage, as `git
 * ls-files --stage` lists them; not an index: -EINVAL; none: empty. */
static void test_tracked_index_versions(void **state)
{
    struct fixture *f = *state;
    char *index = bt_xasprintf("%s/.git/index", f->repo);
    sh("cd '%s' && mkdir -p 'deep/er/path' && printf z > 'deep/er/path/long name.txt' && printf "
       "y > deep/er/b && printf w > later.txt && git add deep && git add -N later.txt",
       f->repo);
    for (int version = 2; version <= 4; version++) {
        char *want = out_of("cd '%s' && git update-index --index-version %d && git ls-files "
                            "--stage | cut -f2",
                            f->repo, version);
        struct bt_repo_tracked t;
        assert_int_equal(bt_repo_tracked_read(index, &t), 0);
        struct bt_buf got = BT_BUF_INIT;
        for (size_t i = 0; i < t.paths.n; i++)
            bt_buf_addf(&got, "%s\n", t.paths.v[i]);
        assert_string_equal(got.data, want);
        assert_true(bt_repo_tracked_has(&t, "deep/er/path/long name.txt"));
        assert_true(bt_repo_tracked_has(&t, "later.txt"));
        assert_false(bt_repo_tracked_has(&t, "deep/er"));
        assert_false(bt_repo_tracked_has(&t, "zzz"));
        bt_buf_release(&got);
        bt_strv_release(&t.paths);
        free(want);
    }
    struct bt_repo_tracked t;
    char *bogus = at(f, "bogus"), *missing = at(f, "missing");
    sh("printf 'DIRC\\0\\0\\0\\2\\0\\0\\0\\9' > '%s'", bogus); /* 9 entries, none there */
    assert_int_equal(bt_repo_tracked_read(bogus, &t), -EINVAL);
    assert_int_equal(bt_repo_tracked_read(f->repo, &t), -EIO); /* a directory */
    assert_int_equal(bt_repo_tracked_read(missing, &t), 0);
    assert_int_equal(t.paths.n, 0);
    bt_strv_release(&t.paths);
    free(missing);
    free(bogus);
    free(index);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_worktree_add_and_remove),
        T(test_worktree_kept_with_work),
        T(test_worktree_gone_or_replaced),
        T(test_worktree_refused),
        T(test_worktree_detached_and_odd_paths),
        T(test_snapshot_changes),
        T(test_snapshot_cache_and_odd_trees),
        T(test_snapshot_untracked_policy),
        T(test_snapshot_bounds),
        T(test_snapshot_old_refs_moved),
        T(test_snapshot_staged_blob_kept),
        T(test_tracked_index_versions),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
