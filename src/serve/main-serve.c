/* SPDX-License-Identifier: MIT */
/*
 * main-serve: baton-serve, the program `baton serve` runs (cmd-serve.c):
 * `baton serve [--listen HOST:PORT] [--allow-remote] [--ping S]
 * [--max-turns N]`, the HTTP
 * + SSE API and web page (serve.h, docs/api.md). Its options are the
 * serve command's of the CLI's table (so this main, like main.c, is of
 * the CLI: the server itself, serve*.c, includes no cmd-* header); workers
 * it starts are the baton beside it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "serve.h"
#include "service-conv.h"
#include "slot.h"

/* "HOST:PORT" or "[V6]:PORT" into host (owned by buf) and port. */
static int parse_listen(const char *text, char *buf, size_t cap, int *port)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= cap)
        return -1;
    size_t n = (size_t)(colon - text);
    if (text[0] == '[') {
        if (n < 3 || text[n - 1] != ']')
            return -1;
        memcpy(buf, text + 1, n - 2);
        buf[n - 2] = '\0';
    } else {
        if (memchr(text, ':', n))
            return -1; /* a bare IPv6 address needs its brackets */
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

static int serve(int argc, char **argv, const char *baton)
{
    struct bt_serve_opts o = {.host = "127.0.0.1", .port = 7700, .baton = baton};
    static char host[256];
    struct bt_args a;
    int id;
    bt_args_init(&a, &bt_cmd_def_serve, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        switch (id) {
        case 'l':
            if (parse_listen(a.value, host, sizeof host, &o.port) != 0)
                return bt_args_fail(&a,
                                    "--listen takes HOST:PORT (port 0 picks one; [ADDR]:PORT "
                                    "for IPv6), not '%s'",
                                    a.value);
            o.host = host;
            break;
        case 'R': o.allow_remote = 1; break;
        case 'T': {
            int n;
            if (bt_slot_parse(a.value, &n) != 0)
                return bt_args_fail(&a, "--max-turns takes a number from 1 to %d, not '%s'",
                                    BT_SLOT_MAX, a.value);
            /* the workers read it (slot.h): they inherit the environment */
            setenv("BATON_MAX_TURNS", a.value, 1);
            break;
        }
        case 'p':
            if (bt_service_seconds_parse(a.value, &o.ping_ms) != 0 || o.ping_ms == 0 ||
                o.ping_ms > 30000)
                return bt_args_fail(&a,
                                    "--ping takes seconds between pings, more than 0 and at "
                                    "most 30, not '%s'",
                                    a.value);
            break;
        }
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *bad = NULL; /* else only the workers would say so, in worker.log */
    bt_slot_limit(&bad);
    if (bad) {
        fprintf(stderr, "baton serve: BATON_MAX_TURNS is a number from 1 to %d, not '%s'\n",
                BT_SLOT_MAX, bad);
        return BT_EXIT_USAGE;
    }
    struct bt_service_outcome out = {0};
    out.result = bt_serve_run(&o);
    return bt_cmd_exit_service(&out);
}

/* The baton beside this program, for the workers. */
static int find_baton(char exe[PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (!slash || (size_t)(slash - exe) + sizeof "/baton" > PATH_MAX)
        return -1;
    memcpy(slash, "/baton", sizeof "/baton");
    return access(exe, X_OK);
}

int main(int argc, char **argv)
{
    static char baton[PATH_MAX];
    if (find_baton(baton) != 0) {
        fprintf(stderr, "baton-serve: baton is not beside this program (%s)\n", baton);
        return BT_EXIT_FAILED;
    }
    bt_service_worker_exe(baton);
    argv[0] = "serve"; /* the command of the table whose options these are */
    return serve(argc, argv, baton);
}
