/* SPDX-License-Identifier: MIT */
/*
 * proc: a coder's CLI as a child process group on a libuv loop (contract in
 * proc.h).
 *
 * One struct owns five libuv handles: the process, stdout, stderr, an
 * optional stdin pipe and one timer. Every state change (exit, EOF, a timer
 * tick, a stop request) ends in advance(), a small state machine that sends
 * the signals that are due, checks the group, forces EOF when it must, and
 * re-arms the single timer for the next deadline. When the leader has
 * exited, the group is settled and both output pipes are closed, every
 * remaining handle is closed; the last close callback calls on_done and, if
 * the owner asked for it, frees the memory. Memory is only ever freed in a
 * close callback or by bt_proc_free after on_done, never under a callback
 * that is still running.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "util.h"

#define READ_SIZE ((size_t)64 * 1024) /* one read buffer per proc, stdout and stderr share it */
#define POLL_MS 20                    /* how often a lingering group is checked for ESRCH */
#define NEVER UINT64_MAX
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2) /* linux/close_range.h, Linux 5.11 */
#endif

struct bt_proc {
    uv_loop_t *loop;
    uv_process_t process;
    uv_pipe_t in; /* initialised only with stdin_pipe */
    uv_pipe_t out;
    uv_pipe_t err;
    uv_timer_t timer;       /* the next deadline of advance() */
    uv_shutdown_t shutdown; /* bt_proc_close_stdin's flush-then-close */
    int pid;                /* leader pid = pgid */
    int open_handles;       /* initialised handles whose close callback is pending */

    void (*on_stdout)(void *data, const char *buf, size_t n);
    void (*on_stdout_eof)(void *data);
    void (*on_stderr)(void *data, const char *buf, size_t n);
    void (*on_done)(void *data, const struct bt_proc_result *r);
    void *data;

    uint64_t linger_ms; /* grace for members after the leader exits */
    uint64_t term_at;   /* loop time for SIGTERM, NEVER if none planned */
    uint64_t kill_at;   /* loop time for SIGKILL, NEVER if none planned */
    uint64_t killed_at; /* loop time SIGKILL was sent */
    uint64_t force_at;  /* loop time to close pipes still open once settled */
    struct bt_proc_result result;

    char *rbuf;         /* READ_SIZE bytes for uv_read_start */
    struct bt_buf tail; /* stderr, sliding: at most 2 * tail_max bytes */
    size_t tail_max;    /* bytes of stderr the tail keeps */

    bool has_stdin;     /* stdin is a pipe */
    bool stdin_closing; /* no more writes: closed, closing or shut down */
    bool exited;        /* leader reaped */
    bool out_closing;   /* stdout at EOF (or forced) and closing */
    bool err_closing;   /* stderr at EOF (or forced) and closing */
    bool settled;       /* after exit: group gone, or given up on */
    bool finishing;     /* final handles are closing */
    bool done;          /* on_done has run (or would have) */
    bool in_done;       /* inside on_done */
    bool freed;         /* owner called bt_proc_free: free once done */
    bool failed;        /* spawn failed: free once closed, no callbacks */
};

/* One queued stdin write; the bytes follow the struct. */
struct wreq {
    uv_write_t req;
    struct bt_proc *p;
    char bytes[];
};

static void advance(struct bt_proc *p);

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > NEVER - b ? NEVER : a + b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* A write to a child that closed its stdin raises SIGPIPE; the default
 * action would kill baton, so ignore it unless someone installed a handler. */
static void ignore_sigpipe(void)
{
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) != 0 || sa.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}

/* libuv maps fds 0-2 and closes nothing else in the child: whatever is not
 * close-on-exec reaches the coder. baton's own code opens everything with
 * O_CLOEXEC, but descriptors inherited from baton's parent (a shell, a CI
 * runner, an editor) usually are not; mark every fd above 2 close-on-exec
 * before each spawn. One syscall on Linux >= 5.11, a /proc walk otherwise. */
static void cloexec_all(void)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        d = opendir("/dev/fd");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = (int)strtol(e->d_name, NULL, 10);
        if (fd <= 2 || fd == dirfd(d))
            continue;
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC))
            fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
    closedir(d);
}

