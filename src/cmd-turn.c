/* SPDX-License-Identifier: MIT */
/*
 * cmd-turn: what the commands that run turns share (cmd-run.c: run, send,
 * retry; cmd-worker.c: __worker): the turn options and their values, and
 * starting a detached worker, then hearing its report (cmd-worker.c's
 * header has the report's lines).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "error.h"
#include "id.h"
#include "proc.h"
#include "slot.h"

/* How long a detaching command waits for the worker's report: the worker
 * probes the coder's version first (bounded at 10 s) */
#define WORKER_REPORT_MS 60000

/* Seconds as a decimal number, 0 meaning "no limit"; anything else below a
 * millisecond becomes one, so a tiny limit never turns into none. */
int bt_cmd_parse_seconds(const char *s, uint64_t *ms)
{
    /* digits, then at most one fraction: no sign, space, hex or exponent,
     * which strtod would take */
    size_t whole = strspn(s, "0123456789"), frac = 0;
    if (s[whole] == '.')
        frac = strspn(s + whole + 1, "0123456789") + 1;
    if (whole + frac == 0 || s[whole + frac] || (frac == 1 && whole == 0))
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v <= 1e7))
        return -1;
    *ms = (uint64_t)(v * 1000.0);
    if (*ms == 0 && v > 0)
        *ms = 1;
    return 0;
}

int bt_cmd_parse_approval(const char *s, enum bt_approval *a)
{
    if (strcmp(s, "deny") == 0 || strcmp(s, "decline") == 0)
        *a = BT_APPROVAL_DENY;
    else if (strcmp(s, "auto") == 0)
        *a = BT_APPROVAL_AUTO;
    else if (strcmp(s, "never") == 0)
        *a = BT_APPROVAL_NEVER;
    else if (strcmp(s, "ask") == 0)
        *a = BT_APPROVAL_ASK;
    else
        return -1;
    return 0;
}

/* The options every turn takes (also the worker's); returns 0 when id was
 * one of them, 1 when it was not, or an exit code. */
int bt_cmd_turn_option(const struct bt_args *a, int id, struct bt_service_turn *t)
{
    switch (id) {
    case 'r': t->no_retry = 1; return 0;
    case 'S': t->no_snapshot = 1; return 0;
    case 'a':
        if (bt_cmd_parse_approval(a->value, &t->approval))
            return bt_args_fail(a, "--approval takes deny, auto, never or ask, not '%s'", a->value);
        return 0;
    case 't':
        if (bt_cmd_parse_seconds(a->value, &t->timeout_ms))
            return bt_args_fail(a, "--timeout takes seconds, e.g. 300, not '%s'", a->value);
        return 0;
    case 'i':
        if (bt_cmd_parse_seconds(a->value, &t->idle_timeout_ms))
            return bt_args_fail(a, "--idle-timeout takes seconds, e.g. 120, not '%s'", a->value);
        return 0;
    default: return 1;
    }
}

static const char *approval_name(enum bt_approval a)
{
    switch (a) {
    case BT_APPROVAL_AUTO: return "auto";
    case BT_APPROVAL_NEVER: return "never";
    case BT_APPROVAL_ASK: return "ask";
    default: return "deny";
    }
}

static const char *worker_exe; /* NULL: this program */

void bt_cmd_worker_exe(const char *path)
{
    worker_exe = path;
}

int bt_cmd_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
                        int *notify_fd)
{
    char exe[PATH_MAX], timeout[32], idle[32];
    ssize_t n =
        worker_exe ? (ssize_t)strlen(worker_exe) : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe)
        return n < 0 ? -errno : -ENOENT;
    if (worker_exe)
        memcpy(exe, worker_exe, (size_t)n);
    exe[n] = '\0';
    snprintf(timeout, sizeof timeout, "%.3f", (double)t->timeout_ms / 1000.0);
    snprintf(idle, sizeof idle, "%.3f", (double)t->idle_timeout_ms / 1000.0);
    char *argv[20];
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
    if (t->no_snapshot)
        argv[i++] = "--no-snapshot";
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
        return bt_cmd_fail((int)code, "%s", end + 1);
    char *home = bt_store_default_home();
    bt_cmd_fail(BT_EXIT_FAILED, "the worker ended before it started the turn (see %s/worker.log)",
                home ? home : "$BATON_HOME");
    free(home);
    return BT_EXIT_FAILED;
}

int bt_cmd_worker_report(int fd, char run[BT_ID_SIZE], char **why)
{
    char line[4096] = "", c[64], r[64];
    read_report(fd, line, sizeof line);
    close(fd);
    run[0] = '\0';
    *why = NULL;
    if (sscanf(line, "run %63s %63s", c, r) == 2 && bt_id_valid(c) && bt_id_valid(r)) {
        memcpy(run, r, BT_ID_SIZE);
        return 0;
    }
    char *end;
    long code = strncmp(line, "end ", 4) == 0 ? strtol(line + 4, &end, 10) : -1;
    if (code >= 0 && code < 256 && *end == ' ') {
        *why = bt_xstrdup(end + 1);
        return code ? (int)code : BT_EXIT_FAILED;
    }
    *why = bt_xstrdup("the worker ended before it started the turn (see $BATON_HOME/worker.log)");
    return BT_EXIT_FAILED;
}

int bt_cmd_worker_detach(struct bt_store *s, const char *mode, const char *conv, int64_t queued,
                         const struct bt_service_turn *t, int json)
{
    int fd = -1;
    const char *bad = NULL; /* the worker says so only in worker.log */
    int limit = bt_slot_limit(&bad);
    if (bad)
        fprintf(stderr, "baton: BATON_MAX_TURNS is a number from 1 to %d, not '%s'; %d it is\n",
                BT_SLOT_MAX, bad, limit);
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
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot start a worker: %s", bt_strerror(rc));
    }
    if (queued > 0 && bt_store_message_discard(s, conv, queued) == 0)
        fputs("baton: nothing was sent (the prompt queued for it was taken back)\n", stderr);
    return rc;
}
