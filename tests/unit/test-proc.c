/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for proc: real child processes (/bin/sh, /bin/cat and the
 * fake-coder) on a real libuv loop. Each test checks the contract of proc.h:
 * bytes intact, on_done exactly once and only after exit + EOF + close, stop
 * escalation, no process of the group left behind, no fd leaked into the
 * child, and safe teardown from every callback. Timing is only ever bounded
 * from above (a watchdog), never asserted from below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "proc.h"
#include "util.h"

#define FAKE_CODER BT_BINARY_DIR "/tests/fake-coder/fake-coder"
#define WATCHDOG_MS 20000
#define LINGER_MS 200

static char tmpdir[64];

/* ---- harness --------------------------------------------------------- */

struct run;
typedef void (*line_hook)(struct run *r, const char *line, size_t n);

/* One proc and what it reported. Heap-allocated, so a failed assertion that
 * leaves the test early leaves nothing dangling on a dead stack frame. */
struct run {
    uv_loop_t *loop;
    struct bt_proc *p;
    int pid;
    struct bt_buf out, err;
    size_t out_reads;
    size_t line_off;   /* start of the next unprocessed stdout line */
    line_hook on_line; /* called per complete stdout line, if set */
    int done_calls;
    struct bt_proc_result res;
    struct bt_buf tail;  /* bt_proc_stderr_tail as seen in on_done */
    int running_at_done; /* bt_proc_running inside on_done */
    int write_in_done;   /* bt_proc_write inside on_done (stdin pipe only) */
    bool free_in_done;   /* bt_proc_free from on_done */
    bool free_in_stdout; /* bt_proc_free from the first on_stdout */
    bool stop_on_stderr; /* bt_proc_stop(stop_term, stop_kill) at first stderr */
    bool stopped;
    uint64_t stop_term, stop_kill;
    bool timed_out;
    int step; /* scripted client state */
};

static void cb_out(void *data, const char *buf, size_t n)
{
    struct run *r = data;
    r->out_reads++;
    bt_buf_add(&r->out, buf, n);
    if (r->free_in_stdout && r->p) {
        bt_proc_free(r->p);
        r->p = NULL;
        return;
    }
    char *nl;
    while (r->on_line && r->p &&
           (nl = memchr(r->out.data + r->line_off, '\n', r->out.len - r->line_off)) != NULL) {
        size_t start = r->line_off;
        r->line_off = (size_t)(nl - r->out.data) + 1;
        r->on_line(r, r->out.data + start, (size_t)(nl - r->out.data) - start);
    }
}

static void cb_err(void *data, const char *buf, size_t n)
{
    struct run *r = data;
    bt_buf_add(&r->err, buf, n);
    if (r->stop_on_stderr && !r->stopped) {
        r->stopped = true;
        bt_proc_stop(r->p, r->stop_term, r->stop_kill);
    }
}

static void cb_done(void *data, const struct bt_proc_result *res)
{
    struct run *r = data;
    size_t n;
    r->done_calls++;
    r->res = *res;
    const char *t = bt_proc_stderr_tail(r->p, &n);
    bt_buf_add(&r->tail, t, n);
    r->running_at_done = bt_proc_running(r->p);
    r->write_in_done = bt_proc_write(r->p, "x", 1);
    if (r->free_in_done) {
        bt_proc_free(r->p);
        r->p = NULL;
    }
}

static uv_loop_t *loop_new(void)
{
    uv_loop_t *loop = bt_xmalloc(sizeof(*loop));
    assert_int_equal(uv_loop_init(loop), 0);
    return loop;
}

/* Drain the loop: every handle of every proc must close by itself. */
static void loop_free(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
    free(loop);
}

static struct run *run_new(uv_loop_t *loop)
{
    struct run *r = bt_xcalloc(1, sizeof(*r));
    r->loop = loop;
    bt_buf_init(&r->out);
    bt_buf_init(&r->err);
    bt_buf_init(&r->tail);
    return r;
}

static void run_free(struct run *r)
{
    if (r->p)
        bt_proc_free(r->p);
    bt_buf_release(&r->out);
    bt_buf_release(&r->err);
    bt_buf_release(&r->tail);
    free(r);
}

static int run_spawn(struct run *r, struct bt_proc_options o)
{
    o.on_stdout = cb_out;
    o.on_stderr = cb_err;
    o.on_done = cb_done;
    o.data = r;
    if (!o.linger_ms)
        o.linger_ms = LINGER_MS;
    int rc = bt_proc_spawn(r->loop, &o, &r->p);
    if (rc == 0)
        r->pid = bt_proc_pid(r->p);
    return rc;
}

