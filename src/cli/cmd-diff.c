/* SPDX-License-Identifier: MIT */
/*
 * cmd-diff: `baton diff CONV [--turn N] [--stat] [--json]`, what a turn or
 * the whole conversation changed in its git working tree, from the
 * snapshots its runs kept (src/repo.h, docs/events.md "changes"): a
 * unified diff as git prints it (colour on a terminal only), a diffstat,
 * or the changes as JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-args.h"
#include "json.h"
#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "repo.h"
#include "store.h"
#include "util.h"

struct diff_opts {
    int64_t turn; /* 0: the whole conversation */
    int stat, json;
};

/* The snapshots that bound turn (0: every turn) among the runs v: the
 * first snapshot before, the last after. A turn run again (retry) is its
 * last run's. Returns 0, or BT_ENOTFOUND when no run of it kept both. */
static int bounds(const struct bt_store_run *v, size_t n, int64_t turn, const char **from,
                  const char **to)
{
    *from = *to = NULL;
    for (size_t i = 0; i < n; i++) {
        if ((turn && v[i].turn != turn) || !v[i].tree_start || !v[i].tree_end)
            continue;
        if (!*from || turn)
            *from = v[i].tree_start; /* a turn: its last run's */
        *to = v[i].tree_end;
    }
    return *from && *to ? 0 : BT_ENOTFOUND;
}

/* 1 if the snapshots of turn (0: all) are the same tree: nothing changed. */
static int nothing(const struct bt_store_run *v, size_t n, int64_t turn)
{
    const char *from, *to;
    return bounds(v, n, turn, &from, &to) == 0 && strcmp(from, to) == 0;
}

/* turn.completed's changes.reason of a run whose changes are unknown
 * (docs/events.md), in *(char **)data. */
static int unknown_of(void *data, const struct bt_store_event *ev)
{
    if (strcmp(ev->type, "turn.completed") != 0)
        return 0;
    cJSON *j = cJSON_ParseWithLength(ev->data, ev->len);
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "changes");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(ch, "reason");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ch, "unknown")) && cJSON_IsString(why)) {
        free(*(char **)data);
        *(char **)data = bt_xstrdup(why->valuestring);
    }
    cJSON_Delete(j);
    return 0;
}

/* Why the last run of turn (0: any turn) has unknown changes (owned), or
 * NULL: its untracked files were over a snapshot's bounds. */
static char *unknown_reason(struct bt_store *s, const struct bt_store_run *v, size_t n,
                            int64_t turn)
{
    char *why = NULL;
    for (size_t i = n; i-- > 0 && !why;)
        if (!turn || v[i].turn == turn)
            bt_store_event_each(s, v[i].id, 1, unknown_of, &why);
    return why;
}

static int has_turn(const struct bt_store_run *v, size_t n, int64_t turn)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].turn == turn)
            return 1;
    return 0;
}

/* path as git shows it in --stat (core.quotePath): in double quotes with
 * C escapes, octal for control characters and bytes of 0x80 and up, when
 * it has any of those or a quote or a backslash; else as it is. */
static void add_quoted(struct bt_buf *b, const char *path)
{
    int plain = 1;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
            plain = 0;
    if (plain) {
        bt_buf_adds(b, path);
        return;
    }
    bt_buf_addc(b, '"');
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        const char *esc = *p == '\n'   ? "\\n"
                          : *p == '\t' ? "\\t"
                          : *p == '"'  ? "\\\""
                          : *p == '\\' ? "\\\\"
                                       : NULL;
        if (esc)
            bt_buf_adds(b, esc);
        else if (*p < 0x20 || *p >= 0x7f)
            bt_buf_addf(b, "\\%03o", *p);
        else
            bt_buf_addc(b, (char)*p);
    }
    bt_buf_addc(b, '"');
}

/* " path | N +++--" per file, then the sums, as `git diff --stat` says
 * them (the bar scaled to at most 40 signs), into out. */
