/* SPDX-License-Identifier: MIT */
/*
 * crash safety: baton is killed with SIGKILL at many points of a run (the
 * fake coder replays a recording slowly), then the next baton command must
 * find a consistent store: SQLite's integrity_check passes, the run's events
 * are seq 1..n each exactly once, every event baton had printed that is in
 * the store is stored byte for byte as printed, the run is marked
 * interrupted with a closing turn.completed, and no process of the coder's
 * group is left. A run whose raw output holds more than the store (a batch
 * printed but not committed, or the coder's end) is rebuilt from it: a
 * warning {kind: rebuilt} marks where, the printed events after it are
 * stored one seq later, the same but for their time, and the run ends
 * with the status its turn.completed gives. The kill points come from a seeded generator (the seed
 * is printed; BATON_CRASH_SEED repeats a run).
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "support.h"

#define BATON BT_BINARY_DIR "/baton"
#define FAKE BT_BINARY_DIR "/tests/fake-coder/fake-coder"
#define FIXTURE BT_SOURCE_DIR "/fixtures/codex/0.171.0/shell-declined.jsonl"
#define POINTS 24

static unsigned seed;

struct point {
    char *dir, *home, *out, *pidfile;
    char *env[10]; /* the variables below and their NULL */
};

static void point_init(struct point *p, int i)
{
    p->dir = bt_test_mkdtemp(bt_test_scratch_root(BT_BINARY_DIR), "crash");
    assert_non_null(p->dir);
    p->home = bt_xasprintf("%s/home", p->dir);
    p->out = bt_xasprintf("%s/stdout", p->dir);
    p->pidfile = bt_xasprintf("%s/gc.pid", p->dir);
    int k = 0;
    p->env[k++] = bt_xasprintf("BATON_HOME=%s", p->home);
    p->env[k++] = bt_xasprintf("GIT_CEILING_DIRECTORIES=%s", /* not baton's repository */
                               bt_test_scratch_root(BT_BINARY_DIR));
    p->env[k++] = bt_xstrdup("BATON_CODEX_BIN=" FAKE);
    p->env[k++] = bt_xstrdup("FAKE_CODER_REPLAY=" FIXTURE);
    p->env[k++] = bt_xstrdup("FAKE_CODER_DELAY_MS=40");
    /* every other point: a coder that outlives baton and a grandchild */
    if (i % 2) {
        p->env[k++] = bt_xstrdup("FAKE_CODER_NEVER_EXIT=1");
        p->env[k++] = bt_xstrdup("FAKE_CODER_GRANDCHILD=1");
        p->env[k++] = bt_xasprintf("FAKE_CODER_PIDFILE=%s", p->pidfile);
    }
    p->env[k] = NULL;
}

static void point_release(struct point *p)
{
    bt_test_rmdir(p->dir);
    free(p->dir);
    free(p->home);
    free(p->out);
    free(p->pidfile);
    for (int i = 0; p->env[i]; i++)
        free(p->env[i]);
}

/* The run's stored events: seq must be 1..n in order, each once. */
struct stored {
    int64_t n;
    char **data; /* data[seq-1] */
    char state[32];
    char *answer;  /* the assistant message's text */
    int64_t mark;  /* seq of the rebuilt warning, 0 if none */
    int native_id; /* the conversation has a native session id */
};