static void on_watchdog(uv_timer_t *t)
{
    struct run *r = t->data;
    r->timed_out = true;
}

static void close_free(uv_handle_t *h)
{
    free(h);
}

/* Run the loop until r's on_done (or the watchdog). */
static void run_wait(struct run *r)
{
    uv_timer_t *wd = bt_xmalloc(sizeof(*wd));
    uv_timer_init(r->loop, wd);
    wd->data = r;
    uv_timer_start(wd, on_watchdog, WATCHDOG_MS, 0);
    while (!r->done_calls && !r->timed_out)
        uv_run(r->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)wd, close_free);
    assert_false(r->timed_out);
    assert_int_equal(r->done_calls, 1);
}

/* Spawn, wait for on_done, drain the loop. */
static struct run *run_simple(struct bt_proc_options o)
{
    struct run *r = run_new(loop_new());
    assert_int_equal(run_spawn(r, o), 0);
    run_wait(r);
    return r;
}

static void run_end(struct run *r)
{
    uv_loop_t *loop = r->loop;
    run_free(r);
    loop_free(loop);
}

static void assert_pid_gone(int pid)
{
    assert_true(pid > 1);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static char *tmp_path(const char *name)
{
    return bt_xasprintf("%s/%s", tmpdir, name);
}

static char *read_file(const char *path, size_t *len)
{
    struct bt_buf b = BT_BUF_INIT;
    char chunk[4096];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        bt_buf_add(&b, chunk, (size_t)n);
    close(fd);
    return bt_buf_detach(&b, len);
}

static void write_file(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, s, n), (ssize_t)n);
    close(fd);
}

static int read_pid_file(const char *path)
{
    char *s = read_file(path, NULL);
    int pid = (int)strtol(s, NULL, 10);
    free(s);
    return pid;
}

/* A NULL-terminated environment: PATH plus the given "K=V" strings. */
#define ENV(...) ((char *[]){"PATH=/usr/bin:/bin", __VA_ARGS__, NULL})
#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})

/* Options for /bin/sh -c SCRIPT; a macro so the compound literals live in
 * the caller's block. */
#define SH(script)                                                                                 \
    ((struct bt_proc_options){                                                                     \
        .file = "/bin/sh", .argv = ARGV("sh", "-c", script), .env = ENV("LC_ALL=C")})

/* ---- stdout ---------------------------------------------------------- */

static void test_stdout_large(void **state)
{
    (void)state;
    size_t n = 6 * 1024 * 1024 + 123;
    char *data = bt_xmalloc(n);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        data[i] = (char)(x & 0xff); /* every byte value, NUL and LF included */
    }
    char *path = tmp_path("large.bin");
    write_file(path, data, n);
    struct run *r = run_simple((struct bt_proc_options){
        .file = "/bin/cat", .argv = ARGV("cat", path), .env = ENV("LC_ALL=C")});
    assert_int_equal(r->out.len, n);
    assert_memory_equal(r->out.data, data, n);
    assert_true(r->out_reads > 1);
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->res.term_signal, 0);
    assert_int_equal(r->res.stop_stage, 0);
    assert_int_equal(r->res.group_gone, 1);
    assert_int_equal(r->res.eof_forced, 0);
    assert_int_equal(r->running_at_done, 0);
    run_end(r);
    unlink(path);
    free(path);
    free(data);
}

/* Both pipes reach EOF long before the leader exits: on_done must wait. */
static void test_done_waits_for_exit(void **state)
{
    (void)state;
    struct run *r = run_simple(SH("echo early; exec >&- 2>&-; sleep 0.3; exit 3"));
    assert_string_equal(r->out.data, "early\n");
    assert_int_equal(r->res.exit_status, 3);
    assert_int_equal(r->running_at_done, 0);
    assert_int_equal(r->res.group_gone, 1);
    run_end(r);
}

/* The leader exits at once; a grandchild that ignores SIGTERM holds stdout
 * and stderr. The proc must SIGKILL it and still finish. */