int bt_proc_group_alive(int pgid)
{
    if (pgid <= 1)
        return 0; /* kill(0) and kill(-1) would mean our group, or everyone */
    if (kill(-pgid, 0) == 0)
        return 1;
    return errno == EPERM;
}

int bt_proc_group_kill(int pgid, unsigned grace_ms)
{
    if (pgid <= 1 || pgid == getpgrp())
        return !bt_proc_group_alive(pgid);
    kill(-pgid, SIGTERM);
    kill(-pgid, SIGCONT); /* a stopped process cannot act on SIGTERM */
    for (unsigned waited = 0; waited < grace_ms && bt_proc_group_alive(pgid); waited += 20)
        usleep(20000);
    if (bt_proc_group_alive(pgid))
        kill(-pgid, SIGKILL);
    /* members are reparented to init, which reaps them in its own time */
    for (unsigned waited = 0; waited < BT_PROC_REAP_WAIT_MS && bt_proc_group_alive(pgid);
         waited += 20)
        usleep(20000);
    return !bt_proc_group_alive(pgid);
}

/* ---- teardown ------------------------------------------------------- */

static void free_mem(struct bt_proc *p)
{
    free(p->rbuf);
    bt_buf_release(&p->tail);
    free(p);
}

/* The last handle is closed: report (unless the owner has let go) and free
 * if the owner asked for it. on_done may call bt_proc_free: in_done makes
 * that a request honoured here, after on_done returns. */
static void all_closed(struct bt_proc *p)
{
    if (p->failed) {
        free_mem(p);
        return;
    }
    p->done = true;
    if (!p->freed && p->on_done) {
        p->in_done = true;
        p->on_done(p->data, &p->result);
        p->in_done = false;
    }
    if (p->freed)
        free_mem(p);
}

static void on_closed(uv_handle_t *h)
{
    struct bt_proc *p = h->data;
    if (--p->open_handles == 0)
        all_closed(p);
}

static void close_handle(uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_closed);
}

/* Close stdin now; pending writes complete with UV_ECANCELED. */
static void close_stdin_now(struct bt_proc *p)
{
    p->stdin_closing = true;
    if (p->has_stdin)
        close_handle((uv_handle_t *)&p->in);
}

static void finish(struct bt_proc *p)
{
    p->finishing = true;
    uv_timer_stop(&p->timer);
    close_stdin_now(p);
    close_handle((uv_handle_t *)&p->timer);
}

/* ---- the state machine ---------------------------------------------- */

/* The signals are sent to the group only before it is settled: before the
 * leader is reaped its zombie holds the pgid, and afterwards only while
 * members were seen alive, so a reused pgid is never hit (short of a pid
 * wrap-around between the check and the kill). */
static void send_due_signals(struct bt_proc *p, uint64_t now)
{
    if (p->result.stop_stage < 2 && now >= p->kill_at) {
        kill(-p->pid, SIGKILL);
        p->result.stop_stage = 2;
        p->killed_at = now;
    } else if (p->result.stop_stage < 1 && now >= p->term_at) {
        kill(-p->pid, SIGTERM);
        p->result.stop_stage = 1;
    }
}

static void settle(struct bt_proc *p, uint64_t now, bool gone)
{
    p->settled = true;
    p->result.group_gone = gone;
    /* Whoever still holds the pipes is outside the group: give the data in
     * flight time to drain, unless nobody is listening any more. */
    p->force_at = p->freed ? now : add_sat(now, p->linger_ms);
}

/* Members are baton's own children only when baton is PID 1 (a container
 * without an init) or a subreaper; then nobody else will reap them. Safe:
 * the leader is reaped already and every other child libuv waits for leads
 * its own group, and the pgid cannot be reused while a member exists (the
 * caller has just seen one), so nothing but this group's members is taken. */
static void reap_members(struct bt_proc *p)
{
    while (waitpid(-p->pid, NULL, WNOHANG) > 0)
        ;
}

