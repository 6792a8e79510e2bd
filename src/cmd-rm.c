/* SPDX-License-Identifier: MIT */
/*
 * cmd-rm: `baton rm CONV` deletes a conversation: its messages, runs and
 * events in one transaction (refused while a turn of it runs), then its
 * run files, then the coder's native session where the coder's runner can
 * find it (delete_session), unless the conversation was transferred to the
 * coder's own terminal UI, which owns the session from then on. Prints what
 * it removed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"
#include "store.h"

/* Print label, then text made safe for a terminal, then a newline. */
static void print_field(const char *label, const char *text)
{
    fputs(label, stdout);
    bt_term_write(stdout, text, strlen(text));
    putchar('\n');
}

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* Unlink the run files of r; returns BT_EXIT_FAILED if one could not go. */
static int remove_run_files(struct bt_store *s, const struct bt_store_removal *r)
{
    static const char *const suffixes[] = {".out.zst", ".err.zst", ".out", ".err"};
    int rc = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        for (size_t k = 0; k < BT_ARRAY_SIZE(suffixes); k++) {
            char *path = bt_store_run_file(s, r->runs[i], suffixes[k]);
            if (!path)
                continue;
            if (unlink(path) == 0)
                print_field("removed ", path);
            else if (errno != ENOENT)
                rc = bt_fail(BT_EXIT_FAILED, "cannot remove '%s': %s", path, strerror(errno));
            free(path);
        }
    }
    return rc;
}

/* Delete the coder's own session of c, where the coder's runner can. */
static int remove_native_session(const struct bt_store_conversation *c)
{
    const char *what = c->native_session_path ? c->native_session_path : c->native_session_id;
    if (!what)
        return 0;
    if (c->status == BT_STORE_CONV_TRANSFERRED) {
        printf("kept the %s session ", c->coder);
        bt_term_write(stdout, what, strlen(what));
        printf(": the conversation was handed to %s's own interface\n", c->coder);
        return 0;
    }
    const struct bt_coder *coder = bt_coder_find(c->coder);
    if (!coder || !coder->runner->delete_session) {
        printf("kept the %s session ", c->coder);
        bt_term_write(stdout, what, strlen(what));
        printf(": baton cannot remove %s sessions\n", c->coder);
        return 0;
    }
    struct bt_runner_config cfg = {.cwd = c->cwd,
                                   .native_session_id = c->native_session_id,
                                   .native_session_path = c->native_session_path};
    struct bt_strv removed;
    bt_strv_init(&removed);
    int err = coder->runner->delete_session(&cfg, &removed);
    for (size_t i = 0; i < removed.n; i++) {
        printf("removed %s session file ", c->coder);
        print_field("", removed.v[i]);
    }
    int rc = 0;
    if (err == -EINVAL) {
        printf("kept the %s session ", c->coder);
        bt_term_write(stdout, what, strlen(what));
        printf(": it does not name a %s session file\n", c->coder);
    } else if (err) {
        rc = bt_fail(BT_EXIT_FAILED, "cannot remove the %s session of %s: %s", c->coder, c->id,
                     bt_strerror(err));
    } else if (removed.n == 0) {
        printf("no %s session file found for ", c->coder);
        print_field("", what);
    }
    bt_strv_release(&removed);
    return rc;
}

int bt_cmd_rm(int argc, char **argv)
{
    struct bt_args a;
    int rc = bt_args_parse_plain(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char id[BT_ID_SIZE];
    rc = bt_cmd_open_store(&s);
    if (rc)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], id)) != 0) {
        bt_store_close(s);
        return rc;
    }
    struct bt_store_removal r;
    int err = bt_store_conversation_delete(s, id, &r);
    if (err == BT_EBUSY) {
        rc = bt_fail(BT_EXIT_USAGE,
                     "conversation %s has a turn running: wait for it to end or cancel it, "
                     "then remove it",
                     id);
    } else if (err == BT_ENOTFOUND) {
        rc = bt_fail(BT_EXIT_USAGE, "no conversation matches '%s'", a.operands[0]);
    } else if (err) {
        rc = bt_fail(BT_EXIT_FAILED, "cannot remove conversation %s: %s", id, bt_store_errmsg(s));
    } else {
        printf("removed conversation %s (%lld %s, %zu %s, %lld %s): ", id, (long long)r.messages,
               plural(r.messages, "message", "messages"), r.n_runs,
               plural((int64_t)r.n_runs, "run", "runs"), (long long)r.events,
               plural(r.events, "event", "events"));
        print_field("", r.conv.title);
        rc = remove_run_files(s, &r);
        int nrc = remove_native_session(&r.conv);
        rc = rc ? rc : nrc;
    }
    bt_store_removal_release(&r);
    bt_store_close(s);
    return rc;
}
