/* SPDX-License-Identifier: MIT */
/*
 * cmd-rm: `baton rm [-y] CONV` deletes a conversation: its messages, runs
 * and events in one transaction (refused while a turn of it runs), then its
 * run files, then the files of the coder's native session. Prints what it
 * removed and what it kept, and why.
 *
 * The coder's files are the coder's: what the coder (or the store) names is
 * input, so a file or directory goes only when the runner finds it for the
 * session (session_files) and bt_runner_session_file proves it a regular
 * file, or a directory without links followed or mounts crossed, inside
 * the coder's own session directory (session_root); anything else is kept
 * and said. A coder that keeps its sessions where baton must not write (a
 * database of its own) deletes the session with its own command instead
 * (delete_session_argv), run after baton's records are gone. The session
 * is kept as well when the conversation was transferred to the coder's
 * terminal UI (which owns it from then on) or when its `handoff --tmux`
 * session still runs, which rm leaves running. Kept files are not a
 * failure: exit 0; exit 1 only when a removal that was due failed.
 *
 * On a terminal (stdin), rm first says all that and asks; only "y" or "yes"
 * goes on, any other answer removes nothing and exits 1. -y/--yes, or
 * stdin not a terminal, skips the question.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-handoff.h"
#include "cmd-worktree.h"
#include "cmd.h"
#include "coder.h"
#include "error.h"
#include "repo.h"
#include "store.h"

/* What rm is about to do, found before anything is removed. */
struct plan {
    struct bt_store_removal r;            /* the conversation and its counts */
    char *root;                           /* the coder's session directory, or NULL */
    struct bt_strv files;                 /* the coder's files to remove (checked) */
    struct bt_strv notes;                 /* what is kept, and why: one line each */
    struct bt_strv cmd;                   /* the coder's command deleting the session */
    struct bt_strv cmd_env;               /* its environment */
    char *cmd_text;                       /* the command as said: "opencode session delete ID" */
    const char *cmd_cwd;                  /* where it runs: the conversation's directory, or NULL */
    char tmux_name[BT_HANDOFF_TMUX_NAME]; /* the conversation's handoff session */
    int tmux;                             /* 1 if that tmux session still runs */
    int rc;                               /* exit code of a failure while looking */
    int force;                            /* --force: the worktree goes with its work */
};

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
            if (unlink(path) == 0) {
                fputs("removed ", stdout);
                put_line(stdout, path);
            } else if (errno != ENOENT) {
                rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot remove '%s': %s", path, strerror(errno));
            }
            free(path);
        }
    }
    return rc;
}

/* What a path of the coder's session names: a path that ends in '/' a
 * directory (runner.h, session_files). */
static const char *kind_of(const char *path)
{
    size_t n = strlen(path);
    return n > 1 && path[n - 1] == '/' ? "directory" : "file";
}

/* Check the session files the runner found; the good ones go in p->files. */
static void check_files(struct plan *p, const char *coder, const struct bt_strv *found)
{
    for (size_t i = 0; i < found->n; i++) {
        char *resolved, *why;
        int rc = bt_runner_session_file(p->root, found->v[i], 0, &resolved, &why);
        if (rc == 0)
            bt_strv_push(&p->files, found->v[i]);
        else if (rc == -EPERM)
            bt_strv_pushf(&p->notes, "kept the %s session %s %s: %s", coder, kind_of(found->v[i]),
                          found->v[i], why);
        else if (rc != -ENOENT)
            p->rc =
                bt_cmd_fail(BT_EXIT_FAILED, "cannot look at %s: %s", found->v[i], bt_strerror(rc));
        free(resolved);
        free(why);
    }
}

extern char **environ;

/* The coder's own command that deletes the session of c (runner.h,
 * delete_session_argv): planned in p->cmd, or a note why not. */
