/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the store (src/store.h) and ids (src/id.h). Each test gets a
 * fresh directory from mkdtemp under /tmp, removed afterwards. Tests that
 * need another process (concurrent writers, a dead owner) fork children that
 * report through their exit status only (no cmocka calls in a child). SQLite
 * is used directly only to craft databases the store must refuse or migrate.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "id.h"
#include "proc.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64]; /* the test's temporary directory */
    char *home;   /* dir/state/baton: not created yet */
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof(f->dir), "%s", "/tmp/bt-store-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->home = bt_xasprintf("%s/state/baton", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_unit_rm_rf(f->dir);
    free(f->home);
    free(f);
    return 0;
}

static struct bt_store *open_store(const struct fixture *f)
{
    struct bt_store *s = NULL;
    char *err = NULL;
    int rc = bt_store_open(f->home, &s, &err);
    if (rc)
        print_error("open: %s\n", err ? err : "?");
    assert_int_equal(rc, 0);
    assert_null(err);
    assert_non_null(s);
    return s;
}

static void new_conversation(struct bt_store *s, const char *title, char id[BT_ID_SIZE])
{
    struct bt_store_conversation_new o = {.coder = "pi", .cwd = "/src/p", .title = title};
    assert_int_equal(bt_store_conversation_create(s, &o, id), 0);
    assert_true(bt_id_valid(id));
}

static void new_run(struct bt_store *s, const char *conv, char id[BT_ID_SIZE], int64_t *msg)
{
    struct bt_store_run_new o = {.conversation = conv, .coder = "pi", .model = "m1"};
    int rc = bt_store_run_create(s, &o, id, msg);
    if (rc)
        print_error("run create: %s\n", bt_store_errmsg(s));
    assert_int_equal(rc, 0);
}

static void append_event(struct bt_store *s, const char *run, int64_t seq, const char *json)
{
    struct bt_store_event ev = {.run = run,
                                .seq = seq,
                                .type = "item.delta",
                                .ts_ms = 1000 + seq,
                                .data = json,
                                .len = strlen(json)};
    int rc = bt_store_event_append(s, &ev);
    if (rc)
        print_error("append: %s\n", bt_store_errmsg(s));
    assert_int_equal(rc, 0);
}

static mode_t mode_of(const char *dir, const char *name)
{
    struct stat st;
    char *p = bt_xasprintf("%s%s", dir, name);
    int rc = stat(p, &st);
    free(p);
    assert_int_equal(rc, 0);
    return st.st_mode & 07777;
}

/* Raw SQLite on home/baton.db, for crafting databases. */
static sqlite3 *raw_db(const struct fixture *f)
{
    sqlite3 *db = NULL;
    char *path = bt_xasprintf("%s/baton.db", f->home);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    free(path);
    return db;
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* Wait for a child and return its exit status (-1 if signalled). */
static int wait_child(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* --- ids ---------------------------------------------------------------- */

static void test_id_format(void **state)
{
    (void)state;
    char a[BT_ID_SIZE], b[BT_ID_SIZE];
    assert_int_equal(bt_id_new(a), 0);
    assert_int_equal(strlen(a), BT_ID_LEN);
    assert_true(bt_id_valid(a));
    assert_int_equal(bt_id_new_at(a, 1000), 0);
    assert_int_equal(bt_id_new_at(b, 1001), 0);
    assert_true(strcmp(a, b) < 0);
    assert_memory_equal(a, "0000000rs", BT_ID_TIME_LEN); /* 1000 = 0rs in base 36 */
    assert_false(bt_id_valid(NULL));
    assert_false(bt_id_valid(""));
    assert_false(bt_id_valid("0000000rsABCDEFGHIJKLM"));
    char longer[BT_ID_SIZE + 1];
    memcpy(longer, a, BT_ID_LEN);
    memcpy(longer + BT_ID_LEN, "0", 2);
    assert_false(bt_id_valid(longer));
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp((const char *)x, (const char *)y);
}

static void test_id_unique(void **state)
{
    (void)state;
    enum { N = 10000 };
    char(*ids)[BT_ID_SIZE] = bt_xcalloc(N, BT_ID_SIZE);
    for (int i = 0; i < N; i++)
        assert_int_equal(bt_id_new_at(ids[i], 42), 0);
    qsort(ids, N, BT_ID_SIZE, cmp_str);
    for (int i = 1; i < N; i++)
        assert_true(strcmp(ids[i - 1], ids[i]) < 0);
    free(ids);
}

/* --- opening ------------------------------------------------------------ */

/* Every fd of this process that points into dir must be close-on-exec. */
static int count_fds_into(const char *dir)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[300], target[4096];
        int fd = (int)strtol(e->d_name, NULL, 10);
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (e->d_name[0] == '.' || len < 0)
            continue;
        target[len] = '\0';
        if (strncmp(target, dir, strlen(dir)) != 0)
            continue;
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        n++;
    }
    closedir(d);
    return n;
}

static void test_open_modes(void **state)
{
    struct fixture *f = *state;
    mode_t old = umask(0); /* modes must not depend on the umask */
    struct bt_store *s = open_store(f);
    char id[BT_ID_SIZE];
    new_conversation(s, "hello", id);
    assert_int_equal(mode_of(f->home, ""), 0700);
    assert_int_equal(mode_of(f->home, "/runs"), 0700);
    assert_int_equal(mode_of(f->dir, "/state"), 0700);
    assert_int_equal(mode_of(f->home, "/baton.db"), 0600);
    assert_int_equal(mode_of(f->home, "/baton.db-wal"), 0600);
    assert_int_equal(mode_of(f->home, "/baton.db-shm"), 0600);
    /* db, -wal and -shm are open: all close-on-exec */
    assert_true(count_fds_into(f->home) >= 3);
    assert_string_equal(bt_store_home(s), f->home);
    bt_store_close(s);
    umask(old);
    assert_int_equal(count_fds_into(f->home), 0);
}

static void test_open_tightens_modes(void **state)
{
    struct fixture *f = *state;
    bt_store_close(open_store(f));
    char *db = bt_xasprintf("%s/baton.db", f->home);
    assert_int_equal(chmod(db, 0644), 0);
    struct bt_store *s = open_store(f);
    assert_int_equal(mode_of(f->home, "/baton.db"), 0600);
    bt_store_close(s);
    free(db);
}

static void test_open_errors(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = (struct bt_store *)1;
    char *err = NULL;
    assert_int_equal(bt_store_open("", &s, &err), -EINVAL);
    assert_null(s);
    assert_non_null(err);
    free(err);
    /* home below a regular file */
    char *file = bt_xasprintf("%s/file", f->dir), *home = bt_xasprintf("%s/file/baton", f->dir);
    int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_true(bt_store_open(home, &s, &err) < 0);
    assert_null(s);
    assert_non_null(strstr(err, "file"));
    free(err);
    free(file);
    free(home);
}

static void test_reopen_keeps_data(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char id[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(s, "keep me", id);
    new_run(s, id, run, NULL);
    append_event(s, run, 1, "{\"a\":1}");
    bt_store_close(s); /* commits the pending event */

    s = open_store(f);
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, id, &c), 0);
    assert_string_equal(c.title, "keep me");
    assert_string_equal(c.last_run, run);
    assert_int_equal(c.last_run_state, BT_STORE_RUN_RUNNING);
    bt_store_conversation_release(&c);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_string_equal(r.model, "m1");
    bt_store_run_release(&r);
    bt_store_close(s);
    sqlite3 *db = raw_db(f);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM events"), 1);
    sqlite3_close(db);
}

static void test_migrate_from_zero(void **state)
{
    struct fixture *f = *state;
    bt_store_close(open_store(f)); /* make the directories */
    char *db_path = bt_xasprintf("%s/baton.db", f->home);
    unlink(db_path);
    free(db_path);
    sqlite3 *db = raw_db(f);
    raw_exec(db, "CREATE TABLE other (x); INSERT INTO other VALUES (7)");
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 0);
    sqlite3_close(db);

    bt_store_close(open_store(f));
    db = raw_db(f);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), BT_STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(db, "SELECT x FROM other"), 7);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name IN"
                                 " ('conversations', 'messages', 'runs', 'events')"),
                     4);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    sqlite3_close(db);
    /* reopening at the current version changes nothing */
    bt_store_close(open_store(f));
}

static void test_migration_failure_rolls_back(void **state)
{
    struct fixture *f = *state;
    bt_store_close(open_store(f));
    char *db_path = bt_xasprintf("%s/baton.db", f->home);
    unlink(db_path);
    free(db_path);
    sqlite3 *db = raw_db(f);
    raw_exec(db, "CREATE TABLE events (x)"); /* the step's last table clashes */
    sqlite3_close(db);

    struct bt_store *s = NULL;
    char *err = NULL;
    assert_int_equal(bt_store_open(f->home, &s, &err), BT_ESTORE);
    assert_null(s);
    assert_non_null(strstr(err, "migrate schema 0 to 1"));
    free(err);
    db = raw_db(f);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 0);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'runs'"), 0);
    sqlite3_close(db);
}

/* Add a user message in state st to conv (a queued one gets a number). */
static int64_t add_user(struct bt_store *s, const char *conv, const char *text,
                        enum bt_store_msg_state st)
{
    struct bt_store_message_new o = {
        .conversation = conv, .role = BT_STORE_ROLE_USER, .state = st, .text = text};
    int64_t id = 0;
    assert_int_equal(bt_store_message_add(s, &o, &id), 0);
    return id;
}