/* First column of the first row of sql as text, or NULL. */
static char *query_text(sqlite3 *h, const char *sql)
{
    sqlite3_stmt *q;
    char *v = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
        sqlite3_column_text(q, 0))
        v = bt_xstrdup((const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    return v;
}

static void read_store(const char *home, struct stored *st)
{
    char *db = bt_xasprintf("%s/baton.db", home);
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "ok");
    sqlite3_finalize(q);
    memset(st, 0, sizeof(*st));
    /* the db may not exist yet when the kill came very early */
    if (sqlite3_prepare_v2(h, "SELECT state FROM runs", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        snprintf(st->state, sizeof(st->state), "%s", sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    assert_int_equal(
        sqlite3_prepare_v2(h, "SELECT seq, data FROM events ORDER BY seq", -1, &q, NULL),
        SQLITE_OK);
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(q, 0);
        assert_int_equal(seq, st->n + 1); /* contiguous, no duplicate */
        st->data = bt_xrealloc(st->data, (size_t)(st->n + 1) * sizeof(char *));
        st->data[st->n++] = bt_xstrdup((const char *)sqlite3_column_text(q, 1));
        if (strstr(st->data[st->n - 1], "\"kind\":\"rebuilt\""))
            st->mark = seq;
    }
    sqlite3_finalize(q);
    st->answer = query_text(h, "SELECT text FROM messages WHERE role = 'assistant'");
    char *nid = query_text(h, "SELECT native_session_id FROM conversations");
    st->native_id = nid != NULL;
    free(nid);
    sqlite3_close(h);
    free(db);
}

static void stored_release(struct stored *st)
{
    for (int64_t i = 0; i < st->n; i++)
        free(st->data[i]);
    free(st->data);
    free(st->answer);
}

/* Recovery keeps what the stored events say: the answer streamed so far
 * (the same text in the message and in turn.completed) and the native
 * session id once session.started was stored. */
static void check_recovered(const struct stored *st)
{
    cJSON *end = cJSON_Parse(st->data[st->n - 1]);
    assert_non_null(end);
    assert_non_null(st->answer);
    assert_string_equal(bt_test_jstr(end, "final_text"), st->answer);
    cJSON_Delete(end);
    int named = 0;
    for (int64_t i = 0; i < st->n; i++)
        named |= strstr(st->data[i], "\"type\":\"session.started\"") != NULL;
    if (named)
        assert_true(st->native_id);
}

/* An event's JSON without its "seq" and "ts", to compare a printed event
 * with its rebuilt copy. Caller frees. */
static char *timeless(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    cJSON_DeleteItemFromObject(j, "seq");
    cJSON_DeleteItemFromObject(j, "ts");
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

/* Printed events that reached the store must be stored as printed; those
 * a rebuild stored again follow its warning, one seq later. */
static void compare_printed(const struct point *p, const struct stored *st)
{
    char *out = bt_test_slurp(p->out, NULL);
    for (char *line = out ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cJSON *j = cJSON_Parse(line);
        if (!j) /* the last line may be cut by the kill */
            break;
        int64_t seq = (int64_t)cJSON_GetObjectItem(j, "seq")->valuedouble;
        int end = strcmp(bt_test_jstr(j, "type"), "turn.completed") == 0;
        cJSON_Delete(j);
        if (st->mark && seq >= st->mark && !end && seq + 1 <= st->n - 1) {
            char *a = timeless(st->data[seq]), *b = timeless(line);
            assert_string_equal(a, b);
            free(a);
            free(b);
        } else if ((!st->mark || seq < st->mark) && seq <= st->n - 1) {
            /* the last stored one is recovery's turn.completed */
            assert_string_equal(st->data[seq - 1], line);
        }
    }
    free(out);
}

static void baton_ls(const struct point *p)
{
    const char *argv[] = {BATON, "ls", NULL};
    struct bt_test_run r = {.argv = argv, .env = (const char *const *)p->env, .timeout_s = 30};
    struct bt_test_result res;
    assert_int_equal(bt_test_exec(&r, &res), 0);
    assert_int_equal(res.exit_code, 0);
    bt_test_result_release(&res);
}

static int wait_gone(int pid)
{
    for (int64_t t0 = 0; pid > 0 && kill(pid, 0) == 0 && bt_test_poll(&t0);)
        ;
    return pid <= 0 || kill(pid, 0) != 0;
}

static void crash_once(int i)
{
    struct point p;
    point_init(&p, i);
    /* the recording takes about 1.5 s; after it, a coder that does not
     * exit keeps baton lingering for 2 s with the coder's end read */
    int delay_ms = 30 + (int)(rand_r(&seed) % 2400);
    const char *argv[] = {BATON, "run", "--json", "[[shell:echo baton-ok]]", NULL};
    pid_t pid = bt_test_spawn_bg(argv, (const char *const *)p.env, p.out);
    usleep((useconds_t)delay_ms * 1000);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status)) { /* the run finished first: nothing to recover */
        printf("point %d: %d ms, run finished before the kill\n", i, delay_ms);
        point_release(&p);
        return;
    }
    baton_ls(&p); /* the next command recovers */
    struct stored st;
    read_store(p.home, &st);
    printf("point %d: killed at %d ms, %lld events stored%s\n", i, delay_ms, (long long)st.n,
           st.mark ? ", rebuilt from the raw output" : "");
    /* killed after the run's end was stored (while baton closed the
     * store): the run is complete, nothing to recover */
    int finished = !st.mark && strcmp(st.state, "completed") == 0 && st.n > 0 &&
                   strstr(st.data[st.n - 1], "\"type\":\"turn.completed\"");
    if (st.state[0] && !st.mark && !finished) /* a run was created before the kill */
        assert_string_equal(st.state, "interrupted");
    if (st.n > 0) {
        char *want =
            bt_xasprintf("\"status\":\"%s\"", st.mark || finished ? st.state : "interrupted");
        assert_non_null(strstr(st.data[st.n - 1], want));
        free(want);
        compare_printed(&p, &st);
        check_recovered(&st);
    }
    int gc = 0;
    char *s = bt_test_slurp(p.pidfile, NULL);
    if (s)
        gc = (int)strtol(s, NULL, 10);
    free(s);
    assert_true(wait_gone(gc));
    stored_release(&st);
    point_release(&p);
}

static void test_kill_at_random_points(void **state)
{
    (void)state;
    for (int i = 0; i < POINTS; i++)
        crash_once(i);
}

int main(void)
{
    const char *s = getenv("BATON_CRASH_SEED");
    seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
    printf("crash seed %u (BATON_CRASH_SEED=%u repeats it)\n", seed, seed);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kill_at_random_points)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
