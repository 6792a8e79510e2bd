/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of turn slots (src/slot.c): the limit's parsing and default;
 * a slot held by another process is not taken (the look gives up when
 * asked to stop), then taken once that process let go, and once it died;
 * a waiter behind a live earlier one waits even with a slot free (first
 * come, first served), and a stale entry of a dead waiter does not hold it
 * up and is removed; bt_slot_waiting sees a waiter and only a live one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slot.h"
#include "unit-fs.h"
#include "util.h"

static char home[512];

static int setup(void **state)
{
    (void)state;
    snprintf(home, sizeof home, "%s/bt-slot-XXXXXX", BT_BINARY_DIR);
    return mkdtemp(home) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    bt_unit_rm_rf(home);
    return 0;
}

/* stop() after *data looks. */
static int stop_after(void *data)
{
    int *left = data;
    return (*left)-- <= 0;
}

static void test_parse_and_limit(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(bt_slot_parse("1", &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(bt_slot_parse("4096", &n), 0);
    assert_int_equal(n, 4096);
    const char *bad[] = {"0", "4097", "-1", "+2", " 2", "2x", "", "x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(bt_slot_parse(bad[i], &n), -EINVAL);
    int def = bt_slot_default();
    assert_in_range(def, 2, BT_SLOT_MAX);
    const char *said = NULL;
    setenv("BATON_MAX_TURNS", "3", 1);
    assert_int_equal(bt_slot_limit(&said), 3);
    assert_null(said);
    setenv("BATON_MAX_TURNS", "three", 1);
    assert_int_equal(bt_slot_limit(&said), def);
    assert_string_equal(said, "three");
    unsetenv("BATON_MAX_TURNS");
    assert_int_equal(bt_slot_limit(&said), def);
    assert_null(said);
}

/* A child that takes the one slot, says so on a pipe, and holds it until
 * its stdin-like pipe closes (or it is killed). */
static pid_t holder(int *told, int *release)
{
    int up[2], down[2];
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        struct bt_slot s = BT_SLOT_INIT;
        int rc = bt_slot_take(home, "runholder", 1, NULL, NULL, NULL, &s);
        char c = rc == 0 ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1)
            _exit(2);
        while (read(down[0], &c, 1) > 0)
            ;
        bt_slot_release(&s);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    char c = 0;
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    *told = up[0];
    *release = down[1];
    return pid;
}

static void test_held_elsewhere_then_free(void **state)
{
    (void)state;
    int told, release, status;
    pid_t pid = holder(&told, &release);
    struct bt_slot s = BT_SLOT_INIT;
    int looks = 3;
    assert_int_equal(bt_slot_take(home, "runwaiter", 1, stop_after, NULL, &looks, &s), 1);
    assert_int_equal(s.fd, -1);
    close(release); /* the holder lets go */
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(told);
    looks = 50;
    assert_int_equal(bt_slot_take(home, "runwaiter", 1, stop_after, NULL, &looks, &s), 0);
    assert_true(s.fd >= 0);
    bt_slot_release(&s);
    assert_int_equal(s.fd, -1);

    /* a holder that dies frees its slot: no cleanup needed */
    pid = holder(&told, &release);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(told);
    close(release);
    looks = 50;
    assert_int_equal(bt_slot_take(home, "runafter", 1, stop_after, NULL, &looks, &s), 0);
    bt_slot_release(&s);
}

/* An entry of wait/, locked by a child (live) or by no one (stale). */
static pid_t waiter_entry(const char *name, int live)
{
    char *dir = bt_xasprintf("%s/%s", home, BT_SLOT_DIR);
    char *wait = bt_xasprintf("%s/wait", dir);
    mkdir(dir, 0700);
    mkdir(wait, 0700);
    char *path = bt_xasprintf("%s/%s", wait, name);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    assert_true(fd >= 0);
    pid_t pid = 0;
    if (live) {
        int up[2];
        assert_int_equal(pipe(up), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(up[0]);
            if (flock(fd, LOCK_EX) != 0 || write(up[1], "y", 1) != 1)
                _exit(2);
            pause();
            _exit(0);
        }
        close(up[1]);
        char c;
        assert_int_equal(read(up[0], &c, 1), 1);
        close(up[0]);
    }
    close(fd);
    free(path);
    free(wait);
    free(dir);
    return pid;
}

static void test_first_come_first_served(void **state)
{
    (void)state;
    /* a live waiter that came first: ours waits though the slot is free */
    pid_t first = waiter_entry("00000000000000000001-1-runfirst", 1);
    assert_int_equal(bt_slot_waiting(home, "runfirst"), 1);
    assert_int_equal(bt_slot_waiting(home, "runother"), 0);
    struct bt_slot s = BT_SLOT_INIT;
    int looks = 3;
    assert_int_equal(bt_slot_take(home, "runsecond", 1, stop_after, NULL, &looks, &s), 1);
    kill(first, SIGKILL); /* it died: its entry is stale */
    int status;
    assert_int_equal(waitpid(first, &status, 0), first);
    assert_int_equal(bt_slot_waiting(home, "runfirst"), 0);
    /* a stale entry holds no one up, and is removed on the way */
    waiter_entry("00000000000000000002-2-runstale", 0);
    looks = 50;
    assert_int_equal(bt_slot_take(home, "runsecond", 1, stop_after, NULL, &looks, &s), 0);
    bt_slot_release(&s);
    char *stale = bt_xasprintf("%s/%s/wait/00000000000000000002-2-runstale", home, BT_SLOT_DIR);
    char *dead = bt_xasprintf("%s/%s/wait/00000000000000000001-1-runfirst", home, BT_SLOT_DIR);
    assert_int_equal(access(stale, F_OK), -1);
    assert_int_equal(access(dead, F_OK), -1);
    free(stale);
    free(dead);
    /* and our own entry went with the slot */
    assert_int_equal(bt_slot_waiting(home, "runsecond"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_limit),
        cmocka_unit_test_setup_teardown(test_held_elsewhere_then_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_come_first_served, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