static void stat_of(const struct bt_repo_changes *c, struct bt_buf *out)
{
    size_t width = 0;
    int64_t most = 0;
    struct bt_buf *names = bt_xcalloc(c->n ? c->n : 1, sizeof(*names));
    for (size_t i = 0; i < c->n; i++) {
        const struct bt_repo_change *ch = &c->v[i];
        bt_buf_init(&names[i]);
        if (ch->old_path) {
            add_quoted(&names[i], ch->old_path);
            bt_buf_adds(&names[i], " => ");
        }
        add_quoted(&names[i], ch->path);
        width = names[i].len > width ? names[i].len : width;
        most = ch->added + ch->removed > most ? ch->added + ch->removed : most;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct bt_repo_change *ch = &c->v[i];
        bt_buf_addf(out, " %-*s | ", (int)width, names[i].data);
        if (ch->binary) {
            bt_buf_adds(out, "Bin\n");
            continue;
        }
        int64_t plus = most > 40 ? ch->added * 40 / most : ch->added;
        int64_t minus = most > 40 ? ch->removed * 40 / most : ch->removed;
        bt_buf_addf(out, "%lld ", (long long)ch->added + (long long)ch->removed);
        for (int64_t k = 0; k < plus; k++)
            bt_buf_addc(out, '+');
        for (int64_t k = 0; k < minus; k++)
            bt_buf_addc(out, '-');
        bt_buf_addc(out, '\n');
    }
    bt_buf_addf(out, " %zu file%s changed", c->n, c->n == 1 ? "" : "s");
    if (c->added)
        bt_buf_addf(out, ", %lld insertion%s(+)", (long long)c->added, c->added == 1 ? "" : "s");
    if (c->removed)
        bt_buf_addf(out, ", %lld deletion%s(-)", (long long)c->removed, c->removed == 1 ? "" : "s");
    bt_buf_addc(out, '\n');
    for (size_t i = 0; i < c->n; i++)
        bt_buf_release(&names[i]);
    free(names);
}

/* What diff prints for o, into out; 0, or an error with *why. */
static int render(const char *conv, const struct diff_opts *o, const char *dir,
                  const char *snapshots, const char *from, const char *to, struct bt_buf *out,
                  char **why)
{
    if (o->json) {
        char *changes = bt_repo_changes_summary(dir, snapshots, from, to, why);
        if (!changes)
            return BT_EPROTO;
        bt_buf_addf(out, "{\"conversation\":\"%s\",\"turn\":", conv);
        if (o->turn)
            bt_buf_addf(out, "%lld", (long long)o->turn);
        else
            bt_buf_adds(out, "null");
        bt_buf_addf(out, ",\"from\":\"%s\",\"to\":\"%s\",\"changes\":%s}\n", from, to, changes);
        free(changes);
        return 0;
    }
    if (o->stat) {
        struct bt_repo_changes c;
        int rc = bt_repo_changes(dir, snapshots, from, to, &c, why);
        if (rc == 0 && c.n) /* nothing changed: nothing, as git prints */
            stat_of(&c, out);
        bt_repo_changes_release(&c);
        return rc;
    }
    const char *nc = getenv("NO_COLOR");
    return bt_repo_diff(dir, snapshots, from, to, isatty(STDOUT_FILENO) && !(nc && *nc), out, why);
}