static void test_grandchild_holds_stdout(void **state)
{
    (void)state;
    char *pidfile = tmp_path("gc.pid");
    char *e1 = bt_xasprintf("FAKE_CODER_PIDFILE=%s", pidfile);
    struct run *r = run_simple((struct bt_proc_options){
        .file = FAKE_CODER, .argv = ARGV("fake-coder"), .env = ENV("FAKE_CODER_GRANDCHILD=1", e1)});
    int gpid = read_pid_file(pidfile);
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->res.term_signal, 0);
    assert_int_equal(r->res.stop_stage, 2);
    assert_int_equal(r->res.group_gone, 1);
    assert_int_equal(r->res.eof_forced, 0);
    assert_pid_gone(gpid);
    assert_int_equal(bt_proc_group_alive(r->pid), 0);
    run_end(r);
    unlink(pidfile);
    free(pidfile);
    free(e1);
}

/* A grandchild that honours SIGTERM goes with the first signal. */
static void test_grandchild_term(void **state)
{
    (void)state;
    struct run *r = run_simple(SH("sleep 30 & echo $!; exit 0"));
    int gpid = (int)strtol(r->out.data, NULL, 10);
    assert_int_equal(r->res.exit_status, 0);
    /* 1, or 2 when init reaps the dead sleep later than the linger. */
    assert_true(r->res.stop_stage >= 1);
    assert_int_equal(r->res.group_gone, 1);
    assert_pid_gone(gpid);
    run_end(r);
}

/* A process that left the group keeps stdout open: the run still ends. */
static void test_escaped_holder(void **state)
{
    (void)state;
    struct run *r = run_simple(SH("setsid sleep 1 & sleep 0.3; exit 0"));
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->res.stop_stage, 0);
    assert_int_equal(r->res.group_gone, 1);
    assert_int_equal(r->res.eof_forced, 1);
    run_end(r);
}

static void test_exit_code_and_signal(void **state)
{
    (void)state;
    struct run *r = run_simple(SH("exit 7"));
    assert_int_equal(r->res.exit_status, 7);
    assert_int_equal(r->res.term_signal, 0);
    assert_int_equal(r->res.stop_stage, 0);
    run_end(r);

    r = run_simple(SH("kill -USR1 $$"));
    assert_int_equal(r->res.exit_status, -1);
    assert_int_equal(r->res.term_signal, SIGUSR1);
    assert_int_equal(r->res.stop_stage, 0);
    run_end(r);
}

static void test_missing_executable(void **state)
{
    (void)state;
    uv_loop_t *loop = loop_new();
    struct run *r = run_new(loop);
    struct bt_proc *p = (struct bt_proc *)1;
    struct bt_proc_options o = {.file = "/nonexistent/coder",
                                .argv = ARGV("coder"),
                                .env = ENV("A=1"),
                                .on_done = cb_done,
                                .data = r};
    assert_int_equal(bt_proc_spawn(loop, &o, &p), -ENOENT);
    assert_null(p);
    o.file = "baton-no-such-coder";
    o.stdin_pipe = 1;
    assert_int_equal(bt_proc_spawn(loop, &o, &p), -ENOENT);
    assert_null(p);
    o.argv = NULL;
    assert_int_equal(bt_proc_spawn(loop, &o, &p), -EINVAL);
    loop_free(loop);
    assert_int_equal(r->done_calls, 0);
    assert_int_equal(r->out_reads, 0);
    run_free(r);
}

/* ---- stdin ----------------------------------------------------------- */

static void test_stdin_cat_roundtrip(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = "/bin/cat",
                                                           .argv = ARGV("cat"),
                                                           .env = ENV("LC_ALL=C"),
                                                           .stdin_pipe = 1}),
                     0);
    struct bt_buf sent = BT_BUF_INIT;
    for (int i = 0; i < 20000; i++)
        bt_buf_addf(&sent, "line %d of the stdin round trip\n", i);
    /* Uneven chunks, far more than a socket buffer, queued at once. */
    for (size_t off = 0, k = 1; off < sent.len; k = k * 7 % 65537) {
        size_t n = sent.len - off < k ? sent.len - off : k;
        assert_int_equal(bt_proc_write(r->p, sent.data + off, n), 0);
        off += n;
    }
    assert_int_equal(bt_proc_write(r->p, "", 0), 0);
    bt_proc_close_stdin(r->p);
    bt_proc_close_stdin(r->p);
    assert_int_equal(bt_proc_write(r->p, "late", 4), -EPIPE);
    run_wait(r);
    assert_int_equal(r->out.len, sent.len);
    assert_memory_equal(r->out.data, sent.data, sent.len);
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->write_in_done, -EPIPE);
    assert_int_equal(bt_proc_write(r->p, "x", 1), -EPIPE);
    bt_buf_release(&sent);
    run_end(r);
}

