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

/* Why bt_coder_locate found nothing, as one sentence for the user (owned):
 * the override variable's bad value when it is set, else how to install. */
char *bt_coder_not_found(const struct bt_coder *c);

/* What baton runs for a coder: the located executable, or the program
 * behind it when it is a launcher the runner can see through
 * (resolve_launcher). */
struct bt_coder_exe {
    char *path;         /* what to run: an absolute realpath */
    char *launcher;     /* the launcher found in its place, NULL if none */
    struct bt_strv env; /* environment changes of the launcher ("K=V" sets,
                           "K" unsets); empty without a launcher */
};

/* Locate the coder (bt_coder_locate) and see through its launcher. Returns
 * 0 with *exe filled (release with bt_coder_exe_release), or
 * BT_ENOTINSTALLED with *exe empty. */
int bt_coder_resolve(const struct bt_coder *c, struct bt_coder_exe *exe);
void bt_coder_exe_release(struct bt_coder_exe *exe);

/* env (NULL-terminated) with exe's changes applied and extra ("K=V", may be
 * NULL) set last: the coder's environment, in out (initialised here). */
void bt_coder_env(const struct bt_coder_exe *exe, char *const *env, const char *extra,
                  struct bt_strv *out);

#define BT_CODER_PROBE_MS 10000 /* bound of a `--version` probe */

/* Run `<path> --version` (BT_CODER_PROBE_MS bound, no shell) and parse it
 * with the runner. Returns 0 and an owned *version; BT_EPROTO when the
 * output is not understood (or the probe was stopped at its bound); -EINTR
 * when SIGINT, SIGTERM or SIGHUP came meanwhile (the probe's process group
 * is stopped); or a negative error when it could not run. */
int bt_coder_version(const struct bt_coder *c, const char *path, char **version);

#endif