/* "text#no " for each message of conv that has a queue number. */
static char *numbered(struct bt_store *s, const char *conv)
{
    struct bt_store_message *v = NULL;
    size_t n = 0;
    struct bt_buf b = BT_BUF_INIT;
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    bt_buf_adds(&b, "");
    for (size_t i = 0; i < n; i++)
        if (v[i].queue_no)
            bt_buf_addf(&b, "%s#%lld ", v[i].text, (long long)v[i].queue_no);
    bt_store_message_list_free(v, n);
    return bt_buf_detach(&b, NULL);
}

/* Back to schema 9: no control requests. */
#define SCHEMA_10_TO_9 "DROP TABLE controls; PRAGMA user_version = 9"

/* Back to schema 8: no groups. */
#define SCHEMA_9_TO_8                                                                              \
    "DROP TRIGGER groups_emptied; DROP INDEX conversations_group;"                                 \
    "ALTER TABLE conversations DROP COLUMN group_id; DROP TABLE groups; PRAGMA user_version = 8"

/* Back to schema 7: conversations without a worktree of their own. */
#define SCHEMA_8_TO_7                                                                              \
    "ALTER TABLE conversations DROP COLUMN wt_path; ALTER TABLE conversations DROP COLUMN "        \
    "wt_branch; ALTER TABLE conversations DROP COLUMN wt_base; ALTER TABLE conversations DROP "    \
    "COLUMN wt_start; ALTER TABLE conversations DROP COLUMN wt_repo; PRAGMA user_version = 7"

/* Back to schema 6: runs without their working-tree snapshots. */
#define SCHEMA_7_TO_6                                                                              \
    "ALTER TABLE runs DROP COLUMN tree_start; ALTER TABLE runs DROP COLUMN tree_end;"              \
    "PRAGMA user_version = 6"

#define SCHEMA_6_TO_5                                                                              \
    "ALTER TABLE messages DROP COLUMN approval; ALTER TABLE messages DROP COLUMN timeout_ms;"      \
    "ALTER TABLE messages DROP COLUMN idle_timeout_ms; ALTER TABLE messages DROP COLUMN no_retry;" \
    "ALTER TABLE messages ADD COLUMN options TEXT; PRAGMA user_version = 5"

/* Schema 4 -> 5 numbers the messages queued then, per conversation in
 * their order, and each counter goes on from there; a number taken back
 * is not given again. */
static void test_migrate_queue_numbers(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char a[BT_ID_SIZE], b[BT_ID_SIZE];
    new_conversation(s, "a", a);
    new_conversation(s, "b", b);
    bt_store_close(s);
    sqlite3 *db = raw_db(f); /* back to schema 4, with three queued messages */
    raw_exec(db, SCHEMA_10_TO_9);
    raw_exec(db, SCHEMA_9_TO_8);
    raw_exec(db, SCHEMA_8_TO_7);
    raw_exec(db, SCHEMA_7_TO_6);
    raw_exec(db, SCHEMA_6_TO_5);
    raw_exec(db, "DROP INDEX messages_queue_no; ALTER TABLE messages DROP COLUMN queue_no;"
                 "ALTER TABLE conversations DROP COLUMN queue_last;"
                 "ALTER TABLE runs DROP COLUMN stop_stage; PRAGMA user_version = 4");
    char *sql = bt_xasprintf(
        "INSERT INTO messages (conversation, seq, role, state, text, created_ms, updated_ms)"
        " VALUES ('%s', 1, 'user', 'complete', 'a sent', 1, 1), ('%s', 2, 'user', 'queued',"
        " 'a1', 2, 2), ('%s', 1, 'user', 'queued', 'b1', 3, 3), ('%s', 3, 'user', 'queued',"
        " 'a2', 4, 4)",
        a, a, b, a);
    raw_exec(db, sql);
    free(sql);
    sqlite3_close(db);
    s = open_store(f);
    char *got = numbered(s, a);
    assert_string_equal(got, "a1#1 a2#2 ");
    free(got);
    got = numbered(s, b);
    assert_string_equal(got, "b1#1 ");
    free(got);
    add_user(s, a, "a3", BT_STORE_MSG_QUEUED);
    add_user(s, a, "a sent too", BT_STORE_MSG_COMPLETE);
    int64_t msg = 0;
    assert_int_equal(bt_store_queued_discard(s, a, 3, &msg), 0);
    assert_true(msg > 0);
    assert_int_equal(bt_store_queued_discard(s, a, 3, NULL), BT_ENOTFOUND);
    assert_non_null(strstr(bt_store_errmsg(s), "queued now: #1, #2"));
    add_user(s, a, "a4", BT_STORE_MSG_QUEUED);
    got = numbered(s, a);
    assert_string_equal(got, "a1#1 a2#2 a4#4 ");
    free(got);
    got = numbered(s, b);
    assert_string_equal(got, "b1#1 ");
    free(got);
    bt_store_close(s);
}

static void test_refuse_newer_schema(void **state)
{
    struct fixture *f = *state;
    bt_store_close(open_store(f));
    sqlite3 *db = raw_db(f);
    raw_exec(db, "PRAGMA user_version = 99");
    sqlite3_close(db);
    struct bt_store *s = NULL;
    char *err = NULL;
    assert_int_equal(bt_store_open(f->home, &s, &err), BT_ESCHEMA);
    assert_null(s);
    assert_non_null(strstr(err, "newer"));
    assert_non_null(strstr(err, "99"));
    free(err);
    assert_int_equal(bt_store_open(f->home, &s, NULL), BT_ESCHEMA);
}

static void test_default_home(void **state)
{
    (void)state;
    char *saved[3];
    const char *names[3] = {"BATON_HOME", "XDG_STATE_HOME", "HOME"};
    for (int i = 0; i < 3; i++)
        saved[i] = getenv(names[i]) ? bt_xstrdup(getenv(names[i])) : NULL;
    setenv("BATON_HOME", "/b", 1);
    setenv("XDG_STATE_HOME", "/x", 1);
    setenv("HOME", "/h", 1);
    char *h = bt_store_default_home();
    assert_string_equal(h, "/b");
    free(h);
    setenv("BATON_HOME", "", 1);
    h = bt_store_default_home();
    assert_string_equal(h, "/x/baton");
    free(h);
    setenv("XDG_STATE_HOME", "relative", 1); /* ignored, as XDG says */
    h = bt_store_default_home();
    assert_string_equal(h, "/h/.local/state/baton");
    free(h);
    unsetenv("HOME");
    unsetenv("XDG_STATE_HOME");
    assert_null(bt_store_default_home());
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
    }
}

/* --- conversations ------------------------------------------------------ */

/* A conversation's worktree: stored whole, read by get, list and search;
 * an incomplete one refused; a schema 7 conversation has none. */
