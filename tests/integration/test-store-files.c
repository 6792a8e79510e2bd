/* SPDX-License-Identifier: MIT */
/*
 * store files: what baton does with what it finds at $BATON_HOME's names.
 * Links and directories at baton.db, -wal and -shm are refused with the
 * path and the reason, and nothing they point at changes mode; a store
 * that fails to open changes no mode; modes are fixed (db, -wal and -shm
 * together) only once the store opened; no permission and a read-only
 * directory are named as such. Permission checks do not bite root, so as
 * root those cases run baton as another user (setpriv), and are skipped
 * (reported as skipped) when that cannot be done.
 */
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
#include <sqlite3.h>

#include "harness.h"

#define NOBODY 65534
#define SETPRIV "/usr/bin/setpriv"

static unsigned mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

static char *home_file(struct ctx *c, const char *name)
{
    return bt_xasprintf("%s/home/%s", c->dir, name);
}

/* `baton ls` must fail, its message naming path and holding words. */
static void ls_refuses(struct ctx *c, const char *path, const char *words)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 1);
    char *named = bt_xasprintf("'%s'", path);
    if (!strstr(res.err.data, named) || !strstr(res.err.data, words))
        fail_msg("expected '%s' and '%s' in: %s", named, words, res.err.data);
    free(named);
    bt_test_result_release(&res);
}

static void ls_ok(struct ctx *c)
{
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
}

/* A store with one finished turn: db, -wal and -shm exist. */
static void make_store(struct ctx *c)
{
    struct bt_test_result res;
    replay(c, "text");
    baton(c, &res, NULL, 0, "run", "--json", "hello", END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
}

/* A file outside the home, 0644, that links may point at. */
static char *outside_file(struct ctx *c)
{
    char *path = path_in(c, "target");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not baton's\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0644), 0);
    return path;
}

static void test_db_directory(void **state)
{
    struct ctx *c = *state;
    char *home = path_in(c, "home"), *db = home_file(c, "baton.db");
    assert_int_equal(mkdir(home, 0700), 0);
    assert_int_equal(mkdir(db, 0755), 0);
    assert_int_equal(chmod(db, 0755), 0);
    ls_refuses(c, db, "is a directory");
    assert_int_equal(mode_of(db), 0755);
    free(db);
    free(home);
}

static void test_db_link(void **state)
{
    struct ctx *c = *state;
    char *home = path_in(c, "home"), *db = home_file(c, "baton.db"), *target = outside_file(c);
    assert_int_equal(mkdir(home, 0700), 0);
    assert_int_equal(symlink(target, db), 0);
    ls_refuses(c, db, "symbolic link");
    assert_int_equal(mode_of(target), 0644);
    /* a link to nowhere is refused too, and nothing is created for it */
    assert_int_equal(unlink(db), 0);
    char *nowhere = path_in(c, "nowhere");
    assert_int_equal(symlink(nowhere, db), 0);
    ls_refuses(c, db, "symbolic link");
    assert_int_equal(access(nowhere, F_OK), -1);
    free(nowhere);
    free(target);
    free(db);
    free(home);
}

/* -shm a link to another file, -wal a directory: refused before SQLite
 * opens (it would follow the link and write its index there), and the db
 * keeps its mode, since the store did not open. */
static void test_side_files(void **state)
{
    struct ctx *c = *state;
    make_store(c);
    char *db = home_file(c, "baton.db"), *wal = home_file(c, "baton.db-wal");
    char *shm = home_file(c, "baton.db-shm"), *target = outside_file(c);
    unlink(shm);
    assert_int_equal(symlink(target, shm), 0);
    assert_int_equal(chmod(db, 0644), 0);
    ls_refuses(c, shm, "symbolic link");
    assert_int_equal(mode_of(target), 0644);
    assert_int_equal(mode_of(db), 0644);
    char *content = bt_test_slurp(target, NULL);
    assert_string_equal(content, "not baton's\n");
    free(content);
    assert_int_equal(unlink(shm), 0);
    unlink(wal);
    assert_int_equal(mkdir(wal, 0755), 0);
    ls_refuses(c, wal, "is a directory");
    assert_int_equal(mode_of(db), 0644);
    assert_int_equal(mode_of(wal), 0755);
    assert_int_equal(rmdir(wal), 0);
    ls_ok(c);
    assert_int_equal(mode_of(db), 0600);
    free(target);
    free(shm);
    free(wal);
    free(db);
}

/* No db yet, but a -shm link beside where it goes: refused all the same,
 * and nothing written through it. */
static void test_new_db_beside_link(void **state)
{
    struct ctx *c = *state;
    char *home = path_in(c, "home"), *shm = home_file(c, "baton.db-shm"), *target = outside_file(c);
    assert_int_equal(mkdir(home, 0700), 0);
    assert_int_equal(symlink(target, shm), 0);
    ls_refuses(c, shm, "symbolic link");
    char *content = bt_test_slurp(target, NULL);
    assert_string_equal(content, "not baton's\n");
    assert_int_equal(mode_of(target), 0644);
    char *db = home_file(c, "baton.db");
    assert_int_equal(access(db, F_OK), -1); /* nothing made either */
    free(db);
    free(content);
    free(target);
    free(shm);
    free(home);
}

/* Fixing the db's mode fixes its -wal and -shm with it. */
static void test_side_modes_fixed(void **state)
{
    struct ctx *c = *state;
    make_store(c);
    const char *names[] = {"baton.db", "baton.db-wal", "baton.db-shm"};
    for (size_t i = 0; i < 3; i++) {
        char *p = home_file(c, names[i]);
        assert_int_equal(chmod(p, 0644), 0);
        free(p);
    }
    ls_ok(c);
    for (size_t i = 0; i < 3; i++) {
        char *p = home_file(c, names[i]);
        assert_int_equal(mode_of(p), 0600);
        free(p);
    }
}

/* A db that is not a database: the open fails, and its mode is the same. */
static void test_failed_open_changes_nothing(void **state)
{
    struct ctx *c = *state;
    char *home = path_in(c, "home"), *db = home_file(c, "baton.db");
    assert_int_equal(mkdir(home, 0700), 0);
    FILE *f = fopen(db, "w");
    assert_non_null(f);
    fputs("this is not an SQLite database, not at all, no\n", f);
    fclose(f);
    assert_int_equal(chmod(db, 0644), 0);
    ls_refuses(c, db, "not a database");
    assert_int_equal(mode_of(db), 0644);
    free(db);
    free(home);
}

/* A home reached through a link (a linked /home, a linked parent) is the
 * user's choice: only baton.db and its side files must not be links. */
static void test_home_through_a_link(void **state)
{
    struct ctx *c = *state;
    char *real = path_in(c, "real"), *link = path_in(c, "link");
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink(real, link), 0);
    char *kv = bt_xasprintf("BATON_HOME=%s/home", link);
    setenv_kv(c, kv);
    make_store(c);
    ls_ok(c);
    char *db = bt_xasprintf("%s/home/baton.db", real);
    assert_int_equal(mode_of(db), 0600); /* the store is where the link leads */
    struct bt_test_result res;
    baton(c, &res, NULL, 0, "ls", "--json", END);
    assert_non_null(strstr(res.out.data, "\"title\":\"hello\""));
    bt_test_result_release(&res);
    free(db);
    free(kv);
    free(link);
    free(real);
}

