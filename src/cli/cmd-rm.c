/* SPDX-License-Identifier: MIT */
/*
 * cmd-rm: `baton rm [-y] [--force] CONV` deletes a conversation, as the
 * service does it (service-rm.c, shared with DELETE
 * /v1/conversations/{id}): its messages, runs and events, run files,
 * snapshots, worktree and the coder's session. Prints what it removed and
 * what it kept, and why: kept files are not a failure (exit 0); exit 1
 * only when a removal that was due failed, 2 when refused.
 *
 * On a terminal (stdin), rm first says all that and asks; only "y" or "yes"
 * goes on, any other answer removes nothing and exits 1. -y/--yes, or
 * stdin not a terminal, skips the question.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "service-conv.h"

/* Print text made safe for a terminal to f, then a newline. */
static void put_line(FILE *f, const char *text)
{
    bt_term_write(f, text, strlen(text));
    fputc('\n', f);
}

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static const char *kind_of(const char *path)
{
    size_t n = strlen(path);
    return n > 1 && path[n - 1] == '/' ? "directory" : "file";
}

/* The service's lines from *said on: what was done on stdout, failures as
 * "baton: ..." on stderr. */
static void put_lines(const struct bt_service_rm *p, size_t *said)
{
    fflush(stdout);
    for (; *said < p->n_lines; (*said)++) {
        const struct bt_service_rm_line *l = &p->lines[*said];
        if (l->error)
            fputs("baton: ", stderr);
        put_line(l->error ? stderr : stdout, l->text);
    }
}

/* Say what rm is about to do on stderr and read the answer from stdin: 1
 * for y or yes (any case, blanks around), else 0. */
static int confirmed(const struct bt_service_rm *p)
{
    const struct bt_store_conversation *c = &p->r.conv;
    fprintf(stderr, "remove conversation %.12s \"", c->id);
    bt_term_write(stderr, c->title, strlen(c->title));
    fprintf(stderr, "\" (%s): %lld %s, %zu %s, the run files\n", c->coder, (long long)p->r.messages,
            plural(p->r.messages, "message", "messages"), p->r.n_runs,
            plural((int64_t)p->r.n_runs, "run", "runs"));
    for (size_t i = 0; i < p->files.n; i++) {
        fprintf(stderr, "  and the %s session %s ", c->coder, kind_of(p->files.v[i]));
        put_line(stderr, p->files.v[i]);
    }
    if (c->worktree.path) {
        fputs("  and its worktree ", stderr);
        bt_term_write(stderr, c->worktree.path, strlen(c->worktree.path));
        fprintf(stderr, " with branch %s%s\n", c->worktree.branch,
                p->force ? " (--force: with the work they hold)" : "");
    }
    if (p->cmd.n) {
        fprintf(stderr, "  and the %s session %s (by `", c->coder, c->native_session_id);
        bt_term_write(stderr, p->cmd_text, strlen(p->cmd_text));
        fputs("`)\n", stderr);
    }
    for (size_t i = 0; i < p->notes.n; i++) {
        fputs("  ", stderr);
        put_line(stderr, p->notes.v[i]);
    }
    fputs("remove it? [y/N] ", stderr);
    fflush(stderr);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) {
        fputc('\n', stderr); /* end the prompt's line */
        return 0;
    }
    char *a = line, *e = line + strlen(line);
    while (isspace((unsigned char)*a))
        a++;
    while (e > a && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return strcasecmp(a, "y") == 0 || strcasecmp(a, "yes") == 0;
}

static int parse(int argc, char **argv, int *yes, int *force, const char **conv)
{
    struct bt_args a;
    int id;
    *yes = *force = 0;
    bt_args_init(&a, &bt_cmd_def_rm, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'y')
            *yes = 1;
        else
            *force = 1;
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    *conv = a.operands[0];
    return rc;
}

static const struct bt_opt rm_opts[] = {
    {.id = 'y',
     .letter = 'y',
     .name = "yes",
     .help = "do not ask first (rm asks only on a terminal)"},
    {.id = 'f',
     .name = "force",
     .help = "remove the conversation's worktree and branch even\nwith changes or commits of "
             "their own"},
    {0}};

const struct bt_cmd bt_cmd_def_rm = {
    .name = "rm",
    .run = bt_cmd_rm,
    .operands = "CONV",
    .summary = "delete a conversation, its runs and the coder's session",
    .opts = rm_opts,
    .notes = "Deletes the conversation's messages, runs, events and run files, and the\n"
             "coder's own session: its files found inside the coder's session directory\n"
             "(codex rollout, pi session file, claude transcript, gemini chat files and\n"
             "directories, copilot session directory), or for opencode by `opencode\n"
             "session delete ID`; not when the conversation was handed off to the\n"
             "coder's terminal UI or its handoff tmux session still runs (left running).\n"
             "A conversation's own worktree (run --worktree) goes with its branch, only\n"
             "when that loses nothing: changes in it, or commits its branch has and the\n"
             "branch it started from has not, refuse rm (exit 2) unless --force.\n"
             "Refused while a turn runs. On a terminal it first says what goes and asks:\n"
             "any answer but y or yes removes nothing and exits 1.\n"};

int bt_cmd_rm(int argc, char **argv)
{
    const char *text = NULL;
    int yes, force;
    int rc = parse(argc, argv, &yes, &force, &text);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char id[BT_ID_SIZE];
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, text, id)) != 0) {
        bt_store_close(s);
        return rc;
    }
    struct bt_service_rm p;
    size_t said = 0;
    if (bt_service_rm_plan(s, id, text, force, &p) != 0) {
        rc = bt_cmd_fail(bt_cmd_exit_service(&(struct bt_service_outcome){.result = p.result}),
                         "%s", p.message);
        goto out;
    }
    put_lines(&p, &said); /* what failed while looking */
    if (!yes && isatty(STDIN_FILENO) && !confirmed(&p)) {
        rc = bt_cmd_fail(BT_EXIT_FAILED, "nothing removed");
        goto out;
    }
    int err = bt_service_rm(s, &p);
    size_t before = said;
    put_lines(&p, &said);
    if (err && said == before) /* refused: nothing was removed */
        bt_cmd_fail(BT_EXIT_FAILED, "%s", p.message);
    rc = bt_cmd_exit_service(&(struct bt_service_outcome){.result = p.result});
out:
    bt_service_rm_release(&p);
    bt_store_close(s);
    return rc;
}
