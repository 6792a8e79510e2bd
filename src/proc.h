/* SPDX-License-Identifier: MIT */
/*
 * proc: a coder's CLI as a child process group, on a libuv loop.
 *
 * The only module that touches processes. The child runs in its own process
 * group (UV_PROCESS_DETACHED makes it a session and group leader), with an
 * explicit argv (never a shell) and environment, stdin either a pipe or
 * /dev/null, and stdout/stderr pipes. No descriptor of baton's reaches the
 * child: libuv opens its fds close-on-exec and only fds 0-2 are mapped.
 *
 * Lifecycle:
 *   bt_proc_spawn -> on_stdout (raw bytes, any split) ... -> on_done (once)
 * on_done runs only after *all* of: the child exited (waitpid), EOF on stdout,
 * EOF on stderr, and every libuv handle of the proc closed. After on_done the
 * proc is inert; free it with bt_proc_free (also allowed inside on_done).
 *
 * Stop escalation (the protocol "ask" step is the caller's, before calling
 * bt_proc_stop): SIGTERM to the group after term_after_ms, SIGKILL to the
 * group kill_after_ms later, then the group is checked gone with
 * kill(-pgid, 0) == ESRCH (result.group_gone).
 *
 * When the leader has exited but the pipes stay open (a grandchild holds
 * them) or group members remain, the proc cleans up the group by itself:
 * SIGTERM, then SIGKILL after BT_PROC_LINGER_MS; a run never finishes while a
 * process of its group is alive.
 */
#ifndef BT_PROC_H
#define BT_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define BT_PROC_STDERR_TAIL_DEFAULT (64 * 1024) /* bytes */
#define BT_PROC_LINGER_MS 2000 /* grace for group members after leader exit */

struct bt_proc;

struct bt_proc_result {
    int64_t exit_status; /* exit code, or -1 if ended by a signal */
    int term_signal;     /* signal that ended the leader, 0 if none */
    int stop_stage;      /* 0 none, 1 SIGTERM sent, 2 SIGKILL sent */
    int group_gone;      /* 1 if kill(-pgid, 0) reported ESRCH at the end */
};

struct bt_proc_options {
    const char *file;   /* executable path (absolute, or found on env PATH) */
    char *const *argv;  /* NULL-terminated; argv[0] is the program name */
    char *const *env;   /* NULL-terminated "K=V" list, used as is */
    const char *cwd;    /* working directory, NULL for baton's own */
    int stdin_pipe;     /* 1: a pipe written with bt_proc_write; 0: /dev/null */
    size_t stderr_tail; /* bytes of stderr kept; 0 = default */

    /* Raw stdout bytes as read; buf valid for the call only. */
    void (*on_stdout)(void *data, const char *buf, size_t n);
    /* Optional: raw stderr bytes as read (the tail is kept regardless). */
    void (*on_stderr)(void *data, const char *buf, size_t n);
    /* Exactly once, see the lifecycle above. */
    void (*on_done)(void *data, const struct bt_proc_result *r);
    void *data;
};

/* Start the child. Returns 0 and sets *out, or a negative error (-ENOENT when
 * the executable is missing, other negated errno / uv codes) with *out NULL
 * and no callback ever called. */
int bt_proc_spawn(uv_loop_t *loop, const struct bt_proc_options *o, struct bt_proc **out);

/* Queue n bytes for the child's stdin (copied). Returns 0, -EPIPE once stdin
 * is closed or the child is gone, -EINVAL without a stdin pipe. */
int bt_proc_write(struct bt_proc *p, const char *buf, size_t n);

/* Close stdin after queued writes are flushed. Idempotent. */
void bt_proc_close_stdin(struct bt_proc *p);

/* Begin the stop escalation: SIGTERM to the group term_after_ms from now,
 * SIGKILL kill_after_ms after that. A later call can only shorten the
 * remaining delays. No effect once the group is gone. */
void bt_proc_stop(struct bt_proc *p, uint64_t term_after_ms, uint64_t kill_after_ms);

/* The child's pid (= its process group id). */
int bt_proc_pid(const struct bt_proc *p);
/* 1 while the leader has not been reaped. */
int bt_proc_running(const struct bt_proc *p);

/* The last bytes written to stderr (at most stderr_tail), borrowed, and
 * valid until bt_proc_free. Not NUL-terminated on its own; *len set. */
const char *bt_proc_stderr_tail(const struct bt_proc *p, size_t *len);

/* Free a proc whose on_done has run (or, if it has not, stop it at once with
 * SIGKILL and free it once done: the callbacks will not be called). */
void bt_proc_free(struct bt_proc *p);

/* 1 if any process of group pgid is alive (kill(-pgid, 0) == 0). */
int bt_proc_group_alive(int pgid);

#endif
