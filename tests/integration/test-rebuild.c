/* SPDX-License-Identifier: MIT */
/*
 * store writes that fail mid-turn: a real fault in the real binary, made
 * by tests/support/failwrite.so (LD_PRELOAD: writes to baton.db-wal fail
 * with ENOSPC while a trigger file exists). Nothing the coder produced may
 * be lost: the run is rebuilt from its raw output, by its owner at the end
 * of the turn when the store can be written again by then, else by the
 * next command that can write it, with the status the coder reported and
 * a warning {kind: rebuilt} where the rebuild takes over; the rebuilt
 * record holds every event baton printed live, as printed but for seq and
 * time. A run whose raw output is gone is marked interrupted and says so.
 * `baton attach` of a run whose owner died while the store could not be
 * written says so within seconds instead of waiting for ever.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "harness.h"

#define SHIM BT_BINARY_DIR "/tests/support/failwrite.so"
#define PROMPT "[[shell:echo baton-ok]]"

/* The shim in every baton of the test, failing while <dir>/fail exists; the
 * coder pauses after 3 lines until <dir>/go exists. */
static void arm(struct ctx *c, const char *times)
{
    replay(c, "shell-declined");
    setenv_kv(c, "LD_PRELOAD=" SHIM);
    /* ASan insists on coming first among the preloaded libraries */
    const char *asan = getenv("ASAN_OPTIONS");
    char *kv = bt_xasprintf("ASAN_OPTIONS=%s%sverify_asan_link_order=0", asan ? asan : "",
                            asan && *asan ? ":" : "");
    setenv_kv(c, kv);
    free(kv);
    char *fail = path_in(c, "fail");
    kv = bt_xasprintf("FAILWRITE_TRIGGER=%s", fail);
    setenv_kv(c, kv);
    free(kv);
    hold_turns(c, 3);
    if (times) {
        kv = bt_xasprintf("FAILWRITE_TIMES=%s", times);
        setenv_kv(c, kv);
        free(kv);
    }
    free(fail);
}

static void touch(struct ctx *c, const char *name)
{
    char *p = path_in(c, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    free(p);
}

static void untouch(struct ctx *c, const char *name)
{
    char *p = path_in(c, name);
    assert_int_equal(unlink(p), 0);
    free(p);
}

/* Wait until file path holds at least one whole line. */
static void wait_line(const char *path)
{
    for (int64_t t0 = 0; bt_test_poll(&t0);) {
        char *s = bt_test_slurp(path, NULL);
        int ok = s && strchr(s, '\n');
        free(s);
        if (ok)
            return;
    }
    bt_test_give_up("no output in %s", path);
}

static char *wait_query(struct ctx *c, const char *sql);

/* `baton run --json PROMPT` in the background, the store failing (the
 * trigger made) once it has started; returns its exit code. */
static int run_failing(struct ctx *c)
{
    const char *argv[] = {BATON, "run", "--json", PROMPT, NULL};
    c->env[c->nenv] = NULL;
    char *out = path_in(c, "run.out");
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)c->env, out);
    assert_true(pid > 0);
    wait_line(out); /* turn.started: the run exists in the store */
    /* and its coder's process group is stored (a separate write, later
     * under memcheck): recovery tells a coder that started by it */
    free(wait_query(c, "SELECT pgid FROM runs WHERE pgid > 0"));
    touch(c, "fail");
    release_turns(c);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    free(out);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* First column of the first row of sql as text (caller frees), or NULL;
 * *ok = 0 when the store could not be read (not there yet, busy). */
static char *try_query(struct ctx *c, const char *sql, int *ok)
{
    char *db = bt_xasprintf("%s/home/baton.db", c->dir);
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    char *v = NULL;
    *ok = sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
          sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK;
    int rc = *ok ? sqlite3_step(q) : SQLITE_ERROR;
    if (rc == SQLITE_ROW && sqlite3_column_text(q, 0))
        v = bt_xstrdup((const char *)sqlite3_column_text(q, 0));
    *ok = *ok && (rc == SQLITE_ROW || rc == SQLITE_DONE);
    sqlite3_finalize(q);
    sqlite3_close(h);
    free(db);
    return v;
}

static char *query(struct ctx *c, const char *sql)
{
    int ok;
    char *v = try_query(c, sql, &ok);
    if (!ok)
        fail_msg("cannot read the store: %s", sql);
    return v;
}

/* Wait until sql gives a row; returns its first column (caller frees). */
static char *wait_query(struct ctx *c, const char *sql)
{
    int ok;
    char *v = NULL;
    for (int64_t t0 = 0; !v && bt_test_poll(&t0);)
        v = try_query(c, sql, &ok);
    if (!v)
        bt_test_give_up("nothing came for: %s", sql);
    return v;
}