/* Parse a FAKE_CODER_FDS file: "<fd> <target>" lines. */
static int parse_fds(const char *path, int fds[], char targets[][64], int max)
{
    char *s = read_file(path, NULL);
    int n = 0;
    for (char *line = strtok(s, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *sp = strchr(line, ' ');
        fds[n] = (int)strtol(line, NULL, 10);
        snprintf(targets[n], 64, "%s", sp ? sp + 1 : "");
        n++;
    }
    free(s);
    return n;
}

static void test_stdin_devnull(void **state)
{
    (void)state;
    char *fdfile = tmp_path("fds-null");
    char *e1 = bt_xasprintf("FAKE_CODER_FDS=%s", fdfile);
    struct run *r = run_simple(
        (struct bt_proc_options){.file = FAKE_CODER, .argv = ARGV("fake-coder"), .env = ENV(e1)});
    int fds[16] = {0};
    char targets[16][64] = {{0}};
    int n = parse_fds(fdfile, fds, targets, 16);
    assert_int_equal(n, 3);
    assert_int_equal(fds[0], 0);
    assert_string_equal(targets[0], "/dev/null");
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->write_in_done, -EINVAL);
    assert_int_equal(bt_proc_write(r->p, "x", 1), -EINVAL);
    run_end(r);
    unlink(fdfile);
    free(fdfile);
    free(e1);
}

/* baton holds other fds (close-on-exec, as the rule in proc.h demands, and
 * one that is not, like those inherited from a parent) and another run's
 * pipes: the child sees only 0, 1 and 2. */
static void test_only_std_fds(void **state)
{
    (void)state;
    char *fdfile = tmp_path("fds");
    char *dbfile = tmp_path("fake.db");
    char *e1 = bt_xasprintf("FAKE_CODER_FDS=%s", fdfile);
    int held[5];
    held[4] = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: the spawn sweep's job */
    held[0] = open(dbfile, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    held[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_int_equal(pipe(held + 2), 0); /* pipe2 is not POSIX: set the flag by hand */
    fcntl(held[2], F_SETFD, FD_CLOEXEC);
    fcntl(held[3], F_SETFD, FD_CLOEXEC);
    assert_true(held[0] >= 0 && held[1] >= 0 && held[4] >= 0);

    uv_loop_t *loop = loop_new();
    struct run *other = run_new(loop);
    assert_int_equal(run_spawn(other, (struct bt_proc_options){.file = "/bin/cat",
                                                               .argv = ARGV("cat"),
                                                               .env = ENV("A=1"),
                                                               .stdin_pipe = 1}),
                     0);
    struct run *r = run_new(loop);
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = FAKE_CODER,
                                                           .argv = ARGV("fake-coder"),
                                                           .env = ENV(e1),
                                                           .stdin_pipe = 1}),
                     0);
    bt_proc_close_stdin(r->p);
    run_wait(r);
    int fds[16] = {0};
    char targets[16][64] = {{0}};
    int n = parse_fds(fdfile, fds, targets, 16);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fds[i], i);
        assert_non_null(strstr(targets[i], "socket:")); /* libuv's socketpairs */
    }
    bt_proc_close_stdin(other->p);
    run_wait(other);
    assert_int_equal(other->res.exit_status, 0);
    run_free(r);
    run_free(other);
    loop_free(loop);
    for (int i = 0; i < 5; i++)
        close(held[i]);
    unlink(fdfile);
    unlink(dbfile);
    free(fdfile);
    free(dbfile);
    free(e1);
}

static void on_write_timer(uv_timer_t *t)
{
    struct run *r = t->data;
    static char big[128 * 1024];
    int rc = bt_proc_write(r->p, big, sizeof(big));
    if (r->step++ == 0)
        assert_true(rc == 0 || rc == -EPIPE); /* EPIPE may surface later */
    else
        assert_int_equal(rc, -EPIPE);
    if (r->step < 2)
        uv_timer_start(t, on_write_timer, 150, 0);
    else
        uv_close((uv_handle_t *)t, close_free);
}

