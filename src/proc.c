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
 *
 * The rest of the module: proc-group.c (processes and groups seen through
 * kill and /proc: identity, "may live", stopping orphans, the run tag),
 * proc-exec.c (detached workers, exec, a program run to its end).
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

    char *run;          /* the run its env tags it with (BT_PROC_RUN_TAG), or NULL */
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

/* ---- teardown ------------------------------------------------------- */

static void free_mem(struct bt_proc *p)
{
    free(p->run);
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
    /* A member that left the group with setsid (claude runs its Bash tool
     * in a session of its own) outlives a leader killed mid-turn: the
     * run's tag still finds it. */
    if (p->run && !p->failed)
        bt_proc_kill_tagged(p->run);
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
    static const char tag[] = BT_PROC_RUN_TAG "=";
    for (char *const *e = o->env; e && *e && !p->run; e++)
        if (strncmp(*e, tag, sizeof(tag) - 1) == 0 && (*e)[sizeof(tag) - 1])
            p->run = bt_xstrdup(*e + sizeof(tag) - 1);
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