static void check_group(struct bt_proc *p, uint64_t now)
{
    if (bt_proc_group_alive(p->pid))
        reap_members(p);
    if (!bt_proc_group_alive(p->pid))
        settle(p, now, true);
    else if (p->result.stop_stage == 2 && now >= add_sat(p->killed_at, BT_PROC_REAP_WAIT_MS))
        settle(p, now, false); /* init does not reap: never hang on zombies */
}

static void force_eof(struct bt_proc *p)
{
    if (!p->out_closing) {
        p->out_closing = true;
        p->result.eof_forced = 1;
        close_handle((uv_handle_t *)&p->out);
    }
    if (!p->err_closing) {
        p->err_closing = true;
        p->result.eof_forced = 1;
        close_handle((uv_handle_t *)&p->err);
    }
}

static void on_timer(uv_timer_t *t)
{
    advance(t->data);
}

static void arm_timer(struct bt_proc *p, uint64_t now)
{
    uint64_t next = NEVER;
    if (!p->settled) {
        if (p->result.stop_stage < 1)
            next = min_u64(next, p->term_at);
        if (p->result.stop_stage < 2)
            next = min_u64(next, p->kill_at);
        if (p->exited)
            next = min_u64(next, now + POLL_MS); /* no event tells us the group is gone */
    } else {
        next = p->force_at;
    }
    if (next == NEVER)
        uv_timer_stop(&p->timer);
    else
        uv_timer_start(&p->timer, on_timer, next > now ? next - now : 0, 0);
}

static void advance(struct bt_proc *p)
{
    if (p->finishing)
        return;
    uint64_t now = uv_now(p->loop);
    if (p->exited && !p->settled)
        check_group(p, now);
    if (!p->settled)
        send_due_signals(p, now);
    if (p->settled && now >= p->force_at)
        force_eof(p);
    if (p->exited && p->settled && p->out_closing && p->err_closing) {
        finish(p);
        return;
    }
    arm_timer(p, now);
}

/* ---- libuv callbacks ------------------------------------------------ */

static void on_exit_cb(uv_process_t *proc, int64_t status, int sig)
{
    struct bt_proc *p = proc->data;
    uint64_t now = uv_now(p->loop);
    p->exited = true;
    p->result.exit_status = sig ? -1 : status;
    p->result.term_signal = sig;
    close_handle((uv_handle_t *)proc);
    close_stdin_now(p);
    /* Members left behind get SIGTERM now and SIGKILL after the linger;
     * advance() sends nothing if the group turns out to be gone already. */
    p->term_at = min_u64(p->term_at, now);
    p->kill_at = min_u64(p->kill_at, add_sat(now, p->linger_ms));
    advance(p);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct bt_proc *p = h->data;
    (void)hint;
    buf->base = p->rbuf;
    buf->len = READ_SIZE;
}

/* Keep the last tail_max bytes contiguous: append, and slide the window back
 * to the start of the buffer only when it would pass 2 * tail_max. */
static void tail_add(struct bt_proc *p, const char *buf, size_t n)
{
    size_t max = p->tail_max;
    if (n >= max) {
        bt_buf_reset(&p->tail);
        bt_buf_add(&p->tail, buf + n - max, max);
        return;
    }
    if (p->tail.len + n > 2 * max)
        bt_buf_consume(&p->tail, p->tail.len + n - max);
    bt_buf_add(&p->tail, buf, n);
}

/* EOF or a read error: either way nothing more will come from this pipe. */
static void pipe_ended(struct bt_proc *p, uv_stream_t *s, bool *closing)
{
    *closing = true;
    close_handle((uv_handle_t *)s);
    advance(p);
}

static void on_out_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct bt_proc *p = s->data;
    if (n > 0) {
        if (!p->freed && p->on_stdout)
            p->on_stdout(p->data, buf->base, (size_t)n);
    } else if (n < 0) {
        if (!p->freed && p->on_stdout_eof)
            p->on_stdout_eof(p->data);
        pipe_ended(p, s, &p->out_closing);
    }
}

