/* SPDX-License-Identifier: MIT */
/*
 * service-conv: the operations on a conversation that start no turn of
 * their own, one function each for every front end (the CLI's cmd-*.c,
 * `baton serve`'s routes, `baton acp`): cancel its running turn, take back
 * a queued message, remove it, hand it off to its coder's terminal UI,
 * recover the runs whose owner died, and start a detached worker for its
 * turns. Each returns what it did, or why not as a sentence, in a struct;
 * none prints or exits (the front ends say it their way: a line on
 * stderr and an exit code, a status and a JSON error).
 *
 *   service-create.c    bt_service_create
 *   service-cancel.c    bt_service_cancel, bt_service_cancel_wait, bt_service_unqueue
 *   service-recover.c   bt_service_recover
 *   service-worker.c    bt_service_worker_*, bt_service_take_back, bt_service_approval_*
 *   service-rm.c        bt_service_rm_plan, bt_service_rm
 *   service-handoff.c   bt_service_handoff_*
 *
 * A call that runs a process (rm's coder command, tmux) blocks until it
 * ends, bounded (BT_CODER_COMMAND_MS, tmux's own); a front end on an event
 * loop runs it on a thread of its own with a store handle of its own
 * (serve-task.c).
 */
#ifndef BT_SERVICE_CONV_H
#define BT_SERVICE_CONV_H

#include <stdint.h>

#include "service.h"

/* The default idle timeout of a turn (the CLI's --idle-timeout, the API's
 * idle_timeout): a coder silent this long is stalled. */
#define BT_SERVICE_IDLE_TIMEOUT_MS 600000

/* --- service-cancel.c ------------------------------------------------ */

/* Ask the running turn of conv (full id) to stop: the request is stored
 * (bt_store_run_cancel), and the run's owner stops its coder the normal
 * way. No signal goes to a pid read from the store. Returns 0 with
 * out->run the run asked (result OK); BT_ENOTFOUND when no turn of conv
 * runs (USAGE, "no turn of CONV is running: nothing to cancel"); another
 * error when the store failed (FAILED). out->message is set unless 0;
 * free it. */
int bt_service_cancel(struct bt_store *s, const char *conv, struct bt_service_outcome *out);

/* Told one line (no "baton: ", no newline) of what recovery did. */
typedef void (*bt_service_say_fn)(void *data, const char *line);

/* Wait at most ms for run to end, recovering a dead owner now and then
 * (bt_service_recover, which says through say): its final state, or
 * RUNNING when it still runs. Blocks: for the CLI. */
enum bt_store_run_state bt_service_cancel_wait(struct bt_store *s, const char *run, unsigned ms,
                                               bt_service_say_fn say, void *data);

/* Take back conv's queued message with queue number n (store.h "Queue
 * numbers") before a turn sends it. 0 (OK); BT_ENOTFOUND when conv never
 * had #n, -EALREADY when #n was sent already (USAGE, the message says
 * what is queued or which run took it); another error (FAILED). */
int bt_service_unqueue(struct bt_store *s, const char *conv, int64_t n,
                       struct bt_service_outcome *out);

/* --- service-create.c ------------------------------------------------ */

/* Store a conversation before its first turn (an ACP session's, whose id
 * was handed out beforehand), once its coder is known and installed.
 * Returns 0 with out->conversation; -EINVAL for an unknown coder (USAGE),
 * BT_ENOTINSTALLED (NOT_INSTALLED), or the store's error (FAILED), each
 * with out->message. */
int bt_service_create(struct bt_store *s, const struct bt_store_conversation_new *c,
                      struct bt_service_outcome *out);

/* --- service-recover.c ----------------------------------------------- */

/* Recover the runs whose owner died: rebuild from its raw output a run
 * whose store record lacks what the raw output holds (rebuild.h), mark the
 * others interrupted (cancelled if a cancel was asked for), and stop their
 * process groups when still alive and still theirs; then the control
 * requests such runs left (bt_service_control_strand). What it rebuilt, or
 * could not do, is said through say (NULL: nothing said). Returns the
 * number of runs recovered (0: none died), or the store's error (a store
 * that cannot be written: the runs stay as they are). */
int bt_service_recover(struct bt_store *s, bt_service_say_fn say, void *data);