static void test_conversation_worktree(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    struct bt_store_worktree w = {.path = "/h/worktrees/0mx1",
                                  .branch = "baton/0mx1",
                                  .base = "main",
                                  .start = "1234abcd",
                                  .repo = "/r/.git/"};
    struct bt_store_conversation_new o = {
        .coder = "codex", .cwd = "/h/worktrees/0mx1/sub", .title = "tree work", .worktree = &w};
    char id[BT_ID_SIZE], plain[BT_ID_SIZE];
    assert_int_equal(bt_store_conversation_create(s, &o, id), 0);
    new_conversation(s, "plain", plain);
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, id, &c), 0);
    assert_string_equal(c.worktree.path, "/h/worktrees/0mx1");
    assert_string_equal(c.worktree.branch, "baton/0mx1");
    assert_string_equal(c.worktree.base, "main");
    assert_string_equal(c.worktree.start, "1234abcd");
    assert_string_equal(c.worktree.repo, "/r/.git/");
    bt_store_conversation_release(&c);
    assert_int_equal(bt_store_conversation_get(s, plain, &c), 0);
    assert_null(c.worktree.path);
    assert_null(c.worktree.repo);
    bt_store_conversation_release(&c);

    struct bt_store_conversation *v;
    size_t n;
    assert_int_equal(bt_store_conversation_list(s, 0, &v, &n), 0);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(strcmp(v[i].id, id) == 0, v[i].worktree.branch != NULL);
    bt_store_conversation_list_free(v, n);
    struct bt_store_search_hit *h;
    assert_int_equal(bt_store_search(s, "tree work", 0, &h, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_string_equal(h[0].conv.worktree.start, "1234abcd");
    bt_store_search_free(h, n);

    w.repo = NULL; /* every field or none */
    assert_int_equal(bt_store_conversation_create(s, &o, id), -EINVAL);
    bt_store_close(s);

    sqlite3 *db = raw_db(f); /* schema 7 again: migrated, no worktree */
    raw_exec(db, "UPDATE conversations SET wt_path = NULL, wt_branch = NULL, wt_base = NULL,"
                 " wt_start = NULL, wt_repo = NULL");
    raw_exec(db, SCHEMA_10_TO_9);
    raw_exec(db, SCHEMA_9_TO_8);
    raw_exec(db, SCHEMA_8_TO_7);
    sqlite3_close(db);
    s = open_store(f);
    assert_int_equal(bt_store_conversation_list(s, 0, &v, &n), 0);
    assert_int_equal(n, 2);
    assert_null(v[0].worktree.path);
    assert_null(v[1].worktree.path);
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
}

/* A group: its conversations in the order they were made, listed and
 * resolved; gone with its last conversation. */
static void test_groups(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char g[BT_ID_SIZE], other[BT_ID_SIZE], a[BT_ID_SIZE], b[BT_ID_SIZE], lone[BT_ID_SIZE];
    assert_int_equal(bt_store_group_create(s, "\n  Fix the bug\nplease", g), 0);
    assert_int_equal(bt_store_group_create(s, "other", other), 0);
    struct bt_store_conversation_new o = {.coder = "codex", .cwd = "/w", .group = g};
    assert_int_equal(bt_store_conversation_create(s, &o, a), 0);
    o.coder = "pi";
    assert_int_equal(bt_store_conversation_create(s, &o, b), 0);
    new_conversation(s, "lone", lone);

    struct bt_store_group grp;
    struct bt_store_conversation *v;
    size_t n;
    assert_int_equal(bt_store_group_get(s, g, &grp, &v, &n), 0);
    assert_string_equal(grp.name, "Fix the bug");
    assert_int_equal(grp.members, 2);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].id, a);
    assert_string_equal(v[0].group, g);
    assert_string_equal(v[1].coder, "pi");
    bt_store_conversation_list_free(v, n);
    bt_store_group_release(&grp);
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, lone, &c), 0);
    assert_string_equal(c.group, "");
    bt_store_conversation_release(&c);

    struct bt_store_group *l;
    assert_int_equal(bt_store_group_list(s, 0, &l, &n), 0);
    assert_int_equal(n, 1); /* other has no conversation: not listed */
    assert_string_equal(l[0].id, g);
    assert_int_equal(l[0].members, 2);
    bt_store_group_list_free(l, n);
    char id[BT_ID_SIZE], upper[BT_ID_SIZE];
    snprintf(upper, sizeof upper, "%s", g);
    for (char *p = upper; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    assert_int_equal(bt_store_group_resolve(s, upper, id), 0);
    assert_string_equal(id, g);
    assert_int_equal(bt_store_group_resolve(s, "0", id), BT_EAMBIGUOUS);
    assert_int_equal(bt_store_group_resolve(s, "zz", id), BT_ENOTFOUND);
    assert_int_equal(bt_store_group_resolve(s, "a-b", id), BT_ENOTFOUND);
    assert_int_equal(bt_store_group_resolve(s, "", id), BT_ENOTFOUND);

    struct bt_store_removal r;
    assert_int_equal(bt_store_conversation_delete(s, a, &r), 0);
    bt_store_removal_release(&r);
    assert_int_equal(bt_store_group_get(s, g, &grp, &v, &n), 0);
    assert_int_equal(n, 1);
    bt_store_conversation_list_free(v, n);
    bt_store_group_release(&grp);
    assert_int_equal(bt_store_conversation_delete(s, b, &r), 0);
    bt_store_removal_release(&r);
    assert_int_equal(bt_store_group_get(s, g, &grp, &v, &n), BT_ENOTFOUND);
    assert_int_equal(bt_store_group_resolve(s, g, id), BT_ENOTFOUND);
    bt_store_close(s);
}

static void test_conversation_create_get(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    struct bt_store_conversation_new o = {
        .coder = "codex", .model = "gpt-x", .cwd = "/w", .title = "\n\n  Fix the bug\nplease\n"};
    char id[BT_ID_SIZE];
    int64_t before = bt_now_ms();
    assert_int_equal(bt_store_conversation_create(s, &o, id), 0);
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, id, &c), 0);
    assert_string_equal(c.id, id);
    assert_string_equal(c.title, "Fix the bug");
    assert_string_equal(c.coder, "codex");
    assert_string_equal(c.model, "gpt-x");
    assert_string_equal(c.cwd, "/w");
    assert_null(c.native_session_id);
    assert_null(c.native_session_path);
    assert_int_equal(c.status, BT_STORE_CONV_ACTIVE);
    assert_true(c.created_ms >= before && c.updated_ms == c.created_ms);
    assert_string_equal(c.last_run, "");
    assert_int_equal(c.last_run_state, BT_STORE_RUN_NONE);
    bt_store_conversation_release(&c);

    assert_int_equal(bt_store_conversation_set_native(s, id, "sess-1", NULL), 0);
    assert_int_equal(bt_store_conversation_set_native(s, id, NULL, "/p/s.jsonl"), 0);
    assert_int_equal(bt_store_conversation_set_status(s, id, BT_STORE_CONV_TRANSFERRED), 0);
    assert_int_equal(bt_store_conversation_get(s, id, &c), 0);
    assert_string_equal(c.native_session_id, "sess-1");
    assert_string_equal(c.native_session_path, "/p/s.jsonl");
    assert_int_equal(c.status, BT_STORE_CONV_TRANSFERRED);
    assert_string_equal(bt_store_conv_status_name(c.status), "transferred");
    bt_store_conversation_release(&c);

    char missing[BT_ID_SIZE];
    assert_int_equal(bt_id_new(missing), 0);
    assert_int_equal(bt_store_conversation_get(s, missing, &c), BT_ENOTFOUND);
    assert_non_null(strstr(bt_store_errmsg(s), missing));
    assert_int_equal(bt_store_conversation_set_native(s, missing, "x", NULL), BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_set_status(s, missing, BT_STORE_CONV_ARCHIVED),
                     BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_set_status(s, id, BT_STORE_CONV_NONE), -EINVAL);
    assert_int_equal(bt_store_conversation_set_status(s, id, (enum bt_store_conv_status)9),
                     -EINVAL);
    struct bt_store_conversation_new bad = {.coder = "pi"};
    assert_int_equal(bt_store_conversation_create(s, &bad, id), -EINVAL);
    assert_string_equal(id, "");
    bt_store_close(s);
}

static void test_conversation_resolve(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char a[BT_ID_SIZE], b[BT_ID_SIZE], got[BT_ID_SIZE];
    new_conversation(s, "a", a);
    new_conversation(s, "b", b);
    assert_int_equal(bt_store_conversation_resolve(s, a, got), 0);
    assert_string_equal(got, a);
    /* a prefix that only a has: all but the last character */
    char prefix[BT_ID_SIZE];
    memcpy(prefix, a, BT_ID_LEN - 1);
    prefix[BT_ID_LEN - 1] = '\0';
    assert_int_equal(bt_store_conversation_resolve(s, prefix, got), 0);
    assert_string_equal(got, a);
    /* upper case is accepted */
    for (char *p = prefix; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    assert_int_equal(bt_store_conversation_resolve(s, prefix, got), 0);
    assert_string_equal(got, a);
    /* both start with the same time digits */
    assert_int_equal(bt_store_conversation_resolve(s, "0", got), BT_EAMBIGUOUS);
    assert_string_equal(got, "");
    assert_non_null(strstr(bt_store_errmsg(s), "several"));
    assert_int_equal(bt_store_conversation_resolve(s, "zzzz", got), BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_resolve(s, "", got), BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_resolve(s, NULL, got), BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_resolve(s, "0%", got), BT_ENOTFOUND);
    assert_int_equal(bt_store_conversation_resolve(s, "0'; DROP TABLE runs; --", got),
                     BT_ENOTFOUND);
    char toolong[BT_ID_SIZE + 2];
    memcpy(toolong, a, BT_ID_LEN);
    memcpy(toolong + BT_ID_LEN, "0", 2);
    assert_int_equal(bt_store_conversation_resolve(s, toolong, got), BT_ENOTFOUND);
    bt_store_close(s);
}

static void test_title(void **state)
{
    struct fixture *f = *state;
    char *t = bt_store_make_title(NULL);
    assert_string_equal(t, "");
    free(t);
    t = bt_store_make_title(" \t\r\n \n");
    assert_string_equal(t, "");
    free(t);
    t = bt_store_make_title("  one line \r\ntwo");
    assert_string_equal(t, "one line");
    free(t);
    /* 79 ASCII bytes then a 2-byte character: the character does not fit */
    char buf[256];
    memset(buf, 'a', 79);
    snprintf(buf + 79, sizeof(buf) - 79, "%s", "\xc3\xa9 more");
    t = bt_store_make_title(buf);
    assert_int_equal(strlen(t), 79);
    free(t);
    /* 27 three-byte characters = 81 bytes: 26 fit (78 bytes) */
    for (int i = 0; i < 27; i++)
        memcpy(buf + (size_t)3 * i, "\xe6\x97\xa5", 4); /* with the NUL */
    t = bt_store_make_title(buf);
    assert_int_equal(strlen(t), 78);
    assert_memory_equal(t, buf, 78);
    free(t);
    /* exactly 80 bytes of 4-byte characters stay whole */
    for (int i = 0; i < 21; i++)
        memcpy(buf + (size_t)4 * i, "\xf0\x9f\x98\x80", 5); /* with the NUL */
    t = bt_store_make_title(buf);
    assert_int_equal(strlen(t), 80);
    free(t);
    /* invalid UTF-8 becomes U+FFFD */
    t = bt_store_make_title("a\xff");
    assert_string_equal(t, "a\xef\xbf\xbd");
    free(t);

    /* through the store */
    struct bt_store *s = open_store(f);
    char id[BT_ID_SIZE];
    memset(buf, 'x', 79);
    snprintf(buf + 79, sizeof(buf) - 79, "%s", "\xe6\x97\xa5 and more\nsecond line");
    new_conversation(s, buf, id);
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, id, &c), 0);
    assert_int_equal(strlen(c.title), 79);
    bt_store_conversation_release(&c);
    bt_store_close(s);
}