static void on_err_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct bt_proc *p = s->data;
    if (n > 0) {
        tail_add(p, buf->base, (size_t)n);
        if (!p->freed && p->on_stderr)
            p->on_stderr(p->data, buf->base, (size_t)n);
    } else if (n < 0) {
        pipe_ended(p, s, &p->err_closing);
    }
}

static void on_written(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    /* EPIPE and friends: the child will read no more; later writes fail
     * fast. UV_ECANCELED means stdin is closing already. */
    if (status < 0 && status != UV_ECANCELED)
        close_stdin_now(w->p);
    free(w);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    struct bt_proc *p = req->data;
    (void)status;
    close_handle((uv_handle_t *)&p->in);
}

/* ---- spawning ------------------------------------------------------- */

static void init_pipe(struct bt_proc *p, uv_pipe_t *pp)
{
    uv_pipe_init(p->loop, pp, 0); /* cannot fail for ipc = 0 */
    pp->data = p;
    p->open_handles++;
}

static void init_proc(struct bt_proc *p, uv_loop_t *loop, const struct bt_proc_options *o)
{
    p->loop = loop;
    p->on_stdout = o->on_stdout;
    p->on_stdout_eof = o->on_stdout_eof;
    p->on_stderr = o->on_stderr;
    p->on_done = o->on_done;
    p->data = o->data;
    p->linger_ms = o->linger_ms ? o->linger_ms : BT_PROC_LINGER_MS;
    p->tail_max = o->stderr_tail ? o->stderr_tail : BT_PROC_STDERR_TAIL_DEFAULT;
    if (p->tail_max > SIZE_MAX / 4)
        p->tail_max = SIZE_MAX / 4; /* tail_add needs 2 * tail_max to fit */
    p->term_at = p->kill_at = NEVER;
    p->rbuf = bt_xmalloc(READ_SIZE);
    bt_buf_init(&p->tail);
    p->has_stdin = o->stdin_pipe != 0;
    p->stdin_closing = !p->has_stdin;
    if (p->has_stdin)
        init_pipe(p, &p->in);
    init_pipe(p, &p->out);
    init_pipe(p, &p->err);
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->open_handles++;
}

/* stdin: a pipe, or UV_IGNORE, which libuv maps to /dev/null (opened in the
 * child after fork, so it cannot leak anywhere). */
static void fill_stdio(struct bt_proc *p, uv_stdio_container_t io[3])
{
    io[0].flags = UV_IGNORE;
    if (p->has_stdin) {
        io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
        io[0].data.stream = (uv_stream_t *)&p->in;
    }
    io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[1].data.stream = (uv_stream_t *)&p->out;
    io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[2].data.stream = (uv_stream_t *)&p->err;
}

static void start_reading(uv_pipe_t *pp, uv_read_cb cb, bool *closing)
{
    if (uv_read_start((uv_stream_t *)pp, on_alloc, cb) != 0) {
        *closing = true; /* treat as EOF: the run still ends */
        close_handle((uv_handle_t *)pp);
    }
}

/* Close everything a failed uv_spawn left initialised; the memory goes in
 * the last close callback, without any user callback. */
static void abandon(struct bt_proc *p)
{
    p->failed = true;
    if (p->has_stdin)
        close_handle((uv_handle_t *)&p->in);
    close_handle((uv_handle_t *)&p->out);
    close_handle((uv_handle_t *)&p->err);
    close_handle((uv_handle_t *)&p->timer);
    close_handle((uv_handle_t *)&p->process);
}

int bt_proc_spawn(uv_loop_t *loop, const struct bt_proc_options *o, struct bt_proc **out)
{
    static char *empty_env[] = {NULL};
    if (out)
        *out = NULL;
    if (!loop || !o || !out || !o->file || !o->argv || !o->argv[0])
        return -EINVAL;
    ignore_sigpipe();
    cloexec_all();

    struct bt_proc *p = bt_xcalloc(1, sizeof(*p));
    init_proc(p, loop, o);
    uv_stdio_container_t io[3];
    fill_stdio(p, io);
    uv_process_options_t po = {
        .exit_cb = on_exit_cb,
        .file = o->file,
        .args = (char **)o->argv,
        .env = o->env ? (char **)o->env : empty_env,
        .cwd = o->cwd,
        .flags = UV_PROCESS_DETACHED,
        .stdio_count = 3,
        .stdio = io,
    };
    int rc = uv_spawn(loop, &p->process, &po);
    p->process.data = p;
    p->open_handles++; /* uv_spawn initialises the handle even when it fails */
    if (rc < 0) {
        abandon(p);
        return rc;
    }
    p->pid = p->process.pid;
    start_reading(&p->out, on_out_read, &p->out_closing);
    start_reading(&p->err, on_err_read, &p->err_closing);
    *out = p;
    return 0;
}