/* Open the store at $BATON_HOME (or its default) and recover the runs
 * whose owner died (bt_service_recover, saying through say). 0 with *s;
 * or a negative error with out->result (USAGE: BATON_HOME is not an
 * absolute path; FAILED) and out->message. */
int bt_service_open(struct bt_store **s, bt_service_say_fn say, void *data,
                    struct bt_service_outcome *out);

/* --- service-worker.c ------------------------------------------------ */

/* Seconds as a decimal number (digits, at most one fraction: no sign,
 * space, hex or exponent) into *ms, 0 meaning "no limit"; anything else
 * below a millisecond becomes one, so a tiny limit never turns into none.
 * 0, or -1 for what is not such a number (or over 10^7 s). */
int bt_service_seconds_parse(const char *s, uint64_t *ms);

/* deny (or decline), auto, never, ask into *a: 0, or -1 for another word. */
int bt_service_approval_parse(const char *s, enum bt_approval *a);
/* The word of a: "deny", "auto", "never", "ask". */
const char *bt_service_approval_name(enum bt_approval a);

/* The program workers are started as (an absolute path to baton, kept by
 * the caller); without a call, this program itself (/proc/self/exe).
 * baton-serve sets the baton beside it. */
void bt_service_worker_exe(const char *path);

/* Start `baton __worker MODE ... -- CONV` (MODE "flush" or "retry")
 * detached, in a session of its own, with t's approval, timeouts, retry,
 * snapshot and force settings; its stderr is appended to
 * $BATON_HOME/worker.log. With notify_fd, *notify_fd is the read end of
 * the pipe the worker reports on (one line: bt_service_worker_line).
 * Returns 0 or a negative error. */
int bt_service_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
                            int *notify_fd);

/* Read a worker's report line (cmd-worker.c writes it): "run CONV RUN"
 * gives OK with out->run; "end 0 MESSAGE" OK with no run (another turn
 * took the queue meanwhile); "end CODE MESSAGE" (CODE the worker's exit
 * code: 2 usage, 3 not installed, 4 auth, 130 cancelled, else failed) the
 * result it means, the message in out->message (auth: FAILED with
 * error_kind AUTH_REQUIRED); anything else FAILED ("the worker ended
 * before it started the turn"). 0 when a run started or nothing was to
 * start, else -1. Free out->message. */
int bt_service_worker_line(const char *line, struct bt_service_outcome *out);

/* No turn started for the prompt stored queued as message msg of conv
 * (a worker that could not start it, an editor's cancel): take it back
 * (msg <= 0: none). With created, the conversation made for that prompt
 * goes too when no run of it exists, so nothing is stored half. 0 when
 * the prompt was taken back; -EALREADY when a turn took it meanwhile (it
 * goes with that turn); BT_ENOTFOUND; or the store's error. */
int bt_service_take_back(struct bt_store *s, const char *conv, int64_t msg, int created);

/* Wait (at most 60 s) for the report on fd, which is closed; as
 * bt_service_worker_line. Blocks: for the CLI. */
int bt_service_worker_report(int fd, struct bt_service_outcome *out);

/* --- service-handoff.c ----------------------------------------------- */

enum { BT_SERVICE_TMUX_NAME = 32 }; /* bytes of a tmux session name, NUL included */

/* The tmux session name of conversation conv: "baton-<first 12 of its id>". */
void bt_service_tmux_name(const char *conv, char name[BT_SERVICE_TMUX_NAME]);

/* Set name as bt_service_tmux_name and ask tmux (`tmux has-session`, on
 * the server this environment names) whether that session exists.
 * Returns 1 if it does, 0 if not (or tmux could not tell), -ENOENT when
 * tmux is not installed. Runs a process; blocks until it ends. */
int bt_service_tmux_running(const char *conv, char name[BT_SERVICE_TMUX_NAME]);

enum bt_service_handoff_how {
    BT_SERVICE_HANDOFF_PRINT, /* check only: the command for the user to run */
    BT_SERVICE_HANDOFF_TMUX,  /* mark, then start it in a detached tmux session */
    BT_SERVICE_HANDOFF_EXEC,  /* the caller checks its terminal, marks
                                 (bt_service_handoff_mark) and replaces
                                 itself with argv in conv.cwd */
};

