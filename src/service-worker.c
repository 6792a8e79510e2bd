/* SPDX-License-Identifier: MIT */
/*
 * service-worker: starting a detached worker (service-conv.h), the hidden
 * command `baton __worker MODE [OPTIONS] -- CONV` (cmd-worker.c), for
 * `run|send|retry --detach`, a foreground turn that leaves queued messages
 * behind, and every turn `baton serve` starts; and reading the one line
 * the worker reports on its notify pipe:
 *   "run CONV RUN"        the run exists and its turn starts
 *   "end CODE MESSAGE"    no run started: its exit code and why (CODE 0:
 *                         nothing was queued any more)
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "id.h"
#include "proc.h"
#include "service-conv.h"

/* How long a reader waits for the worker's report: the worker probes the
 * coder's version first (bounded at 10 s) */
#define WORKER_REPORT_MS 60000

int bt_service_seconds_parse(const char *s, uint64_t *ms)
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

int bt_service_approval_parse(const char *s, enum bt_approval *a)
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

const char *bt_service_approval_name(enum bt_approval a)
{
    switch (a) {
    case BT_APPROVAL_AUTO: return "auto";
    case BT_APPROVAL_NEVER: return "never";
    case BT_APPROVAL_ASK: return "ask";
    default: return "deny";
    }
}

static const char *worker_exe; /* NULL: this program */

void bt_service_worker_exe(const char *path)
{
    worker_exe = path;
}

int bt_service_worker_start(const char *mode, const char *conv, const struct bt_service_turn *t,
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
    argv[i++] = (char *)bt_service_approval_name(t->approval);
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

/* The result a worker's exit code means (cmd.h's BT_EXIT_*: the worker's
 * report carries the code it exits with). */
static enum bt_service_result code_result(long code, struct bt_service_outcome *out)
{
    switch (code) {
    case 0: return BT_SERVICE_OK;
    case 2: return BT_SERVICE_USAGE;
    case 3: return BT_SERVICE_NOT_INSTALLED;
    case 4: out->error_kind = BT_ERROR_KIND_AUTH_REQUIRED; return BT_SERVICE_FAILED;
    case 130: return BT_SERVICE_CANCELLED;
    default: return BT_SERVICE_FAILED;
    }
}

int bt_service_worker_line(const char *line, struct bt_service_outcome *out)
{
    char c[64], r[64];
    out->run[0] = '\0';
    if (sscanf(line, "run %63s %63s", c, r) == 2 && bt_id_valid(c) && bt_id_valid(r)) {
        memcpy(out->conversation, c, BT_ID_SIZE);
        memcpy(out->run, r, BT_ID_SIZE);
        out->result = BT_SERVICE_OK;
        return 0;
    }
    char *end = NULL;
    long code = strncmp(line, "end ", 4) == 0 ? strtol(line + 4, &end, 10) : -1;
    if (code >= 0 && code < 256 && *end == ' ') {
        out->result = code_result(code, out);
        out->message = bt_xstrdup(end + 1);
        return code == 0 ? 0 : -1;
    }
    char *home = bt_store_default_home();
    out->result = BT_SERVICE_FAILED;
    out->message = bt_xasprintf("the worker ended before it started the turn (see %s/worker.log)",
                                home ? home : "$BATON_HOME");
    free(home);
    return -1;
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

int bt_service_worker_report(int fd, struct bt_service_outcome *out)
{
    char line[4096] = "";
    read_report(fd, line, sizeof line);
    close(fd);
    return bt_service_worker_line(line, out);
}

int bt_service_take_back(struct bt_store *s, const char *conv, int64_t msg, int created)
{
    int rc = msg > 0 ? bt_store_message_discard(s, conv, msg) : BT_ENOTFOUND;
    struct bt_store_run last = {0};
    if (created && bt_store_run_last(s, conv, &last) == BT_ENOTFOUND) {
        struct bt_store_removal gone = {0};
        if (bt_store_conversation_delete(s, conv, &gone) == 0)
            bt_store_removal_release(&gone);
    }
    bt_store_run_release(&last);
    return rc;
}
