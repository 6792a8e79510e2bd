/* SPDX-License-Identifier: MIT */
/*
 * live: the harness shared by the live tests of every coder: a stand-in
 * model endpoint on 127.0.0.1, the coder's offline environment made by its
 * tests/live/<coder>-env.sh, the real baton binary run in it, and the checks
 * every --json stream must pass.
 */
#ifndef BT_LIVE_H
#define BT_LIVE_H

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "support.h"

struct bt_live {
    char *dir;     /* scratch root: in BATON_LIVE_KEEP, else in the tests'
                      scratch root (support.h: $BATON_CACHE/scratch or the
                      build tree), /tmp included (codex-env.sh) */
    char *log;     /* the stand-in's request log */
    pid_t standin; /* the stand-in's pid */
    char *env[24]; /* the env script's lines, BATON_HOME, the coder bin, NO_COLOR,
                      TMUX_TMPDIR */
    char *work;    /* project directory for runs */
    char *other;   /* another directory, for `send` */
};

/* One live test program has one harness. */
extern struct bt_live bt_live;

/* Start the stand-in, run env_script (tests/live/<coder>-env.sh DIR PORT)
 * with DIR = <scratch>/<home>, and add BATON_HOME, bin_var=<bin> and
 * NO_COLOR. prefix names the scratch directory. With BATON_LIVE_KEEP=DIR
 * (absolute) in the environment the scratch directory is made in DIR and
 * kept by bt_live_teardown, which names it: its baton-home/runs/ holds the
 * coder's raw output of every run (tests/scripts/drift.sh reads it); the
 * tests and what they assert are the same. A set-up step that fails (no
 * port, the env script) stops the stand-in and removes the directory
 * before the test fails. */
void bt_live_setup(const char *prefix, const char *env_script, const char *home,
                   const char *bin_var, const char *bin);
void bt_live_teardown(void);

/* Run baton with args (NULL-terminated, without argv[0]) in cwd; a SIGINT
 * after sigint_ms when > 0. Prints baton's stderr for a failing exit. */
void bt_live_baton(const char *cwd, const char *const *args, struct bt_test_result *res,
                   int sigint_ms);

/* The invariants of every --json stream (only JSON lines, seq 1..n,
 * turn.started first, exactly one turn.completed last); returns the number
 * of events, *lines to free with bt_test_lines_free. */
size_t bt_live_stream(const char *out, cJSON ***lines);

const char *bt_live_type(const cJSON *ev);
const char *bt_live_item_kind(const cJSON *ev);
const char *bt_live_status(cJSON **lines, size_t n);
/* How many item.delta events of message items a stream holds. */
size_t bt_live_message_deltas(cJSON **lines, size_t n);
/* The first event of a type in a stream, or NULL. */
const cJSON *bt_live_first(cJSON **lines, size_t n, const char *type);
/* baton args in cwd (bt_live_baton), asserting its exit status; the
 * stream (bt_live_stream) in *lines, its length returned. */
size_t bt_live_json(const char *cwd, const char *const *args, int want_exit, cJSON ***lines);
/* `baton send --json conv text` from bt_live.other (another process,
 * another directory than the run's), asserting its exit status; the
 * stream (bt_live_stream) in *lines, its length returned. */
size_t bt_live_send(const char *conv, const char *text, int want_exit, cJSON ***lines);
/* 1 if dir/name exists, else 0. */
int bt_live_exists(const char *dir, const char *name);
/* The completed command item of a stream, or NULL. */
const cJSON *bt_live_command_item(cJSON **lines, size_t n);
/* The body of the last request the stand-in received; caller frees. */
char *bt_live_last_request(void);

/* tmux with args (NULL-terminated, without "tmux") on the harness's own tmux
 * server (TMUX_TMPDIR is the scratch directory, also in baton's env). */
void bt_live_tmux(const char *const *args, struct bt_test_result *res);
/* Poll session's screen (4 times a second, up to timeout_s) until it shows
 * every needle (NULL-terminated); returns the screen (caller frees), or
 * fails the test printing the last screen. */
char *bt_live_tmux_wait(const char *session, const char *const *needles, int timeout_s);
/* Type text into session, wait until it shows, then press Enter (typed
 * text and Enter in one send-keys read as a paste and do not submit). */
void bt_live_tmux_submit(const char *session, const char *text);
/* 1 once a request in the stand-in's log holds every needle (polls up to
 * timeout_s), else 0. */
int bt_live_request_with(const char *const *needles, int timeout_s);

/* The handoff acceptance, for any coder: two turns through baton (run with
 * run_opts, e.g. {"-c", "pi", NULL}), `baton handoff --tmux`, the coder's
 * terminal UI shows both earlier turns, then ready (strings on its screen
 * once it takes input); a message typed with send-keys reaches the stand-in
 * with the earlier turns in its history and is answered on screen; the
 * conversation reads transferred and `send` refuses (exit 2). */
void bt_live_handoff_scenario(const char *const *run_opts, const char *const *ready);

/* The coder pointed at a closed port on 127.0.0.1 (env_script makes its
 * home for that port) retries; `baton run --idle-timeout <idle_s>` with
 * run_opts says so while it waits (a `warning` of kind `retry` before the
 * end) and ends the turn failed, exit 1, network_error, the message naming
 * reason (the coder's own text) and the retrying. idle_s (whole seconds)
 * must outlast the coder's start-up, which counts as no progress too. */
void bt_live_unreachable_scenario(const char *env_script, const char *const *run_opts,
                                  const char *idle_s, const char *reason);

/* How many live processes were started by a baton of this harness: their
 * environment holds a run's tag (BATON_RUN=, which every coder process and
 * its children inherit) and this harness's BATON_HOME. Zombies (no
 * environment left) do not count. */
int bt_live_run_processes(void);

/* The interrupt acceptance, for any coder: `baton run --json` with run_opts
 * (e.g. {"-c", "pi", NULL}) and a [[slow]] prompt in the background; once a
 * text delta is out, SIGINT; baton exits 130 within 2 s, the turn reads
 * cancelled with its partial text kept, and no process of the run is left
 * (bt_live_run_processes, which must see the coder before the SIGINT).
 * Prints how long baton took. */
void bt_live_interrupt_scenario(const char *const *run_opts);

/* The worktree acceptance (live-git.c), for any coder that runs shell
 * commands: in a scratch git repository, `baton run --worktree` with
 * run_opts and a [[shell:...]] prompt that writes a two-line file: the
 * turn's changes name it (added, +2), the checkout is as it was; then the
 * same prompt fanned out with fan_opts (e.g. {"-c", "pi,pi", NULL}): two
 * conversations with the same changes; `keep --prune` of the first brings
 * the file into main and its checkout and removes both worktrees. */
void bt_live_worktree_scenario(const char *const *run_opts, const char *const *fan_opts);

#endif