static void plan_command(struct plan *p, const struct bt_store_conversation *c,
                         const struct bt_coder *coder, const char *what)
{
    struct bt_runner_config cfg = {.cwd = c->cwd,
                                   .native_session_id = c->native_session_id,
                                   .native_session_path = c->native_session_path};
    struct bt_strv args;
    struct bt_coder_exe exe;
    char *why = NULL;
    bt_strv_init(&args);
    int rc = coder->runner->delete_session_argv(&cfg, &args, &why);
    if (rc == -EINVAL) {
        bt_strv_pushf(&p->notes, "kept the %s session %s: %s", c->coder, what, why);
    } else if (rc == 0 && bt_coder_resolve(coder, &exe) != 0) {
        char *missing = bt_coder_not_found(coder);
        bt_strv_pushf(&p->notes, "kept the %s session %s: %s", c->coder, what, missing);
        free(missing);
        bt_coder_exe_release(&exe);
    } else if (rc == 0) {
        struct bt_buf text = BT_BUF_INIT;
        bt_buf_adds(&text, coder->runner->bin_name);
        bt_strv_push(&p->cmd, exe.path);
        for (size_t i = 0; i < args.n; i++) {
            bt_strv_push(&p->cmd, args.v[i]);
            bt_buf_addf(&text, " %s", args.v[i]);
        }
        p->cmd_text = bt_buf_detach(&text, NULL);
        bt_strv_release(&p->cmd_env);
        bt_coder_env(&exe, environ, NULL, &p->cmd_env);
        struct stat st;
        p->cmd_cwd = c->cwd && stat(c->cwd, &st) == 0 && S_ISDIR(st.st_mode) ? c->cwd : NULL;
        bt_coder_exe_release(&exe);
    }
    bt_strv_release(&args);
    free(why);
}

/* What of the coder's own session of c goes, and what stays. */
static void plan_session(struct plan *p, const struct bt_store_conversation *c)
{
    const char *what = c->native_session_path ? c->native_session_path : c->native_session_id;
    if (!what)
        return;
    const struct bt_coder *coder = bt_coder_find(c->coder);
    const struct bt_runner_ops *ops = coder ? coder->runner : NULL;
    char *why = NULL;
    if (c->status == BT_STORE_CONV_TRANSFERRED) {
        bt_strv_pushf(&p->notes,
                      "kept the %s session %s: the conversation was handed to %s's own "
                      "interface",
                      c->coder, what, c->coder);
    } else if (p->tmux == 1) {
        bt_strv_pushf(&p->notes, "kept the %s session %s: tmux session %s still runs %s on it",
                      c->coder, what, p->tmux_name, c->coder);
    } else if (ops && ops->delete_session_argv) {
        plan_command(p, c, coder, what);
    } else if (!ops || !ops->session_root || !ops->session_files) {
        bt_strv_pushf(&p->notes, "kept the %s session %s: baton cannot remove %s sessions",
                      c->coder, what, c->coder);
    } else if (ops->session_root(&p->root, &why) != 0) {
        bt_strv_pushf(&p->notes,
                      "kept the %s session %s: baton cannot tell where %s keeps its "
                      "sessions: %s",
                      c->coder, what, c->coder, why);
    } else {
        struct bt_runner_config cfg = {.cwd = c->cwd,
                                       .native_session_id = c->native_session_id,
                                       .native_session_path = c->native_session_path};
        struct bt_strv found;
        bt_strv_init(&found);
        int rc = ops->session_files(&cfg, p->root, &found, &why);
        size_t notes = p->notes.n;
        if (rc == -EINVAL)
            bt_strv_pushf(&p->notes, "kept the %s session %s: %s", c->coder, what, why);
        else if (rc)
            p->rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot look for the %s session of %s in %s: %s",
                                c->coder, c->id, p->root, bt_strerror(rc));
        check_files(p, c->coder, &found);
        if (rc == 0 && p->files.n == 0 && p->notes.n == notes)
            bt_strv_pushf(&p->notes, "no %s session file found for %s", c->coder, what);
        bt_strv_release(&found);
    }
    free(why);
}

/* Everything rm would do to conversation id; an exit code on refusal. */
static int make_plan(struct bt_store *s, const char *id, const char *typed, struct plan *p)
{
    int err = bt_store_conversation_survey(s, id, &p->r);
    if (err == BT_EBUSY)
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %s has a turn running: wait for it to end or cancel it, "
                           "then remove it",
                           id);
    if (err == BT_ENOTFOUND)
        return bt_cmd_fail(BT_EXIT_USAGE, "no conversation matches '%s'", typed);
    if (err)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot read conversation %s: %s", id,
                           bt_store_errmsg(s));
    int rc = bt_cmd_worktree_check(&p->r.conv, p->force, &p->notes);
    if (rc)
        return rc;
    p->tmux = bt_handoff_tmux_running(id, p->tmux_name);
    plan_session(p, &p->r.conv);
    if (p->tmux == 1)
        bt_strv_pushf(&p->notes, "left tmux session %s running (tmux kill-session -t %s ends it)",
                      p->tmux_name, p->tmux_name);
    return 0;
}