/* The child closes its stdin: writes fail with EPIPE (no SIGPIPE death). */
static void test_write_epipe(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    struct bt_proc_options o = SH("exec 0<&-; sleep 0.5");
    o.stdin_pipe = 1;
    assert_int_equal(run_spawn(r, o), 0);
    uv_timer_t *t = bt_xmalloc(sizeof(*t));
    uv_timer_init(r->loop, t);
    t->data = r;
    uv_timer_start(t, on_write_timer, 100, 0);
    run_wait(r);
    assert_int_equal(r->step, 2);
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->write_in_done, -EPIPE);
    run_end(r);

    /* And after a plain exit. */
    o = SH("exit 0");
    o.stdin_pipe = 1;
    r = run_simple(o);
    assert_int_equal(r->write_in_done, -EPIPE);
    assert_int_equal(bt_proc_write(r->p, "x", 1), -EPIPE);
    run_end(r);
}

/* ---- stderr ---------------------------------------------------------- */

static void test_stderr_tail(void **state)
{
    (void)state;
    struct bt_buf want = BT_BUF_INIT;
    for (int i = 1; i <= 100000; i++)
        bt_buf_addf(&want, "%d\n", i);
    struct bt_proc_options o = SH("seq 1 100000 >&2");
    o.stderr_tail = 1000;
    struct run *r = run_simple(o);
    assert_int_equal(r->err.len, want.len); /* on_stderr saw everything */
    assert_memory_equal(r->err.data, want.data, want.len);
    assert_int_equal(r->tail.len, 1000);
    assert_memory_equal(r->tail.data, want.data + want.len - 1000, 1000);
    size_t n;
    const char *t = bt_proc_stderr_tail(r->p, &n); /* still valid after on_done */
    assert_int_equal(n, 1000);
    assert_memory_equal(t, want.data + want.len - 1000, 1000);
    run_end(r);
    bt_buf_release(&want);

    r = run_simple(SH("echo oops >&2; exit 1"));
    assert_int_equal(r->tail.len, 5);
    assert_memory_equal(r->tail.data, "oops\n", 5);
    assert_int_equal(r->res.exit_status, 1);
    run_end(r);
}

/* ---- stop ------------------------------------------------------------ */

static void test_stop_term(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = "/bin/sleep",
                                                           .argv = ARGV("sleep", "30"),
                                                           .env = ENV("A=1")}),
                     0);
    bt_proc_stop(r->p, 0, 10000);
    run_wait(r);
    assert_int_equal(r->res.exit_status, -1);
    assert_int_equal(r->res.term_signal, SIGTERM);
    assert_int_equal(r->res.stop_stage, 1);
    assert_int_equal(r->res.group_gone, 1);
    bt_proc_stop(r->p, 0, 0); /* after the end: no effect */
    assert_int_equal(r->done_calls, 1);
    run_end(r);
}

/* The leader ignores SIGTERM: SIGKILL follows. */
static void test_stop_escalates_to_kill(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    r->stop_on_stderr = true; /* "ready" comes after SIGTERM is ignored */
    r->stop_term = 0;
    r->stop_kill = 200;
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = FAKE_CODER,
                                                           .argv = ARGV("fake-coder"),
                                                           .env = ENV("FAKE_CODER_IGNORE_TERM=1",
                                                                      "FAKE_CODER_NEVER_EXIT=1",
                                                                      "FAKE_CODER_STDERR=ready")}),
                     0);
    run_wait(r);
    assert_int_equal(r->res.exit_status, -1);
    assert_int_equal(r->res.term_signal, SIGKILL);
    assert_int_equal(r->res.stop_stage, 2);
    assert_int_equal(r->res.group_gone, 1);
    run_end(r);
}

/* A later call shortens a long escalation. */
static void test_stop_shortened(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = FAKE_CODER,
                                                           .argv = ARGV("fake-coder"),
                                                           .env = ENV("FAKE_CODER_IGNORE_TERM=1",
                                                                      "FAKE_CODER_NEVER_EXIT=1")}),
                     0);
    int64_t t0 = bt_mono_ms();
    bt_proc_stop(r->p, 60000, 60000);
    bt_proc_stop(r->p, 100, 100);
    bt_proc_stop(r->p, 50000, 50000); /* cannot lengthen */
    run_wait(r);
    assert_true(bt_mono_ms() - t0 < 10000);
    assert_int_equal(r->res.term_signal, SIGKILL);
    assert_int_equal(r->res.stop_stage, 2);
    run_end(r);
}

