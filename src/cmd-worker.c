/* SPDX-License-Identifier: MIT */
/*
 * cmd-worker: detached workers. `baton run|send|retry --detach` and a
 * foreground turn that leaves queued messages behind start a worker, the
 * hidden command `baton __worker MODE [OPTIONS] -- CONV`: a process in a
 * session of its own that runs the turn (MODE flush: what is queued; retry:
 * the last prompt again), then, while each turn completes and more is
 * queued, the next one. It owns its runs like any baton process, so a
 * worker that dies is recovered by the next command (interrupted), and
 * `baton attach` follows its turns from the store.
 *
 * With --notify the worker reports on fd 3, one line, then closes it:
 *   "run CONV RUN"        the run exists and its turn starts
 *   "end CODE MESSAGE"    no run started: the exit code and why (CODE 0:
 *                         nothing was queued any more)
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-exit.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "error.h"
#include "id.h"
#include "proc.h"

/* How long a detaching command waits for the worker's report: the worker
 * probes the coder's version first (bounded at 10 s) */
#define WORKER_REPORT_MS 60000
#define NOTIFY_FD 3

static const char *approval_name(enum bt_approval a)
{
    switch (a) {
    case BT_APPROVAL_AUTO: return "auto";
    case BT_APPROVAL_NEVER: return "never";
    default: return "deny";
    }
}

