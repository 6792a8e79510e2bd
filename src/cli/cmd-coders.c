/* SPDX-License-Identifier: MIT */
/*
 * cmd-coders: `baton coders` lists every known coder, the executable baton
 * runs for it (the program behind an npm launcher, which is named too) and
 * its version, asked with `--version` (the one place baton always asks: a
 * turn takes the version from the coder's protocol or the store). What it
 * hears is stored for the turns, so `baton coders` also refreshes a version
 * a wrapper script in front of a coder kept from an older program. Each
 * version is compared with the versions baton was tested with (the fixture
 * directories, bt_coder_tested_versions): an untested one is said, so a
 * user knows which coder moved on since.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-opts.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"
#include "store.h"
#include "view.h"

/* Store what the coder said for the turns to come; a store that cannot be
 * opened only costs a turn a probe. */
static void remember(struct bt_store *s, const struct bt_coder *c, const struct bt_coder_exe *exe,
                     int rc, const char *version)
{
    struct bt_store_exe id;
    if (s && (rc == 0 || rc == BT_EPROTO) && bt_store_exe_stat(c->name, exe->path, &id) == 0)
        bt_store_coder_version_put(s, &id, version);
}

static void print_json(struct bt_cmd_list *l, const struct bt_coder *c,
                       const struct bt_coder_exe *exe, const char *version)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_view_coder(&b, c, exe, version);
    bt_cmd_list_put(l, b.data);
    bt_buf_release(&b);
}

/* The note under a coder's line whose version baton was not tested with:
 * "untested version; baton was tested with 0.171.0" (or "with no version"
 * for a coder without fixtures). */
static void print_untested(const struct bt_coder *c)
{
    struct bt_buf b = BT_BUF_INIT;
    const char *const *v = bt_coder_tested_versions(c);
    for (size_t i = 0; v[i]; i++)
        bt_buf_addf(&b, "%s%s", i ? (v[i + 1] ? ", " : " and ") : "", v[i]);
    printf("%-10s untested version; baton was tested with %s\n", "", b.len ? b.data : "no version");
    bt_buf_release(&b);
}

static void print_human(const struct bt_coder *c, const struct bt_coder_exe *exe,
                        const char *version)
{
    const char *over = getenv(c->runner->bin_env);
    if (!exe->path && over && *over) {
        char *why = bt_coder_not_found(c); /* the override is wrong: say so */
        printf("%-10s %-12s (%s)\n", c->name, "not installed", why);
        free(why);
    } else if (!exe->path) {
        printf("%-10s %-12s (set %s or put %s on PATH)\n", c->name, "not installed",
               c->runner->bin_env, c->runner->bin_name);
    } else if (exe->launcher)
        printf("%-10s %-12s %s (run directly; found behind the launcher %s)\n", c->name,
               version ? version : "unknown", exe->path, exe->launcher);
    else
        printf("%-10s %-12s %s\n", c->name, version ? version : "unknown", exe->path);
    if (version && !bt_coder_tested(c, version))
        print_untested(c);
}

static const struct bt_opt coders_opts[] = {LIST_OPTS("coder"), {0}};

const struct bt_cmd bt_cmd_def_coders = {
    .name = "coders",
    .run = bt_cmd_coders,
    .operands = "",
    .summary = "installed coders with version and path",
    .opts = coders_opts,
    .notes = "One line per coder: its version (asked with --version) and the program baton\n"
             "runs. A version baton was not tested with (the versions of its recordings,\n"
             "fixtures/<coder>/<version>/ in baton's source) gets a second line naming\n"
             "the versions it was tested with. --json: one object per coder with coder,\n"
             "installed, path, launcher, version, tested (true or false; null when not\n"
             "installed or the version is unknown) and tested_versions (an array).\n"};

int bt_cmd_coders(int argc, char **argv)
{
    struct bt_args a;
    struct bt_cmd_list l = {0};
    int id;
    bt_args_init(&a, &bt_cmd_def_coders, argc, argv);
    while ((id = bt_args_next(&a)) > 0)
        if (bt_cmd_list_option(&l, &a, id))
            return BT_EXIT_USAGE;
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    char *home = bt_store_default_home();
    struct bt_store *s = NULL;
    if (home)
        bt_store_open(home, &s, NULL);
    free(home);
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_coder *cd = bt_coders[i];
        struct bt_coder_exe exe;
        char *version = NULL;
        if (bt_coder_resolve(cd, &exe) == 0) {
            int vrc = bt_coder_version(cd, exe.path, &version);
            remember(s, cd, &exe, vrc, version);
        }
        if (l.format)
            print_json(&l, cd, &exe, version);
        else
            print_human(cd, &exe, version);
        free(version);
        bt_coder_exe_release(&exe);
    }
    bt_cmd_list_end(&l);
    bt_store_close(s);
    return BT_EXIT_OK;
}
