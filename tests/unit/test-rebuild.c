/* SPDX-License-Identifier: MIT */
/*
 * unit tests of rebuilding a run (store-rebuild.c, rebuild.c): the store
 * keeps the events up to `kept`, replaces the rest and finishes the run in
 * one transaction (a rebuild that fails changes nothing and can be done
 * again; one done twice is refused); bt_store_dead_runs lists only runs
 * whose owner is gone; bt_rebuild_run replays a run file through the
 * coder's parser and leaves a store that has everything alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "rebuild.h"
#include "runfile.h"
#include "store.h"
#include "unit-fs.h"
#include "util.h"

struct fixture {
    char dir[64];
    struct bt_store *s;
    char conv[BT_ID_SIZE], run[BT_ID_SIZE];
};

static int setup(void **state)
{
    struct fixture *f = bt_xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", "/tmp/bt-rebuild-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char *err = NULL;
    if (bt_store_open(f->dir, &f->s, &err) != 0)
        return -1;
    struct bt_store_conversation_new cn = {.coder = "codex", .cwd = "/", .title = "t"};
    struct bt_store_run_new rn = {.conversation = f->conv, .coder = "codex", .user_text = "hi"};
    if (bt_store_conversation_create(f->s, &cn, f->conv) != 0 ||
        bt_store_run_create(f->s, &rn, f->run, NULL) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    bt_store_close(f->s);
    bt_unit_rm_rf(f->dir);
    free(f);
    return 0;
}

static struct bt_store_event event(const char *run, int64_t seq, const char *type, const char *json)
{
    return (struct bt_store_event){
        .run = run, .seq = seq, .type = type, .ts_ms = seq, .data = json, .len = strlen(json)};
}

static int count_cb(void *data, const struct bt_store_event *ev)
{
    (void)ev;
    ++*(int64_t *)data;
    return 0;
}

static int64_t count(struct fixture *f)
{
    int64_t n = 0;
    assert_int_equal(bt_store_event_each(f->s, f->run, 1, count_cb, &n), 0);
    return n;
}

static void test_rebuild_once(void **state)
{
    struct fixture *f = *state;
    for (int64_t seq = 1; seq <= 3; seq++) {
        struct bt_store_event ev = event(f->run, seq, "item.delta", "{\"stored\":1}");
        assert_int_equal(bt_store_event_append(f->s, &ev), 0);
    }
    assert_int_equal(bt_store_flush(f->s), 0);
    struct bt_store_run_end e = {
        .state = BT_STORE_RUN_COMPLETED, .exit_code = BT_UNKNOWN, .final_text = "the answer"};
    /* out of sequence: refused, and nothing changed (one transaction) */
    struct bt_store_event bad[] = {event(f->run, 3, "warning", "{}"),
                                   event(f->run, 5, "turn.completed", "{}")};
    assert_int_equal(bt_store_run_rebuild(f->s, f->run, 2, bad, 2, &e), -EINVAL);
    assert_int_equal(count(f), 3);
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(f->s, f->run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_RUNNING);
    bt_store_run_release(&r);
    /* done again, right: events 3.. replaced, the run finished */
    struct bt_store_event good[] = {event(f->run, 3, "warning", "{}"),
                                    event(f->run, 4, "item.delta", "{}"),
                                    event(f->run, 5, "turn.completed", "{}")};
    assert_int_equal(bt_store_run_rebuild(f->s, f->run, 2, good, 3, &e), 0);
    assert_int_equal(count(f), 5);
    assert_int_equal(bt_store_run_get(f->s, f->run, &r), 0);
    assert_int_equal(r.state, BT_STORE_RUN_COMPLETED);
    bt_store_run_release(&r);
    /* a second rebuild (another process came second) changes nothing */
    assert_int_equal(bt_store_run_rebuild(f->s, f->run, 0, good, 0, &e), -EALREADY);
    assert_int_equal(count(f), 5);
}