struct bt_service_handoff {
    enum bt_service_result result;        /* OK; USAGE (refused); NOT_INSTALLED; FAILED */
    char *message;                        /* why not OK (owned), else NULL */
    struct bt_store_conversation conv;    /* the conversation (owned) */
    struct bt_strv argv;                  /* the coder's TUI, argv[0] its absolute path */
    char *command;                        /* `cd DIR && CMD ARGS...`, shell-quoted (owned) */
    char tmux_name[BT_SERVICE_TMUX_NAME]; /* baton-<short id> */
};

/* Hand conversation conv (full id) to its coder's own terminal UI on the
 * same native session (the runner's handoff_argv: `codex resume ID`, `pi
 * --session FILE`) in its directory. Every way refuses (USAGE) while a
 * turn runs, messages wait queued, or the conversation's tmux session
 * still runs (tmux not installed: FAILED for TMUX); PRINT then checks and
 * marks nothing; TMUX marks the conversation transferred
 * (store-handoff.c) and starts the session (taking the mark back when
 * tmux fails); EXEC only finds the command. Returns 0 or a negative error
 * with out->result and out->message. Runs tmux: blocks until it ends.
 * Release out with bt_service_handoff_release whatever it returns. */
int bt_service_handoff(struct bt_store *s, const char *conv, enum bt_service_handoff_how how,
                       struct bt_service_handoff *out);
/* Mark h's conversation transferred, refused as bt_service_handoff says. */
int bt_service_handoff_mark(struct bt_store *s, struct bt_service_handoff *h);
/* EXEC could not start the coder: the conversation is no longer transferred. */
void bt_service_handoff_undo(struct bt_store *s, const struct bt_service_handoff *h);
void bt_service_handoff_release(struct bt_service_handoff *h);

/* --- service-rm.c ---------------------------------------------------- */

/* One line of what rm did or keeps, for people. */
struct bt_service_rm_line {
    char *text; /* owned; may hold a user's path: show it made safe */
    int error;  /* 1: a removal that was due failed (stderr) */
};

/* What rm is about to do, found before anything is removed. */
struct bt_service_rm {
    enum bt_service_result result;        /* OK; USAGE (refused); CANCELLED; FAILED */
    char *message;                        /* why not OK (owned), else NULL */
    struct bt_store_removal r;            /* the conversation and its counts */
    char *root;                           /* the coder's session directory, or NULL */
    struct bt_strv files;                 /* the coder's files to remove (checked) */
    struct bt_strv notes;                 /* what is kept, and why: one line each */
    struct bt_strv cmd;                   /* the coder's command deleting the session */
    struct bt_strv cmd_env;               /* its environment */
    char *cmd_text;                       /* the command as said: "opencode session delete ID" */
    const char *cmd_cwd;                  /* where it runs: the conversation's directory, or NULL */
    char tmux_name[BT_SERVICE_TMUX_NAME]; /* the conversation's handoff session */
    int tmux;                             /* 1 if that tmux session still runs */
    int force;                            /* the worktree goes with its work */
    struct bt_service_rm_line *lines;     /* bt_service_rm: what it did, in order */
    size_t n_lines;
};

/* Plan the removal of conversation conv (full id; typed: what the user
 * typed, for a message): its messages, runs and events in one transaction,
 * its run files, its snapshots, its worktree (only with force when it
 * holds work), then the files of the coder's native session, or the
 * coder's own delete command. The coder's files are the coder's: a file
 * goes only when the runner finds it for the session and
 * bt_runner_session_file proves it inside the coder's session directory;
 * the session is kept when the conversation was handed off, or its
 * handoff tmux session still runs. Refused (USAGE) while a turn runs, or
 * when the worktree holds work and !force. Returns 0 or a negative error
 * with out->result and out->message. Release with bt_service_rm_release
 * whatever it returns. */
int bt_service_rm_plan(struct bt_store *s, const char *conv, const char *typed, int force,
                       struct bt_service_rm *out);

/* Do what p planned; what was done in p->lines. Returns 0 (result OK:
 * kept files are no failure), or a negative error with p->result FAILED
 * (a due removal failed), USAGE (a turn started since the plan) or
 * CANCELLED (a signal stopped the coder's command), p->message set. */
int bt_service_rm(struct bt_store *s, struct bt_service_rm *p);
void bt_service_rm_release(struct bt_service_rm *p);

#endif
