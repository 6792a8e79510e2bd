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
 * The close-on-exec rule: libuv does not close other descriptors in the
 * child, it relies on FD_CLOEXEC. Every descriptor baton opens anywhere (files
 * with O_CLOEXEC, sockets with SOCK_CLOEXEC, pipe2(O_CLOEXEC), dup with
 * F_DUPFD_CLOEXEC, fopen with "e"; SQLite and libgit2 do this themselves)
 * must be close-on-exec, or it leaks into every coder; a leaked write end of
 * another run's pipe means that run never sees EOF. As a safety net (and for
 * descriptors baton inherited from its parent, which often are not
 * close-on-exec) bt_proc_spawn marks every fd above 2 close-on-exec before it
 * forks; that sweep cannot close the race with another thread opening a
 * descriptor without O_CLOEXEC at the same moment, so the rule stands.
 *
 * Signals: the first bt_proc_spawn sets SIGPIPE to SIG_IGN for the whole
 * process (unless a handler is already installed), so a write to a dead
 * child's stdin fails with EPIPE instead of killing baton. baton's own writes
 * to its stdout must therefore handle EPIPE. libuv resets every signal
 * disposition and the signal mask in the child before exec.
 *
 * Lifecycle:
 *   bt_proc_spawn -> on_stdout (raw bytes, any split) ... -> on_done (once)
 * on_done runs only after *all* of: the child exited (waitpid), EOF on stdout,
 * EOF on stderr, and every libuv handle of the proc closed. After on_done the
 * proc is inert; free it with bt_proc_free (also allowed inside on_done).
 * Callbacks may call any bt_proc_* function on their proc, bt_proc_free
 * included; they are never called from inside a bt_proc_* call.
 *
 * Stop escalation (the protocol "ask" step is the caller's, before calling
 * bt_proc_stop): SIGTERM to the group after term_after_ms, SIGKILL to the
 * group kill_after_ms later, then the group is checked gone with
 * kill(-pgid, 0) == ESRCH (result.group_gone).
 *
 * When the leader has exited but the pipes stay open (a grandchild holds
 * them) or group members remain, the proc cleans up the group by itself:
 * SIGTERM at once, then SIGKILL after linger_ms (BT_PROC_LINGER_MS); a run
 * never finishes while a process of its group is alive.
 *
 * Reaping: libuv reaps the leader only. Members left behind are reparented
 * to init, which reaps them when it gets to it (seconds in some containers,
 * never under a PID 1 that does not reap); until then kill(-pgid, 0)
 * succeeds. baton is deliberately not a child subreaper (that would make it
 * reap every orphan of the process, e.g. daemonized tmux servers, and fight
 * libuv over waitpid). So after SIGKILL the proc polls kill(-pgid, 0) for up
 * to BT_PROC_REAP_WAIT_MS; if the group is still there it finishes anyway
 * with group_gone 0. The pgid is never signalled again once seen gone. When
 * baton itself is PID 1 (a container without --init) the members are its
 * children and the proc reaps them (waitpid(-pgid)); orphans that left the
 * group are another matter, so run baton under an init there.
 *
 * A process that left the group (setsid) but still holds stdout or stderr
 * would keep EOF from ever coming: once the leader exited and the group is
 * settled, the proc waits linger_ms more for EOF, then closes the pipes
 * itself (result.eof_forced).
 */
#ifndef BT_PROC_H
#define BT_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define BT_PROC_STDERR_TAIL_DEFAULT ((size_t)64 * 1024) /* bytes */
#define BT_PROC_LINGER_MS 2000    /* grace for group members after leader exit */
#define BT_PROC_REAP_WAIT_MS 5000 /* wait for init to reap the group after SIGKILL */
#define BT_PROC_WRITE_MAX ((size_t)64 * 1024 * 1024) /* bytes queued for stdin at most */

struct bt_proc;

