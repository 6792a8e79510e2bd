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

#include "cmd-common.h"
#include "cmd.h"

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
