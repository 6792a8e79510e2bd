/* SPDX-License-Identifier: MIT */
/*
 * coder: the registry of coders baton can drive (one runner + one parser
 * each), and finding a coder's executable and version on this machine.
 *
 * Every coder is one `const struct bt_coder bt_coder_<name>`, defined in
 * its own files (runners/runner-<name>.c) and listed by one BT_CODER(<name>)
 * line of src/coders.def: coder.c expands that list into bt_coders[], and
 * the build reads it for each coder's tests (docs/architecture.md, "Adding
 * a coder"). coder.c: the list and the lookup; coder-exe.c: executables,
 * launchers, environment and version probe.
 */
#ifndef BT_CODER_H
#define BT_CODER_H

#include <stdatomic.h>
#include <stdint.h>

#include "parser.h"
#include "runner.h"

struct bt_coder {
    const char *name;                   /* "codex": -c, the store, the fixtures' directory */
    const struct bt_runner_ops *runner; /* the write side (runner.h) */
    const struct bt_parser_ops *parser; /* the read side (parser.h) */
    /* The environment variables of the coder's own that baton's behaviour
     * depends on (where its sessions are), as NULL-terminated pairs of
     * name and sentence for baton(1)'s ENVIRONMENT; NULL: none. The
     * runner's bin_env is listed without being named here. */
    const char *const *env_doc;
};

/* NULL-terminated table of every coder, in coders.def order (display
 * order); bt_coders[0] is the default coder. */
extern const struct bt_coder *const bt_coders[];

/* Look a coder up by name; NULL if unknown. */
const struct bt_coder *bt_coder_find(const char *name);

/* The versions of coder c baton was tested with: the names of the
 * directories under fixtures/<name>/ when baton was built (each holds that
 * version's recordings, replayed by the golden tests), in version order.
 * A static NULL-terminated list, empty (never NULL) for a coder without
 * fixtures. */
const char *const *bt_coder_tested_versions(const struct bt_coder *c);

/* 1 if c can steer a running turn (its runner has the steer op: codex,
 * pi, claude; ACP v1 agents cannot), as `baton coders --json` says. */
int bt_coder_steers(const struct bt_coder *c);

/* 1 if version (as the runner's parse_version gives it) is one of
 * bt_coder_tested_versions(c), else 0 (also for a NULL version). */
int bt_coder_tested(const struct bt_coder *c, const char *version);

/* One row of the generated table behind bt_coder_tested_versions
 * (build/generated/coder-tested.c, made by CMake from fixtures/); the last
 * row is {NULL, NULL}. */
struct bt_coder_tested_row {
    const char *coder;           /* a coder's name */
    const char *const *versions; /* NULL-terminated */
};
extern const struct bt_coder_tested_row bt_coder_tested_rows[];

/* --- coder-exe.c ------------------------------------------------------ */

/* Where the coder's executable is: the runner's override variable
 * (e.g. BATON_CODEX_BIN) if set, else the first match of bin_name on PATH.
 * Returns an owned absolute path, or NULL when not installed. */
char *bt_coder_locate(const struct bt_coder *c);

/* Why bt_coder_locate found nothing, as one sentence for the user (owned):
 * the override variable's bad value when it is set, else how to install. */
char *bt_coder_not_found(const struct bt_coder *c);

/* The refusal of a turn for that (owned): bt_coder_not_found, then the
 * coders that are installed ("...; installed: codex, pi"), or "...; no
 * coder is installed". */
char *bt_coder_not_installed(const struct bt_coder *c);

/* The coders' names in bt_coders order, separated by ", ": every one
 * (installed 0), or those bt_coder_locate finds (installed 1, one PATH
 * look-up each); "" when none. Owned. */
char *bt_coder_names(int installed);

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
 * BT_ENOTINSTALLED with *exe empty (nothing to release; releasing it is
 * harmless). */
int bt_coder_resolve(const struct bt_coder *c, struct bt_coder_exe *exe);
void bt_coder_exe_release(struct bt_coder_exe *exe);

/* env (NULL-terminated) with exe's changes applied and extra ("K=V", may be
 * NULL) set last: the coder's environment, in out (initialised here). */