struct bt_proc_result {
    int64_t exit_status; /* exit code, or -1 if ended by a signal */
    int term_signal;     /* signal that ended the leader, 0 if none */
    int stop_stage;      /* 0 none, 1 SIGTERM sent, 2 SIGKILL sent (by bt_proc_stop
                            or by the cleanup of members left after the leader) */
    int group_gone;      /* 1 if kill(-pgid, 0) reported ESRCH at the end */
    int eof_forced;      /* 1 if stdout/stderr were closed without EOF (held open
                            by a process outside the group) */
};

struct bt_proc_options {
    const char *file;   /* executable path (absolute, or found on env PATH) */
    char *const *argv;  /* NULL-terminated; argv[0] is the program name */
    char *const *env;   /* NULL-terminated "K=V" list, used as is; NULL = empty */
    const char *cwd;    /* working directory, NULL for baton's own */
    int stdin_pipe;     /* 1: a pipe written with bt_proc_write; 0: /dev/null */
    size_t stderr_tail; /* bytes of stderr kept; 0 = default */
    uint64_t linger_ms; /* grace for members after the leader exits; 0 = default */

    /* Raw stdout bytes as read; buf valid for the call only. */
    void (*on_stdout)(void *data, const char *buf, size_t n);
    /* Optional: stdout reached EOF (or failed); called once, before on_done,
     * possibly while the child still runs. */
    void (*on_stdout_eof)(void *data);
    /* Optional: raw stderr bytes as read (the tail is kept regardless). */
    void (*on_stderr)(void *data, const char *buf, size_t n);
    /* Exactly once, see the lifecycle above. */
    void (*on_done)(void *data, const struct bt_proc_result *r);
    void *data;
};

/* Start the child. Returns 0 and sets *out, or a negative error (-ENOENT when
 * the executable is missing, -EINVAL for missing file/argv, other negated
 * errno / uv codes) with *out NULL and no callback ever called. On failure
 * the proc's internal handles are released the next time the loop runs, so
 * run it (e.g. uv_run(UV_RUN_DEFAULT) before uv_loop_close). */
int bt_proc_spawn(uv_loop_t *loop, const struct bt_proc_options *o, struct bt_proc **out);

/* Queue n bytes for the child's stdin (copied, freed once written). Returns
 * 0, -EPIPE once stdin is closed (bt_proc_close_stdin, a failed write) or
 * the child is gone, -EINVAL without a stdin pipe, BT_ETOOBIG when more than
 * BT_PROC_WRITE_MAX bytes would be waiting for a child that does not read. */
int bt_proc_write(struct bt_proc *p, const char *buf, size_t n);

/* Close stdin after queued writes are flushed. Idempotent. */
void bt_proc_close_stdin(struct bt_proc *p);

/* Begin the stop escalation: SIGTERM to the group term_after_ms from now,
 * SIGKILL kill_after_ms after that. A later call can only shorten the
 * remaining delays. No effect once the group is gone. A delay of 0 acts
 * within the call; (0, 0) sends SIGKILL only. */
void bt_proc_stop(struct bt_proc *p, uint64_t term_after_ms, uint64_t kill_after_ms);

/* The child's pid (= its process group id). */
int bt_proc_pid(const struct bt_proc *p);
/* 1 while the leader has not been reaped. */
int bt_proc_running(const struct bt_proc *p);

/* The last bytes written to stderr (at most stderr_tail), borrowed, and
 * valid until the next stderr read or bt_proc_free. Not NUL-terminated on
 * its own; *len set. */
const char *bt_proc_stderr_tail(const struct bt_proc *p, size_t *len);

/* Free a proc whose on_done has run (or, if it has not, stop it at once with
 * SIGKILL and free it once done: the callbacks will not be called; keep
 * running the loop until then). NULL is a no-op. */
void bt_proc_free(struct bt_proc *p);

/* Stop a process group no baton process owns any more (its run was
 * recovered after its baton died): SIGTERM (and SIGCONT), up to grace_ms for
 * the group to go, then SIGKILL, then up to BT_PROC_REAP_WAIT_MS for init to
 * reap it. Blocks. Refuses pgid <= 1 and baton's own group. Returns 1 if the
 * group is gone at the end. The caller must know the group is the run's
 * (see bt_store_recover). */