/* ---- the public calls ----------------------------------------------- */

int bt_proc_write(struct bt_proc *p, const char *buf, size_t n)
{
    if (!p->has_stdin)
        return -EINVAL;
    if (p->stdin_closing || p->exited)
        return -EPIPE;
    if (n == 0)
        return 0;
    size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&p->in);
    if (n > BT_PROC_WRITE_MAX || queued > BT_PROC_WRITE_MAX - n)
        return BT_ETOOBIG;
    struct wreq *w = bt_xmalloc(sizeof(*w) + n);
    memcpy(w->bytes, buf, n);
    w->p = p;
    uv_buf_t b = {.base = w->bytes, .len = n};
    int rc = uv_write(&w->req, (uv_stream_t *)&p->in, &b, 1, on_written);
    if (rc < 0) {
        free(w);
        return rc;
    }
    return 0;
}

void bt_proc_close_stdin(struct bt_proc *p)
{
    if (p->stdin_closing)
        return;
    p->stdin_closing = true;
    p->shutdown.data = p;
    if (uv_shutdown(&p->shutdown, (uv_stream_t *)&p->in, on_shutdown) != 0)
        close_handle((uv_handle_t *)&p->in);
}

void bt_proc_stop(struct bt_proc *p, uint64_t term_after_ms, uint64_t kill_after_ms)
{
    if (p->finishing || p->settled)
        return;
    uint64_t term = add_sat(uv_now(p->loop), term_after_ms);
    p->term_at = min_u64(p->term_at, term);
    p->kill_at = min_u64(p->kill_at, add_sat(term, kill_after_ms));
    advance(p);
}

int bt_proc_pid(const struct bt_proc *p)
{
    return p->pid;
}

int bt_proc_running(const struct bt_proc *p)
{
    return !p->exited;
}

const char *bt_proc_stderr_tail(const struct bt_proc *p, size_t *len)
{
    size_t n = p->tail.len < p->tail_max ? p->tail.len : p->tail_max;
    *len = n;
    return p->tail.data + (p->tail.len - n);
}

void bt_proc_free(struct bt_proc *p)
{
    if (!p)
        return;
    if (p->in_done) {
        p->freed = true; /* all_closed frees once on_done returns */
        return;
    }
    if (p->done) {
        free_mem(p);
        return;
    }
    p->freed = true;
    if (p->finishing)
        return;
    close_stdin_now(p);
    if (p->settled)
        p->force_at = uv_now(p->loop);
    bt_proc_stop(p, 0, 0);
    advance(p); /* bt_proc_stop does nothing once settled */
}

/* ---- detached workers ------------------------------------------------ */

/* In the grandchild, before exec: only async-signal-safe calls. */
static void worker_exec(char *const argv[], int err_fd, int notify_w, int fail_w)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
        dup2(err_fd >= 0 ? err_fd : null_fd, 2) < 0)
        goto fail;
    /* dup2 onto itself keeps close-on-exec: clear it explicitly */
    if (notify_w >= 0 && (notify_w == 3 ? fcntl(3, F_SETFD, 0) : dup2(notify_w, 3)) < 0)
        goto fail;
    execv(argv[0], argv);
fail:;
    int e = errno;
    if (write(fail_w, &e, sizeof e) < 0)
        _exit(127);
    _exit(127);
}