static void test_conversation_list(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    struct bt_store_conversation *v = NULL;
    size_t n = 99;
    assert_int_equal(bt_store_conversation_list(s, 0, &v, &n), 0);
    assert_int_equal(n, 0);
    assert_null(v);

    char a[BT_ID_SIZE], b[BT_ID_SIZE], c[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(s, "a", a);
    usleep(3000);
    new_conversation(s, "b", b);
    usleep(3000);
    new_conversation(s, "c", c);
    usleep(3000);
    /* activity on a moves it first; it gets a run */
    new_run(s, a, run, NULL);
    assert_int_equal(bt_store_conversation_list(s, 0, &v, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].id, a);
    assert_string_equal(v[1].id, c);
    assert_string_equal(v[2].id, b);
    assert_string_equal(v[0].last_run, run);
    assert_int_equal(v[0].last_run_state, BT_STORE_RUN_RUNNING);
    assert_int_equal(v[1].last_run_state, BT_STORE_RUN_NONE);
    bt_store_conversation_list_free(v, n);
    assert_int_equal(bt_store_conversation_list(s, 2, &v, &n), 0);
    assert_int_equal(n, 2);
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
}

/* --- messages and runs -------------------------------------------------- */

static int64_t add_message(struct bt_store *s, const char *conv, enum bt_store_role role,
                           enum bt_store_msg_state st, const char *text)
{
    struct bt_store_message_new m = {.conversation = conv, .role = role, .state = st, .text = text};
    int64_t id = 0;
    assert_int_equal(bt_store_message_add(s, &m, &id), 0);
    assert_true(id > 0);
    return id;
}

static void test_messages(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(s, "q", conv);
    int64_t u1 = add_message(s, conv, BT_STORE_ROLE_USER, BT_STORE_MSG_COMPLETE, "first?");
    int64_t a1 = 0;
    struct bt_store_run_new ro = {.conversation = conv, .coder = "pi", .user_message = u1};
    assert_int_equal(bt_store_run_create(s, &ro, run, &a1), 0);
    struct bt_store_message_update up = {.append = "Hel"};
    assert_int_equal(bt_store_message_update(s, a1, &up), 0);
    up.append = "lo";
    assert_int_equal(bt_store_message_update(s, a1, &up), 0);
    int64_t u2 = add_message(s, conv, BT_STORE_ROLE_USER, BT_STORE_MSG_QUEUED, "second");
    struct bt_store_message_update fail_it = {
        .state = BT_STORE_MSG_FAILED, .error_kind = "model_error", .error_text = "bad"};
    assert_int_equal(bt_store_message_update(s, u2, &fail_it), 0);
    struct bt_store_message_update requeue = {.state = BT_STORE_MSG_QUEUED, .text = "2nd"};
    assert_int_equal(bt_store_message_update(s, u2, &requeue), 0);
    assert_int_equal(bt_store_message_update(s, 999999, &requeue), BT_ENOTFOUND);
    struct bt_store_message_update bad_state = {.state = (enum bt_store_msg_state)42};
    assert_int_equal(bt_store_message_update(s, u2, &bad_state), -EINVAL);

    struct bt_store_message *v = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].id, u1);
    assert_int_equal(v[0].seq, 1);
    assert_int_equal(v[0].role, BT_STORE_ROLE_USER);
    assert_int_equal(v[0].state, BT_STORE_MSG_COMPLETE);
    assert_string_equal(v[0].text, "first?");
    assert_string_equal(v[0].run, run);
    assert_int_equal(v[1].id, a1);
    assert_int_equal(v[1].seq, 2);
    assert_int_equal(v[1].role, BT_STORE_ROLE_ASSISTANT);
    assert_int_equal(v[1].state, BT_STORE_MSG_STREAMING);
    assert_string_equal(v[1].text, "Hello");
    assert_string_equal(v[1].run, run);
    assert_int_equal(v[2].seq, 3);
    assert_int_equal(v[2].state, BT_STORE_MSG_QUEUED);
    assert_string_equal(v[2].text, "2nd");
    assert_string_equal(v[2].error_kind, "model_error");
    assert_string_equal(v[2].run, "");
    assert_string_equal(bt_store_msg_state_name(v[2].state), "queued");
    bt_store_message_list_free(v, n);

    /* the queued message starts the next run and becomes complete */
    struct bt_store_run_end end = {.state = BT_STORE_RUN_COMPLETED, .exit_code = 0};
    assert_int_equal(bt_store_run_finish(s, run, &end), 0);
    char run2[BT_ID_SIZE];
    struct bt_store_run_new ro2 = {.conversation = conv, .coder = "pi", .user_message = u2};
    assert_int_equal(bt_store_run_create(s, &ro2, run2, NULL), 0);
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(v[2].state, BT_STORE_MSG_COMPLETE);
    assert_string_equal(v[2].run, run2);
    assert_int_equal(v[3].role, BT_STORE_ROLE_ASSISTANT);
    assert_string_equal(v[3].run, run2);
    bt_store_message_list_free(v, n);

    char missing[BT_ID_SIZE];
    assert_int_equal(bt_id_new(missing), 0);
    struct bt_store_message_new m = {
        .conversation = missing, .role = BT_STORE_ROLE_USER, .state = BT_STORE_MSG_COMPLETE};
    int64_t mid = 5;
    assert_int_equal(bt_store_message_add(s, &m, &mid), BT_ENOTFOUND);
    assert_int_equal(mid, 0);
    m.conversation = conv;
    m.role = BT_STORE_ROLE_NONE;
    assert_int_equal(bt_store_message_add(s, &m, &mid), -EINVAL);
    m.role = BT_STORE_ROLE_USER;
    m.run = missing; /* not a run */
    assert_int_equal(bt_store_message_add(s, &m, &mid), BT_ESTORE);
    assert_non_null(strstr(bt_store_errmsg(s), "FOREIGN KEY"));
    assert_int_equal(bt_store_message_list(s, missing, &v, &n), BT_ENOTFOUND);
    assert_null(v);
    bt_store_close(s);
}