int bt_proc_group_kill(int pgid, unsigned grace_ms);

/* 1 if any process of group pgid may be alive (kill(-pgid, 0) == 0, or
 * EPERM: it exists but is not ours to signal). 0 for pgid <= 1 and for
 * baton's own group (never a run's: a coder leads its own). The one "may
 * the group live" check: the proc's stop escalation and recovery both use
 * it. */
int bt_proc_group_alive(int pgid);

/* Start time of process pid (field 22 of /proc/<pid>/stat: clock ticks
 * after boot, proc(5)). With the pid it names a process: a pid reused by
 * another process has another start time. Returns 0, -ESRCH (with *start
 * 0) if there is no such process or it is a zombie, or another negated
 * errno. */
int bt_proc_pid_start(int pid, uint64_t *start);

/* 1 if process pid with start time start (bt_proc_pid_start; 0 = unknown)
 * is gone: no such pid (or pid <= 0), a zombie, or the pid reused by a
 * process with another start time. Anything unsure (EPERM, an unreadable
 * /proc) counts as alive. */
int bt_proc_pid_gone(int pid, uint64_t start);

/* Start a detached worker: argv[0] (an absolute path) with argv, in a new
 * session (setsid: no controlling terminal, its own process group, so a
 * closing shell or Ctrl-C in it does not reach the worker), stdin and stdout
 * on /dev/null, stderr appended to err_path (mode 0600; NULL: /dev/null),
 * an empty signal mask, and if notify_fd is not NULL the write end of a pipe
 * as its fd 3 (the worker reports on it; *notify_fd gets the read end,
 * close-on-exec, for the caller to read and close). The worker is a
 * grandchild (double fork): the caller never has to reap it and it is
 * reparented at once. Blocks until the worker has exec'd. Returns 0, or a
 * negated errno when it could not start (exec failure included). */
int bt_proc_spawn_worker(char *const argv[], const char *err_path, int *notify_fd);

/* The environment variable that tags every process of a run: the coder
 * gets BATON_RUN=<run id> and its children inherit it, so a run's
 * processes can be found even when its process group is unknown (baton
 * killed between the fork and recording the group) or a child left the
 * group. A proc spawned with the tag in its env kills what still carries
 * it (bt_proc_kill_tagged) once the leader has exited and the group is
 * done, before on_done. */
#define BT_PROC_RUN_TAG "BATON_RUN"

/* SIGKILL every process of this user whose environment holds exactly
 * BATON_RUN=<run> (read from /proc/<pid>/environ; unreadable ones are
 * skipped), then wait up to BT_PROC_REAP_WAIT_MS for them to go. Never
 * this process. Returns how many were signalled. */
int bt_proc_kill_tagged(const char *run);

/* Stop what is left of a run whose baton died: its process group pgid
 * (bt_proc_group_kill, 1 s grace) if it is still that run's group, i.e. the
 * leader is gone or its start time is child_start (0 = unknown: the group
 * is left alone), then every process tagged with the run
 * (bt_proc_kill_tagged). Blocks. Returns how many were signalled (the
 * group counts once). */
int bt_proc_stop_orphan(int pgid, uint64_t child_start, const char *run);

/* Replace this process with argv[0] (an absolute path) in directory dir,
 * with environment env (NULL: this process's): chdir, then execve. Every
 * descriptor above 2 is close-on-exec by the rule above, so only the
 * terminal reaches the new program. Returns only on failure, with a negated
 * errno (after a failed execve the working directory is dir). */
int bt_proc_exec(const char *dir, char *const argv[], char *const env[]);

/* Run argv (argv[0] looked up on PATH) with this process's environment to
 * its end: stdin /dev/null; stdout and stderr inherited, or /dev/null when
 * quiet. Blocks. Returns the exit status (0-255), 128 + the signal that
 * ended it, or a negated errno when it could not start. */
int bt_proc_run(char *const argv[], int quiet);

#endif