static void test_dead_runs(void **state)
{
    struct fixture *f = *state;
    struct bt_store_run *v;
    size_t n;
    /* the owner is this process: alive */
    assert_int_equal(bt_store_dead_runs(f->s, &v, &n), 0);
    assert_int_equal(n, 0);
    assert_null(v);
    /* a run owned by a process that has exited */
    pid_t pid = fork();
    if (pid == 0) {
        struct bt_store *s2;
        char conv[BT_ID_SIZE], run[BT_ID_SIZE];
        struct bt_store_conversation_new cn = {.coder = "codex", .cwd = "/", .title = "u"};
        int ok = bt_store_open(f->dir, &s2, NULL) == 0 &&
                 bt_store_conversation_create(s2, &cn, conv) == 0;
        struct bt_store_run_new rn = {.conversation = conv, .coder = "codex"};
        ok = ok && bt_store_run_create(s2, &rn, run, NULL) == 0;
        bt_store_close(s2);
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(bt_store_dead_runs(f->s, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].owner_pid, pid);
    assert_string_not_equal(v[0].id, f->run);
    bt_store_run_list_free(v, n);
}

/* A run file of two codex lines: the replay gives what is stored, so a
 * run whose owner is gone is left to be marked interrupted; one whose
 * coder started and whose file is missing says so; one whose coder never
 * started (its worker died waiting for a turn slot) has no file to miss. */
static void test_nothing_to_rebuild(void **state)
{
    struct fixture *f = *state;
    struct bt_store_run r;
    assert_int_equal(bt_store_run_get(f->s, f->run, &r), 0);
    struct bt_rebuild_report rep;
    assert_int_equal(bt_rebuild_run(f->s, &(struct bt_rebuild){.run = &r}, &rep), 0);
    assert_false(rep.rebuilt);
    assert_null(rep.problem);
    bt_rebuild_report_release(&rep);
    r.pgid = getpid(); /* as bt_store_run_started records it */
    assert_int_equal(bt_rebuild_run(f->s, &(struct bt_rebuild){.run = &r}, &rep), 0);
    assert_false(rep.rebuilt);
    assert_non_null(rep.problem);
    assert_non_null(strstr(rep.problem, "cannot be read"));
    bt_rebuild_report_release(&rep);
    r.pgid = 0;
    char *path = bt_store_run_file(f->s, f->run, ".out" BT_RUNFILE_SUFFIX);
    struct bt_runfile *rf;
    assert_int_equal(bt_runfile_create(path, UINT64_MAX, &rf), 0);
    assert_int_equal(bt_runfile_close(rf), 0); /* empty: the coder wrote nothing */
    /* the store has turn.started, which is what the replay gives */
    const char *started = "{\"type\":\"turn.started\"}";
    struct bt_store_event ev = event(f->run, 1, "turn.started", started);
    assert_int_equal(bt_store_event_append(f->s, &ev), 0);
    assert_int_equal(bt_store_flush(f->s), 0);
    assert_int_equal(bt_rebuild_run(f->s, &(struct bt_rebuild){.run = &r}, &rep), 0);
    assert_false(rep.rebuilt);
    assert_null(rep.problem);
    bt_rebuild_report_release(&rep);
    assert_int_equal(count(f), 1);
    /* an owner whose writes failed rebuilds all the same: its end */
    struct bt_turn_result end = {.status = BT_TURN_COMPLETED, .final_text = "x"};
    assert_int_equal(
        bt_rebuild_run(f->s, &(struct bt_rebuild){.run = &r, .end = &end, .always = 1}, &rep), 0);
    assert_true(rep.rebuilt);
    assert_int_equal(rep.kept, 1);
    assert_int_equal(rep.added, 2); /* the warning, turn.completed */
    bt_rebuild_report_release(&rep);
    bt_store_run_release(&r);
    free(path);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_rebuild_once),
        T(test_dead_runs),
        T(test_nothing_to_rebuild),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