static void test_run_lifecycle(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE], other[BT_ID_SIZE];
    new_conversation(s, "runs", conv);
    int64_t msg = 0;
    new_run(s, conv, run, &msg);
    assert_true(msg > 0);

    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_string_equal(r.conversation, conv);
    assert_int_equal(r.turn, 1);
    assert_string_equal(r.coder, "pi");
    assert_int_equal(r.state, BT_STORE_RUN_RUNNING);
    assert_int_equal(r.owner_pid, getpid());
    uint64_t me = 0;
    assert_int_equal(bt_proc_pid_start(getpid(), &me), 0);
    assert_true(me > 0);
    assert_true(r.owner_start == me);
    assert_int_equal(r.pid, 0);
    assert_int_equal(r.exit_code, BT_UNKNOWN);
    assert_int_equal(r.ended_ms, 0);
    assert_int_equal(r.message, msg);
    assert_int_equal(r.usage.input_tokens, BT_UNKNOWN);
    assert_null(r.stderr_tail);
    assert_null(r.tree_start);
    assert_null(r.tree_end);
    bt_store_run_release(&r);

    /* its working-tree snapshots, one at a time (a NULL keeps the other) */
    const char *t1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const char *t2 = "08585692ce06452da6f82ae66b90d98b55536fca";
    assert_int_equal(bt_store_run_set_trees(s, run, t1, NULL), 0);
    assert_int_equal(bt_store_run_set_trees(s, run, NULL, t2), 0);
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_string_equal(r.tree_start, t1);
    assert_string_equal(r.tree_end, t2);
    bt_store_run_release(&r);
    assert_int_equal(bt_store_run_set_trees(s, "0mx4nosuchrun00000000", t1, t2), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_set_trees(s, NULL, t1, t2), -EINVAL);

    /* one running run per conversation */
    struct bt_store_run_new o = {.conversation = conv, .coder = "pi"};
    assert_int_equal(bt_store_run_create(s, &o, other, NULL), BT_EBUSY);
    assert_string_equal(other, "");
    assert_non_null(strstr(bt_store_errmsg(s), run));

    assert_int_equal(bt_store_run_started(s, run, getpid(), getpid(), "0.73.1"), 0);
    assert_int_equal(bt_store_run_started(s, run, 0, 1, NULL), -EINVAL);

    size_t tail_len = BT_STORE_STDERR_TAIL_MAX + 100;
    char *tail = bt_xmalloc(tail_len);
    for (size_t i = 0; i < tail_len; i++)
        tail[i] = (char)('a' + i % 26);
    struct bt_usage u;
    bt_usage_init(&u);
    u.input_tokens = 10;
    u.output_tokens = 20;
    u.cost_usd = 0.5;
    struct bt_store_run_end end = {.state = BT_STORE_RUN_COMPLETED,
                                   .exit_code = 0,
                                   .stderr_tail = tail,
                                   .stderr_tail_len = tail_len,
                                   .usage = &u,
                                   .native_session_id = "sess-9",
                                   .final_text = "All done."};
    assert_int_equal(bt_store_run_finish(s, run, &end), 0);
    assert_int_equal(bt_store_run_finish(s, run, &end), -EALREADY);
    end.state = BT_STORE_RUN_RUNNING;
    assert_int_equal(bt_store_run_finish(s, run, &end), -EINVAL);

    assert_int_equal(bt_store_run_last(s, conv, &r), 0);
    assert_string_equal(r.id, run);
    assert_int_equal(r.state, BT_STORE_RUN_COMPLETED);
    assert_int_equal(r.pid, getpid());
    assert_true(r.child_start == me);
    assert_string_equal(r.coder_version, "0.73.1");
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.exit_signal, 0);
    assert_int_equal(r.stderr_tail_len, BT_STORE_STDERR_TAIL_MAX);
    assert_memory_equal(r.stderr_tail, tail + 100, BT_STORE_STDERR_TAIL_MAX);
    assert_string_equal(r.native_session_id, "sess-9");
    assert_int_equal(r.usage.input_tokens, 10);
    assert_int_equal(r.usage.output_tokens, 20);
    assert_int_equal(r.usage.cached_input_tokens, BT_UNKNOWN);
    assert_true(r.usage.cost_usd == 0.5);
    assert_true(r.ended_ms >= r.started_ms);
    bt_store_run_release(&r);
    free(tail);

    struct bt_store_message *v = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].state, BT_STORE_MSG_COMPLETE);
    assert_string_equal(v[0].text, "All done.");
    bt_store_message_list_free(v, n);

    /* second turn fails, killed by a signal; streamed text is kept */
    int64_t msg2 = 0;
    new_run(s, conv, other, &msg2);
    struct bt_store_message_update up = {.append = "partial"};
    assert_int_equal(bt_store_message_update(s, msg2, &up), 0);
    struct bt_store_run_end fail_end = {.state = BT_STORE_RUN_FAILED,
                                        .exit_code = BT_UNKNOWN,
                                        .exit_signal = 9,
                                        .error_kind = "coder_crashed",
                                        .error_text = "pi crashed"};
    assert_int_equal(bt_store_run_finish(s, other, &fail_end), 0);
    assert_int_equal(bt_store_run_last(s, conv, &r), 0);
    assert_string_equal(r.id, other);
    assert_int_equal(r.turn, 2);
    assert_int_equal(r.state, BT_STORE_RUN_FAILED);
    assert_int_equal(r.exit_code, BT_UNKNOWN);
    assert_int_equal(r.exit_signal, 9);
    assert_string_equal(r.error_kind, "coder_crashed");
    assert_null(r.native_session_id); /* each run keeps its own */
    bt_store_run_release(&r);
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[1].state, BT_STORE_MSG_FAILED);
    assert_string_equal(v[1].text, "partial");
    assert_string_equal(v[1].error_text, "pi crashed");
    bt_store_message_list_free(v, n);

    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, conv, &c), 0);
    assert_string_equal(c.last_run, other);
    assert_int_equal(c.last_run_state, BT_STORE_RUN_FAILED);
    bt_store_conversation_release(&c);

    /* a retry can reuse a turn number */
    struct bt_store_run_new retry = {.conversation = conv, .coder = "pi", .turn = 2};
    assert_int_equal(bt_store_run_create(s, &retry, other, NULL), 0);
    assert_int_equal(bt_store_run_get(s, other, &r), 0);
    assert_int_equal(r.turn, 2);
    bt_store_run_release(&r);

    char missing[BT_ID_SIZE];
    assert_int_equal(bt_id_new(missing), 0);
    assert_int_equal(bt_store_run_get(s, missing, &r), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_finish(s, missing, &fail_end), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_started(s, missing, 5, 5, NULL), BT_ENOTFOUND);
    o.conversation = missing;
    assert_int_equal(bt_store_run_create(s, &o, other, NULL), BT_ENOTFOUND);
    assert_int_equal(bt_store_run_last(s, missing, &r), BT_ENOTFOUND);
    struct bt_store_run_new bad_user = {
        .conversation = conv, .coder = "pi", .user_message = 424242};
    char third[BT_ID_SIZE];
    struct bt_store_run_end c_end = {.state = BT_STORE_RUN_CANCELLED, .exit_code = 130};
    assert_int_equal(bt_store_run_last(s, conv, &r), 0);
    assert_int_equal(bt_store_run_finish(s, r.id, &c_end), 0);
    bt_store_run_release(&r);
    assert_int_equal(bt_store_run_create(s, &bad_user, third, NULL), BT_ENOTFOUND);
    /* the failed create left nothing behind */
    assert_int_equal(bt_store_run_last(s, conv, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_CANCELLED);
    bt_store_run_release(&r);
    bt_store_close(s);
}

static void test_run_file(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char run[BT_ID_SIZE];
    assert_int_equal(bt_id_new(run), 0);
    char *p = bt_store_run_file(s, run, ".out");
    char *want = bt_xasprintf("%s/runs/%s.out", f->home, run);
    assert_string_equal(p, want);
    free(p);
    free(want);
    assert_null(bt_store_run_file(s, "../../etc/passwd", ".out"));
    assert_null(bt_store_run_file(s, run, "/x"));
    assert_null(bt_store_run_file(s, run, NULL));
    bt_store_close(s);
}

/* --- events ------------------------------------------------------------- */

struct collect {
    int64_t n;        /* events seen */
    int64_t last_seq; /* seq of the previous one */
    int in_order;     /* 1 while seqs rise by one */
    int64_t stop_at;  /* stop (return 7) at this seq, 0 never */
    char first[64];   /* data of the first event */
};

static int collect_cb(void *data, const struct bt_store_event *ev)
{
    struct collect *c = data;
    if (c->n == 0)
        snprintf(c->first, sizeof c->first, "%.*s", (int)ev->len, ev->data);
    else if (ev->seq != c->last_seq + 1)
        c->in_order = 0;
    c->n++;
    c->last_seq = ev->seq;
    return ev->seq == c->stop_at ? 7 : 0;
}

static struct collect count_events(struct bt_store *s, const char *run, int64_t from)
{
    struct collect c = {.in_order = 1};
    assert_int_equal(bt_store_event_each(s, run, from, collect_cb, &c), 0);
    return c;
}

static void test_events_flush_visibility(void **state)
{
    struct fixture *f = *state;
    struct bt_store *a = open_store(f), *b = open_store(f);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(a, "ev", conv);
    new_run(a, conv, run, NULL);
    append_event(a, run, 1, "{\"type\":\"turn.started\"}\n");
    append_event(a, run, 2, "{\"n\":2}");
    append_event(a, run, 3, "{\"n\":3}");
    /* not flushed: invisible to the other connection, visible to ours */
    assert_int_equal(count_events(b, run, 1).n, 0);
    assert_int_equal(count_events(a, run, 1).n, 3);
    assert_int_equal(bt_store_flush(a), 0);
    assert_int_equal(bt_store_flush(a), 0); /* nothing pending */
    struct collect c = count_events(b, run, 1);
    assert_int_equal(c.n, 3);
    assert_true(c.in_order);
    assert_string_equal(c.first, "{\"type\":\"turn.started\"}"); /* '\n' dropped */
    c = count_events(b, run, 2);
    assert_int_equal(c.n, 2);
    struct collect stop = {.in_order = 1, .stop_at = 2};
    assert_int_equal(bt_store_event_each(b, run, 1, collect_cb, &stop), 7);
    assert_int_equal(stop.n, 2);

    /* a duplicate seq fails alone; the batch survives */
    append_event(a, run, 4, "{}");
    struct bt_store_event dup = {
        .run = run, .seq = 4, .type = "x", .ts_ms = 1, .data = "{}", .len = 2};
    assert_int_equal(bt_store_event_append(a, &dup), BT_ESTORE);
    assert_non_null(strstr(bt_store_errmsg(a), "UNIQUE"));
    append_event(a, run, 5, "{}");
    /* another write commits the batch first */
    struct bt_store_message_update up = {.append = "x"};
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(a, run, &r), 0);
    assert_int_equal(bt_store_message_update(a, r.message, &up), 0);
    bt_store_run_release(&r);
    assert_int_equal(count_events(b, run, 1).n, 5);

    struct bt_store_event bad = {.run = run, .seq = 0, .type = "x", .data = "{}", .len = 2};
    assert_int_equal(bt_store_event_append(a, &bad), -EINVAL);
    char missing[BT_ID_SIZE];
    assert_int_equal(bt_id_new(missing), 0);
    bad.run = missing;
    bad.seq = 1;
    assert_int_equal(bt_store_event_append(a, &bad), BT_ESTORE); /* unknown run */
    assert_int_equal(bt_store_flush(a), 0);
    assert_int_equal(count_events(b, missing, 1).n, 0);
    assert_int_equal(bt_store_event_each(b, run, 1, NULL, NULL), -EINVAL);
    bt_store_close(b);
    bt_store_close(a);
}

static void test_events_10000(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(s, "many", conv);
    new_run(s, conv, run, NULL);
    struct bt_buf json = BT_BUF_INIT;
    int64_t t0 = bt_mono_ms(), worst = 0;
    for (int64_t seq = 1; seq <= 10000; seq++) {
        bt_buf_reset(&json);
        bt_buf_addf(&json,
                    "{\"type\":\"item.delta\",\"seq\":%lld,\"run\":\"%s\",\"item\":"
                    "{\"id\":\"m1\",\"kind\":\"message\"},\"text\":\"token %lld \"}\n",
                    (long long)seq, run, (long long)seq);
        struct bt_store_event ev = {.run = run,
                                    .seq = seq,
                                    .type = "item.delta",
                                    .ts_ms = seq,
                                    .data = json.data,
                                    .len = json.len};
        assert_int_equal(bt_store_event_append(s, &ev), 0);
        if (seq % 1000 == 0) {
            int64_t f0 = bt_mono_ms();
            assert_int_equal(bt_store_flush(s), 0);
            if (bt_mono_ms() - f0 > worst)
                worst = bt_mono_ms() - f0;
        }
    }
    int64_t elapsed = bt_mono_ms() - t0;
    bt_buf_release(&json);
    print_message("10000 events in batches of 1000: %lld ms (slowest commit %lld ms)\n",
                  (long long)elapsed, (long long)worst);
    struct collect c = count_events(s, run, 1);
    assert_int_equal(c.n, 10000);
    assert_true(c.in_order);
    assert_int_equal(c.last_seq, 10000);
    assert_int_equal(count_events(s, run, 9001).n, 1000);
    bt_store_close(s);
}