/* Stop a leader whose grandchild ignores SIGTERM: both go. */
static void test_stop_grandchild_ignoring_term(void **state)
{
    (void)state;
    char *pidfile = tmp_path("gc2.pid");
    char *e1 = bt_xasprintf("FAKE_CODER_PIDFILE=%s", pidfile);
    struct run *r = run_new(loop_new());
    r->stop_on_stderr = true;
    r->stop_term = 0;
    r->stop_kill = 300;
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = FAKE_CODER,
                                                           .argv = ARGV("fake-coder"),
                                                           .env = ENV("FAKE_CODER_GRANDCHILD=1", e1,
                                                                      "FAKE_CODER_NEVER_EXIT=1",
                                                                      "FAKE_CODER_STDERR=ready"),
                                                           .stdin_pipe = 1}),
                     0);
    run_wait(r);
    int gpid = read_pid_file(pidfile);
    assert_int_equal(r->res.term_signal, SIGTERM);
    assert_int_equal(r->res.stop_stage, 2);
    assert_int_equal(r->res.group_gone, 1);
    assert_pid_gone(gpid);
    run_end(r);
    unlink(pidfile);
    free(pidfile);
    free(e1);
}

/* ---- freeing --------------------------------------------------------- */

static void test_free_in_done(void **state)
{
    (void)state;
    struct run *r = run_new(loop_new());
    r->free_in_done = true;
    struct bt_proc_options o = SH("echo hi; echo err >&2");
    o.stdin_pipe = 1;
    assert_int_equal(run_spawn(r, o), 0);
    run_wait(r);
    assert_null(r->p);
    assert_string_equal(r->out.data, "hi\n");
    assert_string_equal(r->tail.data, "err\n");
    run_end(r);
}

/* Freed while running: SIGKILL, no callbacks, everything released. */
static void test_free_while_running(void **state)
{
    (void)state;
    uv_loop_t *loop = loop_new();
    struct run *r = run_new(loop);
    assert_int_equal(run_spawn(r, (struct bt_proc_options){.file = "/bin/sleep",
                                                           .argv = ARGV("sleep", "30"),
                                                           .env = ENV("A=1"),
                                                           .stdin_pipe = 1}),
                     0);
    int pid = r->pid;
    bt_proc_free(r->p);
    r->p = NULL;
    loop_free(loop);
    assert_int_equal(r->done_calls, 0);
    assert_int_equal(bt_proc_group_alive(pid), 0);
    run_free(r);

    /* From inside on_stdout, with a grandchild holding the pipes. */
    loop = loop_new();
    r = run_new(loop);
    r->free_in_stdout = true;
    assert_int_equal(run_spawn(r, SH("sleep 30 & echo hi; exec sleep 30")), 0);
    pid = r->pid;
    loop_free(loop);
    assert_int_equal(r->done_calls, 0);
    assert_int_equal(r->out_reads, 1);
    assert_int_equal(bt_proc_group_alive(pid), 0);
    run_free(r);
}

/* ---- the fake coder -------------------------------------------------- */

static const char replay_jsonl[] =
    "{\"id\":0,\"result\":{\"userAgent\":\"fake\"}}\n"
    "{\"method\":\"thread/started\",\"params\":{\"thread\":{\"id\":\"t1\"}}}\n"
    "garbage \xff\xfe not json\n"
    "{\"id\":1,\"result\":{\"thread\":{\"id\":\"t1\"}}}\n"
    "{\"id\":2,\"result\":{\"turn\":{\"id\":\"u1\"}}}\n"
    "{\"method\":\"item/agentMessage/delta\",\"params\":{\"delta\":\"h\xc3\xa9\\u2028\"}}\n"
    "{\"id\":0,\"method\":\"item/commandExecution/requestApproval\",\"params\":{}}\n"
    "{\"method\":\"turn/completed\",\"params\":{\"turn\":{\"status\":\"completed\"}}}\n";

static void client_send(struct run *r, const char *s)
{
    assert_int_equal(bt_proc_write(r->p, s, strlen(s)), 0);
}

/* A codex-like client: one request per response, answer the approval. */
static void client_line(struct run *r, const char *line, size_t n)
{
    (void)n;
    if (strncmp(line, "{\"id\":0,\"result\"", 16) == 0) {
        client_send(r, "{\"method\":\"initialized\"}\n{\"id\":1,\"method\":\"thread/start\"}\n");
    } else if (strncmp(line, "{\"id\":1,", 8) == 0) {
        client_send(r, "{\"id\":2,\"method\":\"turn/start\",\"params\":{}}\n");
    } else if (strstr(line, "requestApproval")) {
        client_send(r, "{\"id\":0,\"result\":{\"decision\":\"accept\"}}\n");
    } else if (strstr(line, "turn/completed")) {
        bt_proc_close_stdin(r->p);
    }
}

