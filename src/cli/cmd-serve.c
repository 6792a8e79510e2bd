/* SPDX-License-Identifier: MIT */
/*
 * cmd-serve: `baton serve` runs baton-serve, the program beside this one
 * (same directory, as the build and `cmake --install` put them), with the
 * same arguments. The server is its own program so that libmicrohttpd and
 * what it loads (GnuTLS, p11-kit: about 2 ms at every start) are paid by
 * the server only, never by `baton run` and the other commands.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"

static const struct bt_opt serve_opts[] = {
    {.id = 'l',
     .name = "listen",
     .value = "HOST:PORT",
     .help = "the address to listen on (default 127.0.0.1:7700;\nport 0 picks a free one)"},
    {.id = 'R',
     .name = "allow-remote",
     .help = "listen on an address that is not loopback (anyone\nwho reaches it and has the token "
             "drives your coders)"},
    {.id = 'p',
     .name = "ping",
     .value = "S",
     .help = "seconds between keepalive pings on event streams\n(default 15, at most 30)"},
    {.id = 'T',
     .name = "max-turns",
     .value = "N",
     .help = "turns whose coders run at once (its workers and\nevery other detached one); "
             "more wait, in order\n(default $BATON_MAX_TURNS, else from the cores\nand memory)"},
    {0},
};

const struct bt_cmd bt_cmd_def_serve = {
    .name = "serve",
    .run = bt_cmd_serve,
    .operands = "",
    .summary = "the HTTP + SSE API and a web page, on loopback",
    .opts = serve_opts,
    .notes = "Prints the page's address with the token (kept in $BATON_HOME/serve.token,\n"
             "mode 0600) on stdout. Every /v1 request needs the token; Host and Origin\n"
             "must be this server's own. Turns started through it run in detached\n"
             "workers, so stopping the server loses nothing. The API: docs/api.md and\n"
             "GET /v1/openapi.json.\n"};

int bt_cmd_serve(int argc, char **argv)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (!slash || (size_t)(slash - exe) + sizeof "/baton-serve" > sizeof exe)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot find where baton is installed");
    memcpy(slash, "/baton-serve", sizeof "/baton-serve");
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return bt_cmd_fail(BT_EXIT_FAILED, "out of memory");
    args[0] = "baton-serve";
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    execv(exe, args);
    int e = errno;
    free(args);
    return bt_cmd_fail(BT_EXIT_FAILED, "cannot run %s: %s (it is built and installed beside baton)",
                       exe, strerror(e));
}