/* --- recovery ----------------------------------------------------------- */

/* In a child: open the store, start a run in a new conversation whose coder
 * is pid, write two events and some text, send the run id through fd, and
 * exit without finishing the run. Forked while the parent has no store open,
 * so the child's heap holds nothing a leak checker would blame on it. */
static void owner_child(const struct fixture *f, pid_t coder, int fd)
{
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    int64_t msg = 0;
    struct bt_store_conversation_new co = {.coder = "pi", .cwd = "/", .title = "dead"};
    struct bt_store_run_new o = {.conversation = conv, .coder = "pi"};
    struct bt_store_message_update up = {.append = "half an ans"};
    struct bt_store_event ev = {.type = "item.delta", .data = "{}", .len = 2};
    int rc = bt_store_open(f->home, &s, NULL);
    rc = rc ? rc : bt_store_conversation_create(s, &co, conv);
    rc = rc ? rc : bt_store_run_create(s, &o, run, &msg);
    rc = rc ? rc : bt_store_run_started(s, run, coder, coder, "1.0");
    rc = rc ? rc : bt_store_message_update(s, msg, &up);
    ev.run = run;
    for (ev.seq = 1; rc == 0 && ev.seq <= 2; ev.seq++)
        rc = bt_store_event_append(s, &ev);
    rc = rc ? rc : bt_store_flush(s);
    if (rc == 0 && write(fd, run, BT_ID_SIZE) != BT_ID_SIZE)
        rc = -1;
    bt_store_close(s);
    _exit(rc == 0 ? 0 : 1);
}

/* A stand-in coder: its own process group, sleeping until killed. */
static pid_t spawn_coder(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(pid, pid);
    return pid;
}

struct last_event {
    char text[512]; /* data of the last event seen */
    int64_t seq;    /* its seq */
};

static int last_cb(void *data, const struct bt_store_event *ev)
{
    struct last_event *l = data;
    snprintf(l->text, sizeof l->text, "%.*s", (int)ev->len, ev->data);
    l->seq = ev->seq;
    return 0;
}

static void test_recover(void **state)
{
    struct fixture *f = *state;
    char dead_run[BT_ID_SIZE] = "";
    pid_t coder = spawn_coder();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t owner = fork();
    assert_true(owner >= 0);
    if (owner == 0)
        owner_child(f, coder, fds[1]);
    close(fds[1]);
    assert_int_equal(read(fds[0], dead_run, BT_ID_SIZE), BT_ID_SIZE);
    close(fds[0]);
    assert_int_equal(wait_child(owner), 0);

    struct bt_store *s = open_store(f);
    char live_conv[BT_ID_SIZE], live_run[BT_ID_SIZE];
    new_conversation(s, "live", live_conv);
    new_run(s, live_conv, live_run, NULL); /* owned by this live process */

    int count = -1;
    struct bt_store_orphan *orphans = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_recover(s, &count, &orphans, &n), 0);
    assert_int_equal(count, 1);
    assert_int_equal(n, 1);
    assert_string_equal(orphans[0].run, dead_run);
    assert_int_equal(orphans[0].pgid, coder);
    uint64_t start = 0;
    assert_int_equal(bt_proc_pid_start(coder, &start), 0);
    assert_true(orphans[0].child_start == start);
    free(orphans);

    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, dead_run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_INTERRUPTED);
    assert_true(r.ended_ms > 0);
    assert_non_null(r.error_text);
    bt_store_run_release(&r);
    assert_int_equal(bt_store_run_get(s, live_run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_RUNNING);
    bt_store_run_release(&r);

    struct bt_store_message *v = NULL;
    assert_int_equal(bt_store_run_get(s, dead_run, &r), 0);
    assert_int_equal(bt_store_message_list(s, r.conversation, &v, &n), 0);
    bt_store_run_release(&r);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].state, BT_STORE_MSG_INTERRUPTED);
    assert_string_equal(v[0].text, "half an ans");
    bt_store_message_list_free(v, n);

    /* events kept, and the stream ends with turn.completed */
    struct last_event last = {.seq = 0};
    assert_int_equal(bt_store_event_each(s, dead_run, 1, last_cb, &last), 0);
    assert_int_equal(last.seq, 3);
    assert_non_null(strstr(last.text, "\"type\":\"turn.completed\""));
    assert_non_null(strstr(last.text, "\"status\":\"interrupted\""));
    assert_non_null(strstr(last.text, "\"final_text\":\"half an ans\""));
    assert_non_null(strstr(last.text, "\"seq\":3"));

    /* nothing more to do the second time */
    assert_int_equal(bt_store_recover(s, &count, &orphans, &n), 0);
    assert_int_equal(count, 0);
    assert_int_equal(n, 0);
    assert_null(orphans);

    kill(-coder, SIGKILL);
    assert_int_equal(wait_child(coder), -1);
    bt_store_close(s);
}

static void test_recover_pid_reuse(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    new_conversation(s, "reuse", conv);
    new_run(s, conv, run, NULL);
    bt_store_close(s);
    /* the owner pid is alive (us) but started at another time: reused */
    sqlite3 *db = raw_db(f);
    raw_exec(db, "UPDATE runs SET owner_start = owner_start + 1");
    sqlite3_close(db);
    s = open_store(f);
    int count = 0;
    struct bt_store_orphan *orphans = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_recover(s, &count, &orphans, &n), 0);
    assert_int_equal(count, 1);
    assert_int_equal(n, 1); /* never started: no group, found by its tag */
    assert_int_equal(orphans[0].pgid, 0);
    assert_string_equal(orphans[0].run, run);
    free(orphans);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_INTERRUPTED);
    bt_store_run_release(&r);
    struct last_event last = {.seq = 0};
    assert_int_equal(bt_store_event_each(s, run, 1, last_cb, &last), 0);
    assert_int_equal(last.seq, 1);
    bt_store_close(s);
}

static void test_pid_start(void **state)
{
    (void)state;
    uint64_t a = 1, b = 0;
    assert_int_equal(bt_proc_pid_start(getpid(), &a), 0);
    assert_int_equal(bt_proc_pid_start(getpid(), &b), 0);
    assert_true(a == b && a > 0);
    assert_int_equal(bt_proc_pid_start(0, &a), -ESRCH);
    assert_int_equal(a, 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    siginfo_t info;
    assert_int_equal(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0); /* a zombie */
    assert_int_equal(bt_proc_pid_start(child, &a), -ESRCH);
    assert_int_equal(wait_child(child), 0);
    assert_int_equal(bt_proc_pid_start(child, &a), -ESRCH);
}

/* --- concurrency -------------------------------------------------------- */

enum { WRITER_EVENTS = 3000, WRITER_BATCH = 30 };

/* In a child: a conversation, a run, events in small batches with message
 * updates in between, and a finish; exit 0 only if every call succeeded. */
static void writer_child(const struct fixture *f)
{
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
    int64_t msg = 0;
    struct bt_store_conversation_new co = {.coder = "pi", .cwd = "/"};
    struct bt_store_run_new ro = {.coder = "pi", .conversation = conv};
    struct bt_store_message_update up = {.append = "."};
    struct bt_store_run_end end = {.state = BT_STORE_RUN_COMPLETED};
    int rc = bt_store_open(f->home, &s, NULL);
    rc = rc ? rc : bt_store_conversation_create(s, &co, conv);
    rc = rc ? rc : bt_store_run_create(s, &ro, run, &msg);
    for (int64_t seq = 1; rc == 0 && seq <= WRITER_EVENTS; seq++) {
        struct bt_store_event ev = {
            .run = run, .seq = seq, .type = "item.delta", .ts_ms = seq, .data = "{}", .len = 2};
        rc = bt_store_event_append(s, &ev);
        if (rc == 0 && seq % WRITER_BATCH == 0)
            rc = bt_store_flush(s);
        if (rc == 0 && seq % ((int64_t)WRITER_BATCH * 10) == 0)
            rc = bt_store_message_update(s, msg, &up);
    }
    rc = rc ? rc : bt_store_run_finish(s, run, &end);
    if (rc)
        fprintf(stderr, "writer %d: %s\n", (int)getpid(), bt_store_errmsg(s));
    bt_store_close(s);
    _exit(rc == 0 ? 0 : 1);
}

static void test_concurrent_writers(void **state)
{
    struct fixture *f = *state;
    bt_store_close(open_store(f)); /* schema in place; children race anyway */
    enum { N = 3 };
    pid_t kids[N];
    for (int i = 0; i < N; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0)
            writer_child(f);
    }
    /* this process writes too, through its own handle */
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE];
    for (int i = 0; i < 50; i++)
        new_conversation(s, "parent", conv);
    for (int i = 0; i < N; i++)
        assert_int_equal(wait_child(kids[i]), 0);

    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_conversation_list(s, 0, &v, &n), 0);
    assert_int_equal(n, 50 + N);
    int runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].last_run_state != BT_STORE_RUN_COMPLETED)
            continue;
        runs++;
        assert_int_equal(count_events(s, v[i].last_run, 1).n, WRITER_EVENTS);
    }
    assert_int_equal(runs, N);
    bt_store_conversation_list_free(v, n);
    bt_store_close(s);
}

