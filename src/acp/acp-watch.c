/* SPDX-License-Identifier: MIT */
/*
 * acp-watch: what stops `baton acp` besides the end of stdin (acp-int.h).
 * A thread of its own runs a libuv loop that watches SIGINT, SIGTERM and
 * SIGHUP: libuv hands a signal to every loop that watches it, so a running
 * turn's loop sees it too and stops its coder, while this one tells the
 * agent. It never takes the agent's lock, so a signal is seen while
 * another thread is stuck writing to an editor that reads nothing. The
 * news goes through a pipe whose read end stays readable once written:
 * the main thread polls it beside stdin, and writers poll it beside
 * stdout (acp-rpc.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "acp-int.h"
#include "util.h"

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

struct bt_acp_watch {
    uv_loop_t loop;
    uv_signal_t signals[BT_ARRAY_SIZE(stop_signals)];
    uv_async_t quit;
    pthread_t thread;
    struct bt_acp *a;
};

void bt_acp_wake(struct bt_acp *a)
{
    ssize_t n;
    do /* one byte is enough: nobody drains the pipe, it stays readable */
        n = write(a->stop_pipe[1], "x", 1);
    while (n < 0 && errno == EINTR);
}

static void on_signal(uv_signal_t *h, int signo)
{
    struct bt_acp_watch *w = h->data;
    int none = 0;
    atomic_compare_exchange_strong(&w->a->signo, &none, signo); /* the first one counts */
    bt_acp_wake(w->a);
}

static void on_quit(uv_async_t *h)
{
    struct bt_acp_watch *w = h->data;
    for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++)
        uv_close((uv_handle_t *)&w->signals[i], NULL);
    uv_close((uv_handle_t *)&w->quit, NULL);
}

static void *watch_main(void *arg)
{
    struct bt_acp_watch *w = arg;
    uv_run(&w->loop, UV_RUN_DEFAULT); /* until on_quit closes every handle */
    return NULL;
}

int bt_acp_watch_start(struct bt_acp *a)
{
    if (pipe(a->stop_pipe) != 0) /* pipe2 is not POSIX 2008 */
        return -errno;
    for (int i = 0; i < 2; i++) { /* no coder inherits it; a full pipe never blocks a writer */
        fcntl(a->stop_pipe[i], F_SETFD, FD_CLOEXEC);
        fcntl(a->stop_pipe[i], F_SETFL, fcntl(a->stop_pipe[i], F_GETFL) | O_NONBLOCK);
    }
    struct bt_acp_watch *w = bt_xcalloc(1, sizeof(*w));
    w->a = a;
    int rc = uv_loop_init(&w->loop);
    if (rc == 0) {
        uv_async_init(&w->loop, &w->quit, on_quit);
        w->quit.data = w;
        for (size_t i = 0; i < BT_ARRAY_SIZE(stop_signals); i++) {
            uv_signal_init(&w->loop, &w->signals[i]);
            w->signals[i].data = w;
            uv_signal_start(&w->signals[i], on_signal, stop_signals[i]);
        }
        rc = -pthread_create(&w->thread, NULL, watch_main, w);
        if (rc) {
            on_quit(&w->quit);
            uv_run(&w->loop, UV_RUN_DEFAULT);
            uv_loop_close(&w->loop);
        }
    }
    if (rc) {
        free(w);
        close(a->stop_pipe[0]);
        close(a->stop_pipe[1]);
        return rc;
    }
    a->watch = w;
    return 0;
}

void bt_acp_watch_stop(struct bt_acp *a)
{
    struct bt_acp_watch *w = a->watch;
    if (!w)
        return;
    uv_async_send(&w->quit);
    pthread_join(w->thread, NULL);
    uv_loop_close(&w->loop);
    free(w);
    a->watch = NULL;
    close(a->stop_pipe[0]);
    close(a->stop_pipe[1]);
    a->stop_pipe[0] = a->stop_pipe[1] = -1; /* poll passes over them */
}
