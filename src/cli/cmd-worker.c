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
 * Starting one and reading its report is the service's (service-worker.c,
 * bt_service_worker_start and bt_service_worker_line; cmd-turn.c's
 * bt_cmd_worker_detach says what came of it). With --notify the worker
 * reports on fd 3, one line, then closes it:
 *   "run CONV RUN"        the run exists and its turn starts
 *   "end CODE MESSAGE"    no run started: the exit code and why (CODE 0:
 *                         nothing was queued any more)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-opts.h"
#include "cmd-exit.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "util.h"

#define NOTIFY_FD 3

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
    bt_args_init(&a, &bt_cmd_def_worker, argc, argv);
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

static const struct bt_opt worker_opts[] = {
    TURN_OPTS,
    {.id = 'f', .name = "force", .help = "a conversation handed off to the coder's UI"},
    {.id = 'n', .name = "notify", .help = "report the run and its end on fd 3"},
    {0}};

const struct bt_cmd bt_cmd_def_worker = {.name = "__worker",
                                         .run = bt_cmd_worker,
                                         .operands = "MODE CONV",
                                         .summary = "a detached worker (MODE flush or retry)",
                                         .opts = worker_opts,
                                         .notes = ""};

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
    t.slot = 1; /* every turn of a worker takes a turn slot (slot.h) */
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
