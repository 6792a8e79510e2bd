/* SPDX-License-Identifier: MIT */
/*
 * coder: the table of coders baton can drive (one runner + one parser each),
 * and finding a coder's executable and version on this machine.
 */
#ifndef BT_CODER_H
#define BT_CODER_H

#include "parser.h"
#include "runner.h"

struct bt_coder {
    const char *name; /* "codex" */
    const struct bt_runner_ops *runner;
    const struct bt_parser_ops *parser;
};

/* NULL-terminated table of every coder, in display order. */
extern const struct bt_coder *const bt_coders[];

/* Look a coder up by name; NULL if unknown. */
const struct bt_coder *bt_coder_find(const char *name);

/* Where the coder's executable is: the runner's override variable
 * (e.g. BATON_CODEX_BIN) if set, else the first match of bin_name on PATH.
 * Returns an owned absolute path, or NULL when not installed. */
char *bt_coder_locate(const struct bt_coder *c);

/* Run `<path> --version` (10 s bound, no shell) and parse it with the
 * runner. Returns 0 and an owned *version, BT_EPROTO when the output is not
 * understood, or a negative error when it could not run. */
int bt_coder_version(const struct bt_coder *c, const char *path, char **version);

#endif