static void test_fake_coder_replay(void **state)
{
    (void)state;
    char *jsonl = tmp_path("replay.jsonl");
    char *logf = tmp_path("stdin.log");
    char *argvf = tmp_path("argv.txt");
    write_file(jsonl, replay_jsonl, sizeof(replay_jsonl) - 1);
    unlink(logf);
    char *e1 = bt_xasprintf("FAKE_CODER_REPLAY=%s", jsonl);
    char *e2 = bt_xasprintf("FAKE_CODER_LOG_STDIN=%s", logf);
    char *e3 = bt_xasprintf("FAKE_CODER_ARGV=%s", argvf);
    struct run *r = run_new(loop_new());
    r->on_line = client_line;
    assert_int_equal(
        run_spawn(r, (struct bt_proc_options){.file = FAKE_CODER,
                                              .argv = ARGV("fake-coder", "app-server", "--x=y"),
                                              .env = ENV(e1, e2, e3),
                                              .stdin_pipe = 1}),
        0);
    client_send(r, "{\"id\":0,\"method\":\"initialize\",\"params\":{}}\n");
    run_wait(r);
    assert_int_equal(r->res.exit_status, 0);
    assert_int_equal(r->out.len, sizeof(replay_jsonl) - 1);
    assert_memory_equal(r->out.data, replay_jsonl, sizeof(replay_jsonl) - 1);
    char *log = read_file(logf, NULL);
    assert_string_equal(log, "{\"id\":0,\"method\":\"initialize\",\"params\":{}}\n"
                             "{\"method\":\"initialized\"}\n"
                             "{\"id\":1,\"method\":\"thread/start\"}\n"
                             "{\"id\":2,\"method\":\"turn/start\",\"params\":{}}\n"
                             "{\"id\":0,\"result\":{\"decision\":\"accept\"}}\n");
    char *args = read_file(argvf, NULL);
    assert_string_equal(args, "fake-coder\napp-server\n--x=y\n");
    run_end(r);
    unlink(jsonl);
    unlink(logf);
    unlink(argvf);
    free(log);
    free(args);
    free(jsonl);
    free(logf);
    free(argvf);
    free(e1);
    free(e2);
    free(e3);
}

/* All the client lines first; noise, CRLF, split writes, a delay, an exit
 * code and stderr text. */
static void test_fake_coder_knobs(void **state)
{
    (void)state;
    char *jsonl = tmp_path("replay2.jsonl");
    write_file(jsonl, replay_jsonl, sizeof(replay_jsonl) - 1);
    char *e1 = bt_xasprintf("FAKE_CODER_REPLAY=%s", jsonl);
    struct run *r = run_new(loop_new());
    assert_int_equal(
        run_spawn(r,
                  (struct bt_proc_options){.file = FAKE_CODER,
                                           .argv = ARGV("fake-coder"),
                                           .env = ENV(e1, "FAKE_CODER_READ_STDIN_FIRST=1",
                                                      "FAKE_CODER_NOISE=1", "FAKE_CODER_CRLF=1",
                                                      "FAKE_CODER_SPLIT_WRITES=1",
                                                      "FAKE_CODER_DELAY_MS=5", "FAKE_CODER_EXIT=4",
                                                      "FAKE_CODER_STDERR=hello on stderr"),
                                           .stdin_pipe = 1}),
        0);
    client_send(r, "{\"id\":0,\"method\":\"initialize\"}\n{\"id\":1,\"method\":\"thread/start\"}\n"
                   "{\"id\":2,\"method\":\"turn/start\"}\n{\"id\":0,\"result\":{}}");
    bt_proc_close_stdin(r->p);
    run_wait(r);
    assert_int_equal(r->res.exit_status, 4);
    assert_string_equal(r->tail.data, "hello on stderr\n");
    /* Two noise lines, then the recording with CRLF line ends. */
    const char *s = r->out.data;
    assert_true(strncmp(s, "fake-coder", 10) == 0);
    s = strchr(s, '\n') + 1;
    assert_true(strncmp(s, "\x1b[", 2) == 0);
    s = strchr(s, '\n') + 1;
    struct bt_buf lf = BT_BUF_INIT;
    for (; *s; s++)
        if (!(s[0] == '\r' && s[1] == '\n'))
            bt_buf_addc(&lf, *s);
    assert_string_equal(lf.data, replay_jsonl);
    bt_buf_release(&lf);
    run_end(r);
    unlink(jsonl);
    free(jsonl);
    free(e1);
}

