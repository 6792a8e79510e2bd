/* SPDX-License-Identifier: MIT */
/*
 * support: helpers for integration and live tests: run a program (the
 * baton binary) with extra environment, feed stdin, capture stdout and
 * stderr, bound its time; read JSON lines; make scratch directories.
 */
#ifndef BT_TEST_SUPPORT_H
#define BT_TEST_SUPPORT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct bt_test_run {
    const char *const *argv;  /* NULL-terminated; argv[0] is the path */
    const char *const *env;   /* "K=V" added to (or replacing in) environ */
    const char *cwd;          /* NULL: the test's own */
    const char *input;        /* stdin text; NULL: /dev/null */
    int timeout_s;            /* SIGKILL the group after this; 0 = 120 */
    int send_sigint_after_ms; /* > 0: a signal to the child after this */
    int signal;               /* which one: 0 means SIGINT */
};

struct bt_test_result {
    int exit_code;     /* exit status, or 128+signal */
    int timed_out;     /* 1 if the timeout killed it */
    struct bt_buf out; /* stdout */
    struct bt_buf err; /* stderr */
};

/* Run and wait. Returns 0, or -1 if it could not start. Release with
 * bt_test_result_release.
 *
 * BATON_TEST_WRAPPER: when this environment variable is set and argv[0]
 * ends in "/baton", bt_test_exec and bt_test_spawn_bg run the words of its
 * value (split on spaces and tabs, no quoting; the first is looked up in
 * PATH) in front of argv, e.g.
 *   BATON_TEST_WRAPPER="valgrind -q --error-exitcode=99 --trace-children=no"
 * runs each baton process under memcheck (tests/scripts/valgrind.sh). Other
 * programs (the fake coder, shell scripts, the stand-in) are never wrapped.
 * The pid, signals and the exit code are the wrapper's, which for valgrind
 * are baton's own. */
int bt_test_exec(const struct bt_test_run *r, struct bt_test_result *res);
void bt_test_result_release(struct bt_test_result *res);

/* Start a program in the background with stdout to a file; returns pid.
 * Wrapped like bt_test_exec. */
pid_t bt_test_spawn_bg(const char *const *argv, const char *const *env, const char *out_path);
/* The same with stderr to err_path too (NULL: inherited). */
pid_t bt_test_spawn_bg_err(const char *const *argv, const char *const *env, const char *out_path,
                           const char *err_path);

/* Parse every line of text as JSON; returns the count, fills *lines (array
 * of cJSON*, free with bt_test_lines_free). A line that does not parse is
 * stored as NULL. */
size_t bt_test_json_lines(const char *text, cJSON ***lines);
void bt_test_lines_free(cJSON **lines, size_t n);

/* Where a test makes its scratch directories: $BATON_CACHE/scratch when
 * BATON_CACHE is set (created; it must be absolute: the test aborts
 * otherwise), else build (the build tree, BT_BINARY_DIR). The same for
 * every call of a process; a static string. Set GIT_CEILING_DIRECTORIES to
 * it for a baton that must find no repository above the test's own. */
const char *bt_test_scratch_root(const char *build);

/* A fresh directory under base (mkdtemp of base/prefix-XXXXXX); caller
 * frees. Removed by bt_test_rmdir. */
char *bt_test_mkdtemp(const char *base, const char *prefix);
void bt_test_rmdir(const char *path);

/* Read a whole file; NULL if it cannot be read. Caller frees. */
char *bt_test_slurp(const char *path, size_t *len);

/* String member of a JSON object, or NULL. */
const char *bt_test_jstr(const cJSON *o, const char *key);

/* How long a test waits for what must happen (a process to start or end, a
 * line or a row to appear), in ms: ample for a baton under memcheck, 20 to
 * 50 times slower than natively (tests/scripts/valgrind.sh); a poll ends as
 * soon as its condition holds, so a passing test never waits it out. */
#define BT_TEST_WAIT_MS 60000
#define BT_TEST_POLL_MS 10 /* one step of a poll */

/* One step of a poll: for (int64_t t0 = 0; bt_test_poll(&t0);) { if (cond)
 * break; }. The first call starts the clock (*t0, 0 before) and returns 1
 * at once; later ones sleep BT_TEST_POLL_MS first. 0 once BT_TEST_WAIT_MS
 * have passed: check the condition again after the loop. */
int bt_test_poll(int64_t *t0);

/* Fail the running cmocka test with a printf-style message (the poll above
 * ran out, say). Declared _Noreturn, which cmocka's fail_msg is not: that
 * lets clang-tidy's analyzer see that code after it has what it waited for. */
_Noreturn void bt_test_give_up(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