/* Several processes opening a store that does not exist yet, at the same
 * moment: every one opens it (the switch to WAL mode once made about one
 * in five fail with "database is locked"). */
static void test_concurrent_first_open(void **state)
{
    struct fixture *f = *state;
    enum { N = 4, ROUNDS = 25 };
    for (int round = 0; round < ROUNDS; round++) {
        char *home = bt_xasprintf("%s/fresh%d", f->dir, round);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t kids[N];
        for (int i = 0; i < N; i++) {
            kids[i] = fork();
            assert_true(kids[i] >= 0);
            if (kids[i] == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 0) /* EOF: all start together */
                    _exit(3);
                struct bt_store *s = NULL;
                int rc = bt_store_open(home, &s, NULL);
                bt_store_close(s);
                _exit(rc == 0 ? 0 : 1);
            }
        }
        close(go[0]);
        close(go[1]);
        for (int i = 0; i < N; i++)
            assert_int_equal(wait_child(kids[i]), 0);
        free(home);
    }
}

static void test_two_handles_interleaved(void **state)
{
    struct fixture *f = *state;
    struct bt_store *a = open_store(f), *b = open_store(f);
    char ca[BT_ID_SIZE], cb[BT_ID_SIZE], ra[BT_ID_SIZE], rb[BT_ID_SIZE];
    new_conversation(a, "a", ca);
    new_conversation(b, "b", cb);
    new_run(a, ca, ra, NULL);
    new_run(b, cb, rb, NULL);
    for (int64_t seq = 1; seq <= 100; seq++) {
        append_event(a, ra, seq, "{}");
        assert_int_equal(bt_store_flush(a), 0);
        append_event(b, rb, seq, "{}");
        assert_int_equal(bt_store_flush(b), 0);
    }
    assert_int_equal(count_events(a, rb, 1).n, 100);
    assert_int_equal(count_events(b, ra, 1).n, 100);
    /* the database enforces one running run per conversation across handles */
    char again[BT_ID_SIZE];
    struct bt_store_run_new o = {.conversation = ca, .coder = "pi"};
    assert_int_equal(bt_store_run_create(b, &o, again, NULL), BT_EBUSY);
    bt_store_close(a);
    bt_store_close(b);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(bt_store_run_state_name(BT_STORE_RUN_INTERRUPTED), "interrupted");
    assert_string_equal(bt_store_run_state_name((enum bt_store_run_state)77), "none");
    assert_string_equal(bt_store_role_name(BT_STORE_ROLE_ASSISTANT), "assistant");
    assert_string_equal(bt_store_msg_state_name(BT_STORE_MSG_NONE), "none");
    assert_string_equal(bt_store_conv_status_name(BT_STORE_CONV_ARCHIVED), "archived");
    assert_string_equal(bt_store_errmsg(NULL), "");
    bt_store_close(NULL);
    bt_store_conversation_release(NULL);
    bt_store_message_release(NULL);
    bt_store_run_release(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* Submit a prompt with queue mode q; returns the store's code. */
static int submit_text(struct bt_store *s, const char *conv, const char *text,
                       enum bt_store_queue q, struct bt_store_submitted *out)
{
    struct bt_store_run_new o = {
        .conversation = conv, .coder = "pi", .user_text = text, .take_queued = 1, .queue = q};
    return bt_store_run_submit(s, &o, out);
}

static size_t message_count(struct bt_store *s, const char *conv)
{
    struct bt_store_message *v = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_message_list(s, conv, &v, &n), 0);
    bt_store_message_list_free(v, n);
    return n;
}

static void finish_completed(struct bt_store *s, const char *run)
{
    struct bt_store_run_end e = {.state = BT_STORE_RUN_COMPLETED, .exit_code = 0};
    assert_int_equal(bt_store_run_finish(s, run, &e), 0);
}

/* Flush conv: a run that takes everything queued; its settings into d. */
static void flush_queue(struct bt_store *s, const char *conv, struct bt_store_submitted *d)
{
    struct bt_store_run_new o = {.conversation = conv, .coder = "pi", .take_queued = 1};
    assert_int_equal(bt_store_run_submit(s, &o, d), 0);
}

/* Schema 5 -> 6: each queued message keeps the settings its sender stored
 * as text (a key that is missing, or text never stored, reads as 0), and
 * messages queued after the migration store them in the typed columns. */
static void test_migrate_settings(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char a[BT_ID_SIZE];
    new_conversation(s, "a", a);
    add_user(s, a, "m1", BT_STORE_MSG_QUEUED);
    add_user(s, a, "m2", BT_STORE_MSG_QUEUED);
    add_user(s, a, "m3", BT_STORE_MSG_QUEUED);
    add_user(s, a, "m4", BT_STORE_MSG_QUEUED);
    bt_store_close(s);
    sqlite3 *db = raw_db(f); /* back to schema 5: the settings as the text it kept */
    raw_exec(db, SCHEMA_10_TO_9);
    raw_exec(db, SCHEMA_9_TO_8);
    raw_exec(db, SCHEMA_8_TO_7);
    raw_exec(db, SCHEMA_7_TO_6);
    raw_exec(db, SCHEMA_6_TO_5);
    raw_exec(db, "UPDATE messages SET options = 'approval=1 timeout_ms=60000"
                 " idle_timeout_ms=5000 no_retry=1' WHERE text = 'm1';"
                 "UPDATE messages SET options = 'approval=2 timeout_ms=0"
                 " idle_timeout_ms=7000 no_retry=0' WHERE text = 'm2';"
                 "UPDATE messages SET options = 'idle_timeout_ms=9' WHERE text = 'm3'");
    sqlite3_close(db);
    s = open_store(f);
    db = raw_db(f);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), BT_STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('messages')"
                                 " WHERE name = 'options'"),
                     0);
    sqlite3_close(db);
    struct bt_store_submitted d;
    flush_queue(s, a, &d);
    assert_string_equal(d.prompt, "m1\n\nm2\n\nm3\n\nm4");
    assert_int_equal(d.n_settings, 4);
    assert_int_equal(d.settings[0].approval, 1);
    assert_int_equal(d.settings[0].timeout_ms, 60000);
    assert_int_equal(d.settings[0].idle_timeout_ms, 5000);
    assert_int_equal(d.settings[0].no_retry, 1);
    assert_int_equal(d.settings[1].approval, 2);
    assert_int_equal(d.settings[1].timeout_ms, 0);
    assert_int_equal(d.settings[1].idle_timeout_ms, 7000); /* not timeout_ms's */
    assert_int_equal(d.settings[1].no_retry, 0);
    assert_int_equal(d.settings[2].approval, 0);
    assert_int_equal(d.settings[2].timeout_ms, 0);
    assert_int_equal(d.settings[2].idle_timeout_ms, 9);
    assert_int_equal(d.settings[3].approval + d.settings[3].no_retry, 0);
    assert_int_equal(d.settings[3].timeout_ms + d.settings[3].idle_timeout_ms, 0);
    finish_completed(s, d.run);
    bt_store_submitted_release(&d);
    /* queued now: the typed columns */
    struct bt_store_settings mine = {
        .approval = 1, .timeout_ms = 1234, .idle_timeout_ms = 56, .no_retry = 1};
    struct bt_store_run_new q = {.conversation = a,
                                 .coder = "pi",
                                 .user_text = "m5",
                                 .queue = BT_STORE_QUEUE_ALWAYS,
                                 .settings = &mine};
    assert_int_equal(bt_store_run_submit(s, &q, &d), 0);
    assert_true(d.queued > 0);
    assert_null(d.settings);
    bt_store_submitted_release(&d);
    flush_queue(s, a, &d);
    assert_int_equal(d.n_settings, 1);
    assert_int_equal(d.settings[0].approval, mine.approval);
    assert_int_equal(d.settings[0].timeout_ms, mine.timeout_ms);
    assert_int_equal(d.settings[0].idle_timeout_ms, mine.idle_timeout_ms);
    assert_int_equal(d.settings[0].no_retry, mine.no_retry);
    bt_store_submitted_release(&d);
    bt_store_close(s);
}

/* One run per conversation: while it runs a prompt queues (or is refused
 * with NEVER, storing nothing); the next run takes everything queued, in
 * order, joined by a blank line; a taken message cannot be discarded. */
