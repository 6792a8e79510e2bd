/* SPDX-License-Identifier: MIT */
/* cmd-coders: `baton coders` lists every known coder, its path and version. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "coder.h"

static void print_json(const struct bt_coder *c, const char *path, const char *version)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_addc(&b, '{');
    bt_json_member(&b, "coder", c->name);
    bt_buf_addf(&b, ",\"installed\":%s", path ? "true" : "false");
    bt_json_member(&b, "path", path);
    bt_json_member(&b, "version", version);
    bt_buf_adds(&b, "}\n");
    fputs(b.data, stdout);
    bt_buf_release(&b);
}

int bt_cmd_coders(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else
            return c == 'h' ? bt_help(argv[0]) : bt_bad_option(argv);
    }
    if (optind != argc)
        return bt_usage(argv[0]);
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_coder *cd = bt_coders[i];
        char *path = bt_coder_locate(cd);
        char *version = NULL;
        if (path)
            bt_coder_version(cd, path, &version);
        if (json)
            print_json(cd, path, version);
        else if (path)
            printf("%-10s %-12s %s\n", cd->name, version ? version : "unknown", path);
        else
            printf("%-10s %-12s (set %s or put %s on PATH)\n", cd->name, "not installed",
                   cd->runner->bin_env, cd->runner->bin_name);
        free(version);
        free(path);
    }
    return BT_EXIT_OK;
}