int bt_cmd_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
                        int *notify_fd)
{
    char exe[PATH_MAX], timeout[32], idle[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return n < 0 ? -errno : -ENOENT;
    exe[n] = '\0';
    snprintf(timeout, sizeof timeout, "%.3f", (double)t->timeout_ms / 1000.0);
    snprintf(idle, sizeof idle, "%.3f", (double)t->idle_timeout_ms / 1000.0);
    char *argv[16];
    int i = 0;
    argv[i++] = exe;
    argv[i++] = "__worker";
    argv[i++] = (char *)mode;
    argv[i++] = "--approval";
    argv[i++] = (char *)approval_name(t->approval);
    argv[i++] = "--timeout";
    argv[i++] = timeout;
    argv[i++] = "--idle-timeout";
    argv[i++] = idle;
    if (t->no_retry)
        argv[i++] = "--no-retry";
    if (t->force)
        argv[i++] = "--force";
    if (notify_fd)
        argv[i++] = "--notify";
    argv[i++] = "--";
    argv[i++] = (char *)conv;
    argv[i] = NULL;
    char *home = bt_store_default_home();
    char *log = home ? bt_xasprintf("%s/worker.log", home) : NULL;
    int rc = bt_proc_spawn_worker(argv, log, notify_fd);
    free(log);
    free(home);
    return rc;
}

/* Read the worker's one line (at most WORKER_REPORT_MS); "" on EOF. */
static void read_report(int fd, char *line, size_t cap)
{
    size_t len = 0;
    while (len + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, WORKER_REPORT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t n = r > 0 ? read(fd, line + len, cap - 1 - len) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (memchr(line, '\n', len))
            break;
    }
    line[len] = '\0';
    line[strcspn(line, "\n")] = '\0';
}

static int report_started(const char *conv, const char *run, int json)
{
    if (json) {
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_addc(&b, '{');
        bt_json_member(&b, "conversation", conv);
        bt_json_member(&b, "run", run);
        bt_buf_adds(&b, ",\"detached\":true}\n");
        fputs(b.data, stdout);
        bt_buf_release(&b);
    } else {
        printf("%s\n", conv);
        fprintf(stderr,
                "baton: the turn runs in a detached worker: `baton attach %.12s` follows it\n",
                conv);
    }
    return BT_EXIT_OK;
}

/* Why no turn started, from the worker's report (an exit code). */
static int report_failure(const char *line)
{
    char *end;
    long code = strncmp(line, "end ", 4) == 0 ? strtol(line + 4, &end, 10) : -1;
    if (code > 0 && code < 256 && *end == ' ')
        return bt_fail((int)code, "%s", end + 1);
    char *home = bt_store_default_home();
    bt_fail(BT_EXIT_FAILED, "the worker ended before it started the turn (see %s/worker.log)",
            home ? home : "$BATON_HOME");
    free(home);
    return BT_EXIT_FAILED;
}

int bt_cmd_worker_detach(struct bt_store *s, const char *mode, const char *conv, int64_t queued,
                         const struct bt_service_turn *t, int json)
{
    int fd = -1;
    int rc = bt_cmd_worker_start(mode, conv, t, &fd);
    if (rc == 0) {
        char line[4096] = "", c[64], r[64];
        read_report(fd, line, sizeof line);
        close(fd);
        if (sscanf(line, "run %63s %63s", c, r) == 2 && bt_id_valid(c) && bt_id_valid(r))
            return report_started(c, r, json);
        if (strncmp(line, "end 0 ", 6) == 0) /* another turn took the queue meanwhile */
            return report_started(conv, NULL, json);
        rc = report_failure(line);
    } else {
        rc = bt_fail(BT_EXIT_FAILED, "cannot start a worker: %s", bt_strerror(rc));
    }
    if (queued > 0 && bt_store_message_discard(s, conv, queued) == 0)
        fputs("baton: nothing was sent (the prompt queued for it was taken back)\n", stderr);
    return rc;
}

/* --- the worker ------------------------------------------------------- */

struct notify {
    int fd; /* NOTIFY_FD until the one report is written, then -1 */
};

static void notify_line(struct notify *n, const char *line)
{
    if (n->fd < 0)
        return;
    size_t len = strlen(line);
    while (len > 0) {
        ssize_t w = write(n->fd, line, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        line += w;
        len -= (size_t)w;
    }
    close(n->fd);
    n->fd = -1;
}

static void notify_run(void *data, const char *conv, const char *run)
{
    char line[128];
    snprintf(line, sizeof line, "run %s %s\n", conv, run);
    notify_line(data, line);
}

static void notify_end(struct notify *n, int code, const char *message)
{
    if (n->fd < 0)
        return;
    char *msg = bt_xasprintf("end %d %s\n", code, message ? message : "");
    for (char *p = msg; p[1]; p++) /* one line */
        if (*p == '\n')
            *p = ' ';
    notify_line(n, msg);
    free(msg);
}

static int worker_parse(int argc, char **argv, struct bt_service_turn *t, int *notify,
                        const char **mode, const char **conv)
{
    struct bt_args a;
    int id;
    t->idle_timeout_ms = BT_CMD_IDLE_TIMEOUT_MS;
    bt_args_init(&a, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        int rc = bt_cmd_turn_option(&a, id, t);
        if (rc == 1 && id == 'n')
            *notify = 1;
        else if (rc == 1 && id == 'f')
            t->force = 1;
        else if (rc)
            return rc == 1 ? BT_EXIT_USAGE : rc;
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc) /* -1: the help was printed */
        return rc;
    *mode = a.operands[0];
    *conv = a.operands[1];
    if (strcmp(*mode, "flush") != 0 && strcmp(*mode, "retry") != 0)
        return bt_args_fail(&a, "MODE is flush or retry, not '%s'", *mode);
    return 0;
}

int bt_cmd_worker(int argc, char **argv)
{
    struct bt_service_turn t = {0};
    struct notify n = {.fd = -1};
    int notify = 0;
    const char *mode, *conv;
    int rc = worker_parse(argc, argv, &t, &notify, &mode, &conv);
    if (rc)
        return rc < 0 ? BT_EXIT_OK : rc;
    int retry = strcmp(mode, "retry") == 0;
    n.fd = notify ? NOTIFY_FD : -1;
    t.on_run = notify_run;
    t.data = &n;
    struct bt_store *s = NULL;
    if ((rc = bt_cmd_open_store(&s)) != 0) {
        notify_end(&n, rc, "cannot open the store");
        return rc;
    }
    for (;;) {
        struct bt_service_outcome out;
        rc = retry ? bt_service_retry(s, conv, &t, &out) : bt_service_flush(s, conv, &t, &out);
        notify_end(&n, bt_cmd_exit_service(&out), out.message);
        if (out.message)
            fprintf(stderr, "baton worker %s: %s\n", conv, out.message);
        int more = rc == 0 && out.completed && out.waiting > 0;
        rc = bt_cmd_exit_service(&out);
        free(out.message);
        if (!more)
            break;
        retry = 0;
    }
    bt_store_close(s);
    return rc;
}