static void test_submit_queue(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE];
    struct bt_store_submitted a, b, c, d;
    new_conversation(s, "q", conv);
    assert_int_equal(submit_text(s, conv, "one", BT_STORE_QUEUE_IF_BUSY, &a), 0);
    assert_true(bt_id_valid(a.run));
    assert_string_equal(a.prompt, "one");
    assert_int_equal(a.queued, 0);
    assert_int_equal(submit_text(s, conv, "two", BT_STORE_QUEUE_IF_BUSY, &b), 0);
    assert_true(b.queued > 0);
    assert_true(b.busy);
    assert_string_equal(b.run, "");
    assert_null(b.prompt);
    assert_int_equal(submit_text(s, conv, "refused", BT_STORE_QUEUE_NEVER, &c), BT_EBUSY);
    assert_true(c.busy);
    bt_store_submitted_release(&c);
    assert_int_equal(message_count(s, conv), 3); /* one, its answer, two */
    assert_int_equal(submit_text(s, conv, "three", BT_STORE_QUEUE_IF_BUSY, &c), 0);
    int64_t queued = 0;
    assert_int_equal(bt_store_queued_count(s, conv, &queued), 0);
    assert_int_equal(queued, 2);
    finish_completed(s, a.run);
    /* the flush: nothing new, everything queued */
    struct bt_store_run_new flush = {.conversation = conv, .coder = "pi", .take_queued = 1};
    assert_int_equal(bt_store_run_submit(s, &flush, &d), 0);
    assert_string_equal(d.prompt, "two" BT_STORE_QUEUE_JOIN "three");
    assert_int_equal(bt_store_queued_count(s, conv, &queued), 0);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, d.run, &r), 0);
    assert_string_equal(r.prompt, "two\n\nthree");
    bt_store_run_release(&r);
    assert_int_equal(bt_store_message_discard(s, conv, b.queued), -EALREADY);
    assert_non_null(strstr(bt_store_errmsg(s), d.run));
    assert_int_equal(bt_store_message_discard(s, conv, 999), BT_ENOTFOUND);
    finish_completed(s, d.run);
    struct bt_store_submitted e;
    assert_int_equal(bt_store_run_submit(s, &flush, &e), BT_ENOTFOUND); /* nothing waits */
    bt_store_submitted_release(&e);
    /* a send that finds messages waiting sends them first, then its own */
    assert_int_equal(submit_text(s, conv, "four", BT_STORE_QUEUE_ALWAYS, &e), 0);
    assert_true(e.queued > 0);
    assert_false(e.busy);
    bt_store_submitted_release(&e);
    assert_int_equal(submit_text(s, conv, "five", BT_STORE_QUEUE_IF_BUSY, &e), 0);
    assert_string_equal(e.prompt, "four\n\nfive");
    bt_store_submitted_release(&e);
    bt_store_submitted_release(&a);
    bt_store_submitted_release(&b);
    bt_store_submitted_release(&c);
    bt_store_submitted_release(&d);
    bt_store_close(s);
}

/* Bounds and guards: the joined prompt stays within max_prompt (nothing is
 * stored otherwise), a discarded message never goes, a retry names the run
 * it follows. */
static void test_submit_bounds(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE];
    struct bt_store_submitted a, b;
    new_conversation(s, "b", conv);
    assert_int_equal(submit_text(s, conv, "running", BT_STORE_QUEUE_IF_BUSY, &a), 0);
    struct bt_store_run_new big = {.conversation = conv,
                                   .coder = "pi",
                                   .user_text = "0123456789",
                                   .queue = BT_STORE_QUEUE_IF_BUSY,
                                   .max_prompt = 16};
    assert_int_equal(bt_store_run_submit(s, &big, &b), 0); /* 10 bytes */
    int64_t gone = b.queued;
    bt_store_submitted_release(&b);
    assert_int_equal(bt_store_run_submit(s, &big, &b), BT_ETOOBIG); /* 10 + 2 + 10 */
    bt_store_submitted_release(&b);
    assert_int_equal(message_count(s, conv), 3);
    assert_int_equal(bt_store_message_discard(s, conv, gone), 0);
    assert_int_equal(bt_store_message_discard(s, conv, gone), BT_ENOTFOUND);
    finish_completed(s, a.run);
    struct bt_store_run_new retry = {.conversation = conv,
                                     .coder = "pi",
                                     .prompt = "again",
                                     .after_run = "0000000000000000000000"};
    assert_int_equal(bt_store_run_submit(s, &retry, &b), BT_EBUSY);
    bt_store_submitted_release(&b);
    retry.after_run = a.run;
    assert_int_equal(bt_store_run_submit(s, &retry, &b), 0);
    assert_string_equal(b.prompt, "again");
    assert_int_equal(message_count(s, conv), 3); /* a retry adds only its answer */
    bt_store_submitted_release(&b);
    bt_store_submitted_release(&a);
    bt_store_close(s);
}

/* A run whose owner is gone: a cancel request stored before recovery makes
 * it cancelled, not interrupted. */
static void test_cancel_request_then_crash(void **state)
{
    struct fixture *f = *state;
    int fds[2];
    char run[BT_ID_SIZE] = "";
    assert_int_equal(pipe(fds), 0);
    pid_t owner = fork();
    assert_true(owner >= 0);
    if (owner == 0) {
        struct bt_store *s = NULL;
        char conv[BT_ID_SIZE], id[BT_ID_SIZE];
        struct bt_store_conversation_new co = {.coder = "pi", .cwd = "/", .title = "c"};
        struct bt_store_run_new o = {.conversation = conv, .coder = "pi"};
        int rc = bt_store_open(f->home, &s, NULL);
        rc = rc ? rc : bt_store_conversation_create(s, &co, conv);
        rc = rc ? rc : bt_store_run_create(s, &o, id, NULL);
        if (rc == 0 && write(fds[1], id, BT_ID_SIZE) != BT_ID_SIZE)
            rc = -1;
        bt_store_close(s);
        _exit(rc == 0 ? 0 : 1);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], run, BT_ID_SIZE), BT_ID_SIZE);
    close(fds[0]);
    assert_int_equal(wait_child(owner), 0);
    struct bt_store *s = NULL;
    assert_int_equal(bt_store_open(f->home, &s, NULL), 0); /* no recovery in open */
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    char conv[BT_ID_SIZE];
    memcpy(conv, r.conversation, BT_ID_SIZE);
    bt_store_run_release(&r);
    assert_int_equal(bt_store_run_cancel(s, conv, &r), 0);
    assert_string_equal(r.id, run);
    assert_true(r.cancel_ms > 0);
    bt_store_run_release(&r);
    int requested = 0;
    assert_int_equal(bt_store_run_cancel_requested(s, run, &requested), 0);
    assert_true(requested);
    int count = 0;
    struct bt_store_orphan *orphans = NULL;
    size_t n = 0;
    assert_int_equal(bt_store_recover(s, &count, &orphans, &n), 0);
    assert_int_equal(count, 1);
    free(orphans);
    assert_int_equal(bt_store_run_get(s, run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_CANCELLED);
    bt_store_run_release(&r);
    struct last_event last = {.seq = 0};
    assert_int_equal(bt_store_event_each(s, run, 1, last_cb, &last), 0);
    assert_non_null(strstr(last.text, "\"status\":\"cancelled\""));
    assert_int_equal(bt_store_run_cancel(s, conv, &r), BT_ENOTFOUND); /* nothing runs */
    bt_store_close(s);
}

/* A handoff refuses while a run runs (BT_EBUSY) or messages wait queued
 * (-EAGAIN); once transferred, turns are refused (-EPERM, nothing stored)
 * unless forced, which makes the conversation active again. */
static void test_hand_off(void **state)
{
    struct fixture *f = *state;
    struct bt_store *s = open_store(f);
    char conv[BT_ID_SIZE];
    struct bt_store_submitted a, b;
    new_conversation(s, "h", conv);
    assert_int_equal(submit_text(s, conv, "running", BT_STORE_QUEUE_IF_BUSY, &a), 0);
    assert_int_equal(bt_store_conversation_hand_off(s, conv), BT_EBUSY);
    assert_int_equal(submit_text(s, conv, "waiting", BT_STORE_QUEUE_IF_BUSY, &b), 0);
    finish_completed(s, a.run);
    assert_int_equal(bt_store_conversation_hand_off(s, conv), -EAGAIN);
    assert_int_equal(bt_store_message_discard(s, conv, b.queued), 0);
    bt_store_submitted_release(&b);
    assert_int_equal(bt_store_conversation_hand_off(s, conv), 0);
    assert_int_equal(bt_store_conversation_hand_off(s, conv), 0); /* again: allowed */
    struct bt_store_conversation c;
    assert_int_equal(bt_store_conversation_get(s, conv, &c), 0);
    assert_int_equal(c.status, BT_STORE_CONV_TRANSFERRED);
    bt_store_conversation_release(&c);
    size_t before = message_count(s, conv);
    assert_int_equal(submit_text(s, conv, "refused", BT_STORE_QUEUE_IF_BUSY, &b), -EPERM);
    bt_store_submitted_release(&b);
    assert_int_equal(message_count(s, conv), before);
    struct bt_store_run_new forced = {
        .conversation = conv, .coder = "pi", .user_text = "forced", .force = 1};
    assert_int_equal(bt_store_run_submit(s, &forced, &b), 0);
    assert_int_equal(bt_store_conversation_get(s, conv, &c), 0);
    assert_int_equal(c.status, BT_STORE_CONV_ACTIVE);
    bt_store_conversation_release(&c);
    bt_store_submitted_release(&b);
    bt_store_submitted_release(&a);
    bt_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_format),
        cmocka_unit_test(test_id_unique),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_pid_start),
        cmocka_unit_test(test_default_home),
        cmocka_unit_test_setup_teardown(test_submit_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_submit_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_request_then_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hand_off, setup, teardown),
        T(test_open_modes),
        T(test_open_tightens_modes),
        T(test_open_errors),
        T(test_reopen_keeps_data),
        T(test_migrate_from_zero),
        T(test_migration_failure_rolls_back),
        T(test_refuse_newer_schema),
        T(test_migrate_queue_numbers),
        T(test_migrate_settings),
        T(test_conversation_create_get),
        T(test_conversation_worktree),
        T(test_groups),
        T(test_conversation_resolve),
        T(test_title),
        T(test_conversation_list),
        T(test_messages),
        T(test_run_lifecycle),
        T(test_run_file),
        T(test_events_flush_visibility),
        T(test_events_10000),
        T(test_recover),
        T(test_recover_pid_reuse),
        T(test_concurrent_writers),
        T(test_concurrent_first_open),
        T(test_two_handles_interleaved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
