/* SPDX-License-Identifier: MIT */
/*
 * rm-util: what the `baton rm` tests share (test-rm.c, test-rm-acp.c):
 * the coders' directories of the test, files and conversations planted as
 * a coder's run would leave them, and `baton rm` that must succeed.
 */
#ifndef BT_TEST_RM_UTIL_H
#define BT_TEST_RM_UTIL_H

#include "harness.h"
#include "id.h"

/* The coders' directories of this test, whatever the caller's are:
 * TMUX_TMPDIR, HOME and CODEX_HOME, PI_CODING_AGENT_DIR, CLAUDE_CONFIG_DIR,
 * GEMINI_CLI_HOME, COPILOT_HOME under the test's directory. */
void rm_coder_env(struct ctx *c);
/* cmocka setup: setup() and rm_coder_env. */
int rm_setup(void **state);

/* 1 if path exists (lstat: a dangling link counts). */
int file_exists(const char *path);
/* Write text to path (created or truncated). */
void write_file(const char *path, const char *text);
/* mkdir -p */
void make_dirs(const char *path);
/* Fail unless part is in text, printing text. */
void assert_has(const char *text, const char *part);

/* A conversation of coder with the native session given, made through the
 * store (as a run of the coder would leave it), handed off if transferred;
 * its id in id. */
void planted_as(struct ctx *c, const char *coder, const char *sid, const char *path,
                int transferred, char id[BT_ID_SIZE]);
void planted(struct ctx *c, const char *coder, const char *sid, const char *path,
             char id[BT_ID_SIZE]);
/* 1 if conversation id is still in the store. */
int conversation_exists(struct ctx *c, const char *id);
/* `baton rm id` with stdin not a terminal: exit 0, the conversation gone,
 * the output in res (caller releases). */
void rm_ok(struct ctx *c, const char *id, struct bt_test_result *res);
/* baton args (NULL-terminated) with the variables named in unset (NULL-
 * terminated) removed from the environment (env -u). */
void baton_without(struct ctx *c, struct bt_test_result *res, const char *const *unset,
                   const char *const *args);
/* Run baton args... (END-terminated) on a new pseudo-terminal (its stdin,
 * stdout and stderr), typing answer once the question "[y/N] " shows
 * (NULL: type nothing). *out gets all the terminal showed (caller frees).
 * Returns the exit code. A baton that never ends is killed after 30 s and
 * fails the test. */
int baton_pty(struct ctx *c, const char *answer, char **out, const char *first, ...);

#endif