static void assert_query(struct ctx *c, const char *sql, const char *want)
{
    char *got = query(c, sql);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: got %s, want %s", sql, got ? got : "NULL", want);
    free(got);
}

/* An event without seq and ts, for comparing a printed event with its
 * rebuilt copy; a turn.completed rebuilt by another process than its owner
 * cannot know the coder's exit or the turn's exact duration, so without
 * exact_end those go too. Caller frees. */
static char *timeless(const char *json, int exact_end)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    cJSON_DeleteItemFromObject(j, "seq");
    cJSON_DeleteItemFromObject(j, "ts");
    if (!exact_end && strcmp(bt_test_jstr(j, "type"), "turn.completed") == 0) {
        cJSON_DeleteItemFromObject(j, "exit");
        cJSON_DeleteItemFromObject(j, "duration_ms");
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

/* The stored events are seq 1..n; one warning {kind: rebuilt}; the others
 * are, in order, every event the owner printed (but for seq and time). */
static void check_record(struct ctx *c, int exact_end)
{
    char *db = bt_xasprintf("%s/home/baton.db", c->dir);
    char *out = path_in(c, "run.out");
    char *printed = bt_test_slurp(out, NULL);
    assert_non_null(printed);
    cJSON **lines;
    size_t n_lines = bt_test_json_lines(printed, &lines);
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(h, "SELECT seq, data FROM events ORDER BY seq", -1, &q, NULL),
        SQLITE_OK);
    int64_t seq = 0;
    size_t at = 0, marks = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        assert_int_equal(sqlite3_column_int64(q, 0), ++seq);
        const char *data = (const char *)sqlite3_column_text(q, 1);
        if (strstr(data, "\"kind\":\"rebuilt\"")) {
            marks++;
            continue;
        }
        assert_true(at < n_lines && lines[at]);
        char *want_json = cJSON_PrintUnformatted(lines[at++]);
        char *a = timeless(data, exact_end), *b = timeless(want_json, exact_end);
        assert_string_equal(a, b);
        free(a);
        free(b);
        free(want_json);
    }
    assert_int_equal(marks, 1);
    assert_int_equal(at, n_lines); /* every printed event, turn.completed last */
    sqlite3_finalize(q);
    sqlite3_close(h);
    bt_test_lines_free(lines, n_lines);
    free(printed);
    free(out);
    free(db);
}

/* The answer the fixture gives, as `baton show` prints it. */
#define ANSWER "rejected by user"

/* One failed write mid-turn (FAILWRITE_TIMES=1), the store writable again
 * before the turn ends: the owner rebuilds the run at the end, and the turn
 * exits as it completed. */
static void test_owner_rebuilds(void **state)
{
    struct ctx *c = *state;
    arm(c, "1");
    assert_int_equal(run_failing(c), 0);
    assert_query(c, "SELECT state FROM runs", "completed");
    assert_query(c,
                 "SELECT count(*) FROM events WHERE type = 'warning' AND data LIKE "
                 "'%the store could not be written%'",
                 "1");
    check_record(c, 1);
    char *text = query(c, "SELECT text FROM messages WHERE role = 'assistant'");
    assert_non_null(text);
    assert_non_null(strstr(text, ANSWER));
    free(text);
}

/* One store write fails (FAILWRITE_TIMES=1) and the raw copy's fail for
 * the rest of the turn (FAILWRITE_ALSO): the owner rebuilds the run from a
 * raw copy that stopped short, and says its record is incomplete instead
 * of a turn that completed (it said "rebuilt" and exited 0, the run
 * lacking its last events). */
static void test_raw_copy_fails_too(void **state)
{
    struct ctx *c = *state;
    arm(c, "1");
    setenv_kv(c, "FAILWRITE_ALSO=.out.zst");
    assert_int_equal(run_failing(c), 1);
    assert_query(c,
                 "SELECT count(*) FROM events WHERE type = 'warning' AND data LIKE "
                 "'%the store could not be written%'",
                 "1");
}

/* The write that fails is the last: the coder pauses before its final
 * line, with every event before it stored; the failure hits the commit of
 * the turn's last events or its end (a run finished without its last
 * events could not be rebuilt), and the owner rebuilds. */
static void test_end_write_fails(void **state)
{
    struct ctx *c = *state;
    arm(c, "1");
    setenv_kv(c, "FAKE_CODER_PAUSE_AFTER=34"); /* of the fixture's 35 lines */
    const char *argv[] = {BATON, "run", "--json", PROMPT, NULL};
    c->env[c->nenv] = NULL;
    char *out = path_in(c, "run.out");
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)c->env, out);
    assert_true(pid > 0);
    char *usage = wait_query(c, "SELECT seq FROM events WHERE type = 'usage'");
    touch(c, "fail");
    release_turns(c);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_query(c, "SELECT state FROM runs", "completed");
    check_record(c, 1);
    free(usage);
    free(out);
}