static int diff_conversation(struct bt_store *s, const char *id, const struct diff_opts *o)
{
    struct bt_store_conversation conv = {0};
    struct bt_store_run *v = NULL;
    size_t n = 0;
    const char *from, *to;
    char *why = NULL;
    struct bt_buf out = BT_BUF_INIT;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s)), *unknown = NULL;
    int rc;
    if (bt_store_conversation_get(s, id, &conv) || bt_store_run_list(s, id, &v, &n))
        rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id, bt_store_errmsg(s));
    else if (o->turn && !has_turn(v, n, o->turn))
        rc = bt_cmd_fail(BT_EXIT_USAGE, "conversation %s has no turn %lld", id, (long long)o->turn);
    else if (bounds(v, n, o->turn, &from, &to) != 0 && (unknown = unknown_reason(s, v, n, o->turn)))
        rc = bt_cmd_fail(BT_EXIT_FAILED, "the changes of %s are unknown: %s (docs/snapshots.md)",
                         o->turn ? "that turn" : "this conversation", unknown);
    else if (bounds(v, n, o->turn, &from, &to) != 0)
        rc = bt_cmd_fail(BT_EXIT_FAILED,
                         "no changes were recorded for %s: its directory %s is not in a git "
                         "repository, snapshots were off, or the turn%s did not end with a "
                         "snapshot",
                         o->turn ? "that turn" : "this conversation", conv.cwd, o->turn ? "" : "s");
    else if (render(id, o, conv.worktree.repo ? conv.worktree.repo : conv.cwd, snapshots, from, to,
                    &out, &why) != 0)
        rc = bt_cmd_fail(BT_EXIT_FAILED, "%s", why);
    else {
        /* the directory is shared: what changed there is not all the coder's
         * (a worktree of its own is the conversation's alone) */
        if (!nothing(v, n, o->turn) && !conv.worktree.path)
            fprintf(stderr,
                    "baton: these are the changes in %s during the turn%s: they may include "
                    "edits of your own made there meanwhile\n",
                    conv.cwd, o->turn ? "" : "s");
        if (out.len)
            fwrite(out.data, 1, out.len, stdout);
        else if (o->turn) /* the diff (stdout) stays empty, as git's */
            fprintf(stderr, "baton: no changes in turn %lld\n", (long long)o->turn);
        else
            fprintf(stderr, "baton: no changes in this conversation's turns\n");
        rc = 0;
    }
    free(why);
    free(unknown);
    free(snapshots);
    bt_buf_release(&out);
    bt_store_run_list_free(v, n);
    bt_store_conversation_release(&conv);
    return rc;
}

static const struct bt_opt diff_opts[] = {
    {.id = 't',
     .name = "turn",
     .value = "N",
     .help = "only turn N's changes (default: every turn's)"},
    {.id = 's', .name = "stat", .help = "a line per file with its lines added and removed"},
    {.id = 'j',
     .name = "json",
     .help = "{conversation, turn, from, to, changes} as one JSON\nobject (changes as "
             "turn.completed has them)"},
    {0}};

const struct bt_cmd bt_cmd_def_diff = {
    .name = "diff",
    .run = bt_cmd_diff,
    .operands = "CONV",
    .summary = "show what a conversation's turns changed in its git working tree",
    .opts = diff_opts,
    .notes = "The changes are those between snapshots of the working tree taken before\n"
             "and after each turn (turn.completed's changes): edits of yours made in the\n"
             "directory during a turn are among them, unless the conversation has a\n"
             "worktree of its own (run --worktree).\n"
             "Colour on a terminal only (NO_COLOR respected). Exit 1 when nothing was\n"
             "recorded (a directory outside git). Turns that changed nothing print\n"
             "nothing and say so on stderr (\"no changes in turn N\"), exit 0.\n"};

int bt_cmd_diff(int argc, char **argv)
{
    struct bt_args a;
    struct diff_opts o = {0};
    int opt;
    bt_args_init(&a, argc, argv);
    while ((opt = bt_args_next(&a)) > 0) {
        if (opt == 's') {
            o.stat = 1;
        } else if (opt == 'j') {
            o.json = 1;
        } else {
            char *end = NULL;
            errno = 0;
            long long t = strtoll(a.value, &end, 10);
            /* digits only: no sign, no white space strtoll would take */
            if (errno || strspn(a.value, "0123456789") != strlen(a.value) || !*a.value || *end ||
                t < 1)
                return bt_args_fail(&a, "--turn takes a turn number (1, 2, ...), not '%s'",
                                    a.value);
            o.turn = t;
        }
    }
    int rc = opt < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (o.stat && o.json)
        return bt_args_fail(&a, "--stat and --json are two outputs: take one");
    struct bt_store *s;
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, a.operands[0], id)) == 0)
        rc = diff_conversation(s, id, &o);
    bt_store_close(s);
    return rc;
}