/* The first child: a new session, fork the worker, leave at once. */
static void worker_fork(char *const argv[], int err_fd, int notify_w, int fail_w)
{
    if (setsid() < 0) {
        int e = errno;
        if (write(fail_w, &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    pid_t pid = fork();
    if (pid == 0)
        worker_exec(argv, err_fd, notify_w, fail_w);
    if (pid < 0) {
        int e = errno;
        if (write(fail_w, &e, sizeof e) < 0)
            _exit(127);
    }
    _exit(0);
}

/* pipe(2) with both ends close-on-exec (pipe2 is not POSIX 2008). */
static int cloexec_pipe(int p[2])
{
    if (pipe(p) < 0)
        return -errno;
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

/* Wait for the first child and read the exec result from fail_r. */
static int worker_started(pid_t child, int fail_r)
{
    int status, e = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    ssize_t n;
    while ((n = read(fail_r, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof e ? -e : 0;
}

int bt_proc_spawn_worker(char *const argv[], const char *err_path, int *notify_fd)
{
    int fail_p[2], notify_p[2] = {-1, -1}, err_fd = -1;
    if (!argv || !argv[0] || argv[0][0] != '/')
        return -EINVAL;
    int rc = cloexec_pipe(fail_p);
    if (rc)
        return rc;
    if (notify_fd && (rc = cloexec_pipe(notify_p)) != 0) {
        close(fail_p[0]);
        close(fail_p[1]);
        return rc;
    }
    if (err_path)
        err_fd = open(err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    pid_t child = fork();
    if (child == 0)
        worker_fork(argv, err_fd, notify_p[1], fail_p[1]);
    rc = child < 0 ? -errno : 0;
    close(fail_p[1]);
    if (notify_p[1] >= 0)
        close(notify_p[1]);
    if (err_fd >= 0)
        close(err_fd);
    if (rc == 0)
        rc = worker_started(child, fail_p[0]);
    close(fail_p[0]);
    if (rc == 0 && notify_fd)
        *notify_fd = notify_p[0];
    else if (notify_p[0] >= 0)
        close(notify_p[0]);
    return rc;
}

/* ---- handing the terminal over --------------------------------------- */

extern char **environ;

int bt_proc_exec(const char *dir, char *const argv[], char *const env[])
{
    if (!dir || !argv || !argv[0] || argv[0][0] != '/')
        return -EINVAL;
    if (chdir(dir) < 0)
        return -errno;
    execve(argv[0], argv, env ? env : environ);
    return -errno;
}

int bt_proc_run(char *const argv[], int quiet)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;
    if (!argv || !argv[0])
        return -EINVAL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -rc;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- a run's processes by their tag ---------------------------------- */

/* 1 if process pid's environment holds exactly the entry tag. */
static int has_tag(long pid, const char *tag)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    size_t len;
    char *env = bt_read_file(path, &len);
    if (!env) /* gone, or not ours to read */
        return 0;
    int found = 0;
    for (size_t i = 0; i < len && !found; i += strlen(env + i) + 1)
        found = strcmp(env + i, tag) == 0;
    free(env);
    return found;
}

/* SIGKILL the tagged processes; their pids into pids (at most cap). */
static size_t kill_tagged_once(const char *tag, pid_t *pids, size_t cap)
{
    DIR *d = opendir("/proc");
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid() || !has_tag(pid, tag))
            continue;
        if (kill((pid_t)pid, SIGKILL) == 0 && n < cap)
            pids[n++] = (pid_t)pid;
    }
    if (d)
        closedir(d);
    return n;
}

int bt_proc_kill_tagged(const char *run)
{
    if (!run || !*run)
        return 0;
    char *tag = bt_xasprintf("%s=%s", BT_PROC_RUN_TAG, run);
    pid_t pids[256];
    /* twice: a process may fork while the first pass runs */
    size_t n = kill_tagged_once(tag, pids, 256);
    n += kill_tagged_once(tag, pids + n, 256 - n);
    for (size_t i = 0; i < n; i++)
        for (unsigned waited = 0; waited < BT_PROC_REAP_WAIT_MS && kill(pids[i], 0) == 0;
             waited += 20)
            usleep(20000);
    free(tag);
    return (int)n;
}