/* Say what rm is about to do on stderr and read the answer from stdin: 1
 * for y or yes (any case, blanks around), else 0. */
static int confirmed(const struct plan *p)
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

/* Remove the planned session files (checked again as they go). */
static int remove_session_files(const struct plan *p)
{
    const char *coder = p->r.conv.coder;
    int rc = 0;
    for (size_t i = 0; i < p->files.n; i++) {
        char *resolved, *why;
        int err = bt_runner_session_file(p->root, p->files.v[i], 1, &resolved, &why);
        const char *kind = kind_of(p->files.v[i]);
        if (err == 0) {
            printf("removed %s session %s ", coder, kind);
            put_line(stdout, resolved);
        } else if (err == -EPERM) {
            printf("kept the %s session %s ", coder, kind);
            bt_term_write(stdout, p->files.v[i], strlen(p->files.v[i]));
            fputs(": ", stdout);
            put_line(stdout, why);
        } else if (err != -ENOENT) {
            rc = bt_cmd_fail(BT_EXIT_FAILED, "cannot remove the %s session %s %s: %s", coder, kind,
                             p->files.v[i], bt_strerror(err));
        }
        free(resolved);
        free(why);
    }
    return rc;
}

/* The first line of a coder's output that says something, without ANSI
 * escapes or other control characters, at most 200 bytes (owned). */
static char *first_line(const char *out)
{
    char *text = bt_strip_ansi(out, strlen(out)), *line = text;
    while (*line == '\n' || *line == '\r' || *line == ' ')
        line++;
    size_t n = strcspn(line, "\r\n");
    char *said = bt_xstrndup(line, n > 200 ? 200 : n);
    for (char *c = said; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    free(text);
    return said;
}

/* Run the coder's command that deletes its session (p->cmd) and say what
 * came of it; the exit code. */
static int delete_by_command(const struct plan *p)
{
    const struct bt_store_conversation *c = &p->r.conv;
    const struct bt_runner_ops *ops = bt_coder_find(c->coder)->runner;
    struct bt_coder_command cmd = {.path = p->cmd.v[0],
                                   .argv = p->cmd.v,
                                   .env = p->cmd_env.v,
                                   .cwd = p->cmd_cwd,
                                   .bound_ms = BT_CODER_COMMAND_MS,
                                   .out_max = BT_CODER_COMMAND_OUTPUT};
    struct bt_buf out = BT_BUF_INIT;
    int status, rc = bt_coder_run(&cmd, &out, &status);
    int said = rc                           ? rc
               : ops->delete_session_status ? ops->delete_session_status(status, out.data)
               : status == 0                ? 0
                                            : -EIO;
    char *line = first_line(out.data);
    const char *id = c->native_session_id;
    int code = 0;
    if (rc == -EINTR)
        code = bt_cmd_fail(BT_EXIT_CANCELLED,
                           "interrupted while `%s` ran: the %s session %s may be left", p->cmd_text,
                           c->coder, id);
    else if (rc == -ETIMEDOUT)
        code = bt_cmd_fail(BT_EXIT_FAILED,
                           "`%s` did not end within %d s and was stopped: the %s session %s may be "
                           "left",
                           p->cmd_text, BT_CODER_COMMAND_MS / 1000, c->coder, id);
    else if (rc)
        code = bt_cmd_fail(BT_EXIT_FAILED, "cannot run `%s`: %s", p->cmd_text, bt_strerror(rc));
    else if (said == 0)
        printf("removed %s session %s (%s)\n", c->coder, id, p->cmd_text);
    else if (said == -ENOENT)
        printf("no %s session %s found (%s: %s)\n", c->coder, id, p->cmd_text, line);
    else
        code = bt_cmd_fail(BT_EXIT_FAILED, "cannot remove the %s session %s: `%s` exited %d%s%s",
                           c->coder, id, p->cmd_text, status, *line ? ": " : "", line);
    free(line);
    bt_buf_release(&out);
    return code;
}

static int parse(int argc, char **argv, int *yes, int *force, const char **conv)
{
    struct bt_args a;
    int id;
    *yes = *force = 0;
    bt_args_init(&a, argc, argv);
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

/* The references that kept the conversation's working-tree snapshots
 * (refs/baton/<id>/ of baton's store of the repository of its directory,
 * src/repo.h; the store goes when no snapshot is left in it): the user's
 * repository, branches and files are not touched. */
static int remove_snapshots(struct bt_store *s, const struct bt_store_conversation *c)
{
    char *prefix = bt_xasprintf("refs/baton/%s/", c->id), *why = NULL;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s));
    /* a worktree's repository through its git directory: the worktree may
     * be gone already */
    const char *dir = c->worktree.repo ? c->worktree.repo : c->cwd;
    int rc = bt_repo_refs_delete(dir, snapshots, prefix, &why);
    free(snapshots);
    if (rc) {
        char *note = bt_xasprintf("kept the turns' snapshots (%s* in baton's store of the git "
                                  "repository of %s): %s",
                                  prefix, c->cwd, why);
        put_line(stdout, note);
        free(note);
    }
    free(why);
    free(prefix);
    return rc ? BT_EXIT_FAILED : 0;
}

