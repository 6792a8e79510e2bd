/* SPDX-License-Identifier: MIT */
/*
 * gitfix: what the integration tests of turn changes and worktrees share:
 * a scratch git repository and the fake coder behind a script that edits
 * files first, as a real coder would.
 */
#ifndef BT_TEST_GITFIX_H
#define BT_TEST_GITFIX_H

#include <cjson/cJSON.h>

#include "harness.h"

/* git with an identity and main as the first branch's name */
#define GIT "git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main"

/* Run a shell command in the test's directory, asserting exit 0; its
 * stdout (owned). */
char *sh(struct ctx *c, const char *cmd);

/* A repository p/ (a.txt, gone.txt, .gitignore of *.log committed; s.txt
 * staged) and codex = the fake coder run after edit.sh (edits()) in the
 * turn's directory. */
void repo_and_coder(struct ctx *c);

/* What the coder does to the files of its turn: a shell script. */
void edits(struct ctx *c, const char *what);

/* The last event of a --json stream, parsed into *last (asserted to be
 * turn.completed; free it); its changes member, or NULL. */
cJSON *changes_of(const char *out, cJSON **last);

/* v as compact JSON, "null" for NULL (owned). */
char *json_of(const cJSON *v);

#endif