/* `baton ls` as a user permission checks apply to (NOBODY when we are
 * root), which must fail naming path and words. */
static void ls_refuses_as_user(struct ctx *c, const char *path, const char *words)
{
    const char *argv[] = {SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", BATON, "ls",
                          NULL};
    c->env[c->nenv] = NULL;
    struct bt_test_run r = {.argv = geteuid() == 0 ? argv : argv + 4,
                            .env = (const char *const *)c->env,
                            .timeout_s = 60};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_int_equal(res.exit_code, 1);
    char *named = bt_xasprintf("'%s'", path);
    if (!strstr(res.err.data, named) || !strstr(res.err.data, words))
        fail_msg("expected '%s' and '%s' in: %s", named, words, res.err.data);
    free(named);
    bt_test_result_release(&res);
}

/* 1 when baton can be run as a user that modes apply to. */
static int can_lose_permissions(void)
{
    return geteuid() != 0 || access(SETPRIV, X_OK) == 0;
}

static void test_no_permission(void **state)
{
    struct ctx *c = *state;
    /* the other user must reach the home: the test's directory moves to
     * /tmp, since a clone under /root (0700) keeps it from even trying */
    char *reachable = bt_test_mkdtemp("/tmp", "bt-perm");
    assert_non_null(reachable);
    bt_test_rmdir(c->dir);
    free(c->dir);
    c->dir = reachable;
    char *kv = bt_xasprintf("BATON_HOME=%s/home", c->dir);
    setenv_kv(c, kv);
    free(kv);
    make_store(c);
    char *home = path_in(c, "home"), *db = home_file(c, "baton.db");
    char *wal = home_file(c, "baton.db-wal"), *shm = home_file(c, "baton.db-shm");
    /* the last connection to close checkpoints and removes -wal and -shm */
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA user_version", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(access(wal, F_OK), -1);
    assert_int_equal(access(shm, F_OK), -1);
    if (geteuid() == 0) {
        assert_int_equal(chmod(c->dir, 0755), 0);
        assert_int_equal(chown(home, NOBODY, NOBODY), 0);
        assert_int_equal(chown(db, NOBODY, NOBODY), 0);
    }
    assert_int_equal(chmod(db, 0000), 0);
    ls_refuses_as_user(c, db, "no permission");
    assert_int_equal(mode_of(db), 0000);
    assert_int_equal(chmod(db, 0400), 0);
    ls_refuses_as_user(c, db, "no permission");
    assert_int_equal(mode_of(db), 0400);
    assert_int_equal(chmod(db, 0600), 0);
    assert_int_equal(chmod(home, 0500), 0);
    ls_refuses_as_user(c, home, "not writable");
    assert_int_equal(chmod(home, 0700), 0);
    free(shm);
    free(wal);
    free(db);
    free(home);
}

#define SKIPPED 77 /* ctest's SKIP_RETURN_CODE for integration-store-permissions */

/* "permissions" as the argument runs only the permission cases, a ctest
 * entry of their own, which reports SKIPPED when they cannot run. */
int main(int argc, char **argv)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_db_directory),        T(test_db_link),          T(test_side_files),
        T(test_new_db_beside_link),  T(test_side_modes_fixed), T(test_failed_open_changes_nothing),
        T(test_home_through_a_link),
    };
    const struct CMUnitTest permissions[] = {T(test_no_permission)};
    if (argc > 1 && strcmp(argv[1], "permissions") == 0) {
        if (!can_lose_permissions()) {
            printf("skipped: root ignores modes, and %s cannot run baton as another user\n",
                   SETPRIV);
            return SKIPPED;
        }
        return cmocka_run_group_tests(permissions, NULL, NULL);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