void bt_coder_env(const struct bt_coder_exe *exe, char *const *env, const char *extra,
                  struct bt_strv *out);

#define BT_CODER_PROBE_MS 10000    /* bound of a `--version` probe */
#define BT_CODER_COMMAND_MS 120000 /* bound of a coder's own command run by baton (rm) */
#define BT_CODER_COMMAND_OUTPUT ((size_t)16 * 1024) /* bytes of its output kept */
#define BT_CODER_STOP_LOOK_MS 100 /* how often a command's stop flag is looked at */

/* A command of the coder's own that baton runs to its end: the version
 * probe, `opencode session delete ID` for rm (runner.h,
 * delete_session_argv), a model listing (bt_coder_models). No shell;
 * stdin /dev/null unless it is given input; its own process group
 * (proc.h). */
struct bt_coder_command {
    const char *path;  /* the executable: an absolute path */
    char *const *argv; /* NULL-terminated; argv[0] the program's name */
    char *const *env;  /* NULL-terminated "K=V"; NULL: this process's */
    const char *cwd;   /* working directory; NULL: baton's own */
    uint64_t bound_ms; /* stopped (SIGTERM, SIGKILL 500 ms later) after this long */
    size_t out_max;    /* bytes of stdout and stderr kept, as they came */
    /* Optional: written to its stdin, which then stays open (a
     * conversation, not a file) until on_stdout has all it wants. */
    const char *input;
    /* Optional: stdout as it is read, instead of keeping it in out (which
     * then gets stderr only); may append what to write next to more.
     * Returns 1 once it has all it wants: stdin is closed and the command
     * stopped if it has not ended a second later. */
    int (*on_stdout)(void *data, const char *buf, size_t n, struct bt_buf *more);
    void *data;
    /* Optional: set, from another thread, when the command must stop
     * (looked at every BT_CODER_STOP_LOOK_MS). */
    const atomic_int *stop;
};

/* Run cmd to its end, appending the first cmd->out_max bytes of its
 * stdout and stderr (interleaved as read) to out. Returns 0 with *status
 * its exit status, or 128 + the signal that ended it (also when it was
 * stopped once on_stdout had all it wanted); -ETIMEDOUT when it was
 * stopped at its bound (*status and out as it ended); -ECANCELED when
 * *cmd->stop was set (it was stopped); -EINTR when
 * SIGINT, SIGTERM or SIGHUP came meanwhile (its process group is stopped);
 * or a negative error when it could not start (-ENOENT: no such
 * executable or working directory), *status -1. Blocks. */
int bt_coder_run(const struct bt_coder_command *cmd, struct bt_buf *out, int *status);

/* Run `<path> --version` (BT_CODER_PROBE_MS bound, no shell) and parse it
 * with the runner. Returns 0 and an owned *version; BT_EPROTO when the
 * output is not understood (or the probe was stopped at its bound); -EINTR
 * when SIGINT, SIGTERM or SIGHUP came meanwhile (the probe's process group
 * is stopped); or a negative error when it could not run. */
int bt_coder_version(const struct bt_coder *c, const char *path, char **version);

/* --- coder-models.c ---------------------------------------------------- */

#define BT_CODER_MODELS_MS 20000 /* bound of a model listing */

/* The models coder c lists through its machine interface (the runner's
 * models_* ops), run as a short-lived process of the installed coder in
 * cwd (NULL: baton's own) with this process's environment (and its
 * launcher's changes), stopped once it has answered, at
 * BT_CODER_MODELS_MS, or when *stop (may be NULL) is set. Returns 0 with
 * *m filled (release with bt_runner_models_release; it may hold no
 * model); -ENOTSUP when the coder cannot list its models;
 * BT_ENOTINSTALLED; BT_EPROTO when the coder answered with an error or
 * ended before it answered, -ETIMEDOUT, -ECANCELED, -EINTR (a stop
 * signal) or another negative error of bt_coder_run: *why (owned) then
 * says what happened, with the coder's own words where it gave any. */
int bt_coder_models(const struct bt_coder *c, const char *cwd, const atomic_int *stop,
                    struct bt_runner_models *m, char **why);

#endif