static void test_fake_coder_crash_and_hang(void **state)
{
    (void)state;
    char *jsonl = tmp_path("replay3.jsonl");
    write_file(jsonl, replay_jsonl, sizeof(replay_jsonl) - 1);
    char *e1 = bt_xasprintf("FAKE_CODER_REPLAY=%s", jsonl);
    struct bt_proc_options o = {.file = FAKE_CODER,
                                .argv = ARGV("fake-coder"),
                                .env =
                                    ENV(e1, "FAKE_CODER_CRASH_AFTER=1", "FAKE_CODER_STDERR=boom")};
    o.stdin_pipe = 1;
    struct run *r = run_new(loop_new());
    assert_int_equal(run_spawn(r, o), 0);
    client_send(r, "{\"id\":0,\"method\":\"initialize\"}\n");
    run_wait(r);
    assert_int_equal(r->res.exit_status, 1);
    assert_string_equal(r->out.data, "{\"id\":0,\"result\":{\"userAgent\":\"fake\"}}\n");
    assert_string_equal(r->tail.data, "boom\nboom\n");
    run_end(r);

    o.env = ENV(e1, "FAKE_CODER_CRASH_AFTER=0", "FAKE_CODER_CRASH_SIGNAL=1");
    r = run_simple(o);
    assert_int_equal(r->res.term_signal, SIGABRT);
    assert_int_equal(r->out.len, 0);
    run_end(r);

    /* Hangs after one line: only a stop ends it. */
    o.env = ENV(e1, "FAKE_CODER_HANG_AFTER=1", "FAKE_CODER_STDERR=hanging");
    r = run_new(loop_new());
    assert_int_equal(run_spawn(r, o), 0);
    client_send(r,
                "{\"id\":0,\"method\":\"initialize\"}\n{\"id\":1,\"method\":\"thread/start\"}\n");
    bt_proc_stop(r->p, 300, 300);
    run_wait(r);
    assert_string_equal(r->out.data, "{\"id\":0,\"result\":{\"userAgent\":\"fake\"}}\n");
    assert_int_equal(r->res.term_signal, SIGTERM);
    run_end(r);
    unlink(jsonl);
    free(jsonl);
    free(e1);
}

static void test_fake_coder_version(void **state)
{
    (void)state;
    struct run *r = run_simple((struct bt_proc_options){
        .file = FAKE_CODER, .argv = ARGV("fake-coder", "--version"), .env = ENV("A=1")});
    assert_string_equal(r->out.data, "codex-cli 0.171.0\n");
    assert_int_equal(r->res.exit_status, 0);
    run_end(r);
    r = run_simple((struct bt_proc_options){.file = FAKE_CODER,
                                            .argv = ARGV("fake-coder", "--version"),
                                            .env = ENV("FAKE_CODER_VERSION=pi 0.73.1")});
    assert_string_equal(r->out.data, "pi 0.73.1\n");
    run_end(r);
}

/* ---- setup ----------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/bt-proc-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdout_large),
        cmocka_unit_test(test_done_waits_for_exit),
        cmocka_unit_test(test_grandchild_holds_stdout),
        cmocka_unit_test(test_grandchild_term),
        cmocka_unit_test(test_escaped_holder),
        cmocka_unit_test(test_exit_code_and_signal),
        cmocka_unit_test(test_missing_executable),
        cmocka_unit_test(test_stdin_cat_roundtrip),
        cmocka_unit_test(test_stdin_devnull),
        cmocka_unit_test(test_only_std_fds),
        cmocka_unit_test(test_write_epipe),
        cmocka_unit_test(test_stderr_tail),
        cmocka_unit_test(test_stop_term),
        cmocka_unit_test(test_stop_escalates_to_kill),
        cmocka_unit_test(test_stop_shortened),
        cmocka_unit_test(test_stop_grandchild_ignoring_term),
        cmocka_unit_test(test_free_in_done),
        cmocka_unit_test(test_free_while_running),
        cmocka_unit_test(test_fake_coder_replay),
        cmocka_unit_test(test_fake_coder_knobs),
        cmocka_unit_test(test_fake_coder_crash_and_hang),
        cmocka_unit_test(test_fake_coder_version),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
