/* SPDX-License-Identifier: MIT */
/*
 * harness: what the integration tests share: a temporary directory and
 * BATON_HOME per test, the fake coder as codex, and running the baton
 * binary with an environment of the test's own.
 */
#ifndef BT_TEST_HARNESS_H
#define BT_TEST_HARNESS_H

#include "support.h"

#define BATON BT_BINARY_DIR "/baton"
#define FAKE BT_BINARY_DIR "/tests/fake-coder/fake-coder"
#define FIXTURES BT_SOURCE_DIR "/fixtures/codex/0.171.0"
#define END ((const char *)NULL) /* ends baton()'s argument list */

struct ctx {
    char *dir;     /* the test's directory (removed at teardown) */
    char *env[32]; /* the environment of every baton run */
    int nenv;
};

/* cmocka setup/teardown: a ctx with BATON_HOME=<dir>/home, the fake coder
 * as codex and NO_COLOR. */
int setup(void **state);
int teardown(void **state);

/* Set "KEY=value" in the environment (replacing an earlier KEY). */
void setenv_kv(struct ctx *c, const char *kv);
/* Make the fake coder replay fixtures/codex/0.171.0/<fixture>.jsonl. */
void replay(struct ctx *c, const char *fixture);
/* Make the fake coder replay the file at path, and log what baton writes
 * to it in <dir>/stdin.log (FAKE_CODER_LOG_STDIN). */
void replay_logged(struct ctx *c, const char *path);
/* Hold every later turn of the fake coder after its first `after` lines
 * until release_turns(): a command that must act while a turn runs waits
 * for the turn's state, never for a fixed delay (under memcheck one baton
 * command takes over a second). Once released, later turns run through. */
void hold_turns(struct ctx *c, int after);
void release_turns(struct ctx *c);
/* <dir>/<name>; caller frees. */
char *path_in(struct ctx *c, const char *name);
/* Run baton with args (NULL-terminated, END), input on stdin, SIGINT after
 * sigint_ms if not 0; asserts it ran and did not time out (60 s). */
void baton(struct ctx *c, struct bt_test_result *res, const char *input, int sigint_ms,
           const char *first, ...);
/* Run another program (argv[0] looked up on PATH; a pipeline through
 * bash, a pty through script) with the test's environment, in its
 * directory; asserts it ran and did not time out (60 s). */
void run_in(struct ctx *c, const char *const *argv, struct bt_test_result *res);
/* Start baton with args (END-terminated) in the background, stdout to
 * <dir>/<out> and stderr to <dir>/<err> (NULL: the test's); returns its
 * pid. */
pid_t baton_bg_err(struct ctx *c, const char *out, const char *err, const char *first, ...);
#define baton_bg(c, out, ...) baton_bg_err((c), (out), NULL, __VA_ARGS__)
/* Wait for pid; its exit code, or 128 + the signal that ended it. */
int wait_exit(pid_t pid);
/* The conversation id of a --json stream (its first event). Caller frees. */
char *conversation_of(const char *out);

#endif