/* Delete what p planned; the exit code. */
static int remove_all(struct bt_store *s, const char *id, const struct plan *p)
{
    struct bt_store_removal r;
    int err = bt_store_conversation_delete(s, id, &r);
    if (err == BT_EBUSY) /* a turn started since the plan */
        return bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %s has a turn running: wait for it to end or cancel it, "
                           "then remove it",
                           id);
    if (err)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot remove conversation %s: %s", id,
                           bt_store_errmsg(s));
    printf("removed conversation %s (%lld %s, %zu %s, %lld %s): ", id, (long long)r.messages,
           plural(r.messages, "message", "messages"), r.n_runs,
           plural((int64_t)r.n_runs, "run", "runs"), (long long)r.events,
           plural(r.events, "event", "events"));
    put_line(stdout, r.conv.title);
    int rc = remove_run_files(s, &r);
    int snap = remove_snapshots(s, &r.conv);
    int wt = bt_cmd_worktree_remove(&r.conv, p->force ? BT_REPO_DROP_ALL : BT_REPO_DROP_NOTHING, 0);
    rc = rc ? rc : snap ? snap : wt;
    int src = remove_session_files(p);
    if (p->cmd.n) {
        fflush(stdout); /* before the coder's command runs */
        int crc = delete_by_command(p);
        src = src ? src : crc;
    }
    for (size_t i = 0; i < p->notes.n; i++)
        put_line(stdout, p->notes.v[i]);
    bt_store_removal_release(&r);
    return rc ? rc : src ? src : p->rc;
}

int bt_cmd_rm(int argc, char **argv)
{
    const char *text = NULL;
    int yes, force;
    int rc = parse(argc, argv, &yes, &force, &text);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char id[BT_ID_SIZE];
    rc = bt_cmd_open_store(&s);
    if (rc)
        return rc;
    if ((rc = bt_cmd_resolve(s, text, id)) != 0) {
        bt_store_close(s);
        return rc;
    }
    struct plan p = {0};
    bt_strv_init(&p.files);
    bt_strv_init(&p.notes);
    bt_strv_init(&p.cmd);
    bt_strv_init(&p.cmd_env);
    p.force = force;
    rc = make_plan(s, id, text, &p);
    if (rc == 0 && !yes && isatty(STDIN_FILENO) && !confirmed(&p))
        rc = bt_cmd_fail(BT_EXIT_FAILED, "nothing removed");
    else if (rc == 0)
        rc = remove_all(s, id, &p);
    bt_strv_release(&p.files);
    bt_strv_release(&p.notes);
    bt_strv_release(&p.cmd);
    bt_strv_release(&p.cmd_env);
    free(p.cmd_text);
    bt_store_removal_release(&p.r);
    free(p.root);
    bt_store_close(s);
    return rc;
}