/* The store stays unwritable until the owner exits: it says where the
 * output is and exits 1, the run stays running; a command that cannot
 * write the store says it cannot recover it; the first that can rebuilds
 * it, completed, with the answer. */
static void test_later_command_rebuilds(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    arm(c, NULL);
    assert_int_equal(run_failing(c), 1);
    assert_query(c, "SELECT state FROM runs", "running");
    baton(c, &res, NULL, 0, "ls", END);
    assert_non_null(strstr(res.err.data, "cannot rebuild run"));
    assert_non_null(strstr(res.out.data, "running"));
    bt_test_result_release(&res);
    assert_query(c, "SELECT state FROM runs", "running");
    untouch(c, "fail");
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "rebuilt from the coder's raw output"));
    assert_non_null(strstr(res.out.data, "completed"));
    bt_test_result_release(&res);
    assert_query(c, "SELECT state FROM runs", "completed");
    check_record(c, 0);
    char *conv = query(c, "SELECT id FROM conversations");
    baton(c, &res, NULL, 0, "show", conv, END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.out.data, ANSWER));
    assert_non_null(strstr(res.out.data, "rebuilt from the coder's raw output"));
    bt_test_result_release(&res);
    /* done once: the next command has nothing to rebuild */
    baton(c, &res, NULL, 0, "ls", END);
    assert_null(strstr(res.err.data, "rebuilt"));
    bt_test_result_release(&res);
    free(conv);
}

/* The raw output is gone too: the run is marked interrupted as before,
 * and recovery says why it could not rebuild it. */
static void test_raw_output_missing(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    arm(c, NULL);
    assert_int_equal(run_failing(c), 1);
    char *run = query(c, "SELECT id FROM runs");
    char *raw = bt_xasprintf("%s/home/runs/%s.out.zst", c->dir, run);
    assert_int_equal(unlink(raw), 0);
    untouch(c, "fail");
    baton(c, &res, NULL, 0, "ls", END);
    assert_int_equal(res.exit_code, 0);
    assert_non_null(strstr(res.err.data, "cannot be read"));
    assert_non_null(strstr(res.err.data, "marked interrupted"));
    bt_test_result_release(&res);
    assert_query(c, "SELECT state FROM runs", "interrupted");
    assert_query(c, "SELECT type FROM events ORDER BY seq DESC LIMIT 1", "turn.completed");
    free(raw);
    free(run);
}

/* 1 while pid runs (a zombie does not). */
static int alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The owner of a detached run is killed while the store cannot be
 * written: attach must say within seconds that nobody runs the turn (it
 * waited for ever before), never that the turn goes on; once the store is
 * writable, attach recovers the run and exits with its end. */
static void test_attach_dead_owner(void **state)
{
    struct ctx *c = *state;
    struct bt_test_result res;
    arm(c, NULL);
    setenv_kv(c, "FAKE_CODER_HANG_AFTER=3");
    baton(c, &res, NULL, 0, "run", "--detach", PROMPT, END);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
    /* the worker's events are stored */
    char *owner =
        wait_query(c, "SELECT owner_pid FROM runs WHERE (SELECT count(*) FROM events) >= 2");
    touch(c, "fail");
    assert_int_equal(kill((pid_t)strtol(owner, NULL, 10), SIGKILL), 0);
    while (alive((pid_t)strtol(owner, NULL, 10)))
        usleep(10000);
    char *conv = query(c, "SELECT id FROM conversations");
    baton(c, &res, NULL, 0, "attach", conv, END);
    assert_int_equal(res.exit_code, 1);
    assert_non_null(strstr(res.err.data, "is gone"));
    assert_null(strstr(res.err.data, "goes on"));
    bt_test_result_release(&res);
    assert_query(c, "SELECT state FROM runs", "running");
    untouch(c, "fail");
    baton(c, &res, NULL, 0, "attach", "--json", conv, END);
    assert_int_equal(res.exit_code, 1); /* the coder never finished */
    assert_non_null(strstr(res.out.data, "\"status\":\"interrupted\""));
    bt_test_result_release(&res);
    assert_query(c, "SELECT state FROM runs", "interrupted");
    free(conv);
    free(owner);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_owner_rebuilds),         T(test_raw_copy_fails_too), T(test_end_write_fails),
        T(test_later_command_rebuilds), T(test_raw_output_missing), T(test_attach_dead_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
