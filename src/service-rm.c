/* SPDX-License-Identifier: MIT */
/*
 * service-rm: removing a conversation (service-conv.h), for `baton rm` and
 * DELETE /v1/conversations/{id}: its messages, runs and events in one
 * transaction (refused while a turn of it runs), then its run files, its
 * snapshots, its worktree, then the files of the coder's native session.
 * What it removed and what it kept, and why, come back as lines.
 *
 * The coder's files are the coder's: what the coder (or the store) names
 * is input, so a file or directory goes only when the runner finds it for
 * the session (session_files) and bt_runner_session_file proves it a
 * regular file, or a directory without links followed or mounts crossed,
 * inside the coder's own session directory (session_root); anything else
 * is kept and said. A coder that keeps its sessions where baton must not
 * write (a database of its own) deletes the session with its own command
 * instead (delete_session_argv), run after baton's records are gone. The
 * session is kept as well when the conversation was transferred to the
 * coder's terminal UI (which owns it from then on) or when its `handoff
 * --tmux` session still runs, which rm leaves running. Kept files are not
 * a failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coder.h"
#include "error.h"
#include "repo.h"
#include "service-conv.h"

extern char **environ;

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void line(struct bt_service_rm *p, int error, char *text)
{
    p->lines = bt_xrealloc(p->lines, (p->n_lines + 1) * sizeof *p->lines);
    p->lines[p->n_lines++] = (struct bt_service_rm_line){.text = text, .error = error};
}

/* A failure: said as a line, and the first one the result. */
static int fail(struct bt_service_rm *p, enum bt_service_result result, int rc, char *text)
{
    if (p->result == BT_SERVICE_OK) {
        p->result = result;
        p->message = bt_xstrdup(text);
    }
    line(p, 1, text);
    return rc;
}

/* A refusal before anything was done: the message only. */
static int refuse(struct bt_service_rm *p, enum bt_service_result result, int rc, char *message)
{
    p->result = result;
    p->message = message;
    return rc;
}

/* c's worktree as repo.h takes it (borrowed strings). */
static struct bt_repo_worktree worktree_of(const struct bt_store_conversation *c)
{
    return (struct bt_repo_worktree){.path = c->worktree.path,
                                     .cwd = c->cwd,
                                     .branch = c->worktree.branch,
                                     .base = c->worktree.base,
                                     .start = c->worktree.start,
                                     .repo = c->worktree.repo};
}

/* Whether the worktree may go: 0 (also when there is none, or its
 * repository is gone: a note says so), or a refusal when it holds work
 * (changes, or commits only its branch has) and !force. */
static int check_worktree(struct bt_service_rm *p)
{
    const struct bt_store_conversation *c = &p->r.conv;
    if (!c->worktree.path)
        return 0;
    struct bt_repo_worktree wt = worktree_of(c);
    char *why = NULL;
    int rc = bt_repo_worktree_kept(&wt, &why), err = 0;
    if (rc == BT_ENOTFOUND) /* its only copy of the work, maybe: the user's to judge */
        bt_strv_pushf(&p->notes,
                      "kept worktree %s as it is: %s, so baton cannot tell what it holds", wt.path,
                      why);
    else if (rc == -EBUSY && !p->force)
        err = refuse(p, BT_SERVICE_USAGE, rc,
                     bt_xasprintf("conversation %.12s keeps its worktree: %s\n"
                                  "       (`baton diff %.12s` shows the turns' changes; `baton rm "
                                  "--force %.12s` removes them with it)",
                                  c->id, why, c->id, c->id));
    else if (rc && rc != -EBUSY)
        err = refuse(p, BT_SERVICE_FAILED, rc,
                     bt_xasprintf("cannot look at the worktree %s: %s", wt.path, why));
    free(why);
    return err;
}

/* What a path of the coder's session names: a path that ends in '/' a
 * directory (runner.h, session_files). */
static const char *kind_of(const char *path)
{
    size_t n = strlen(path);
    return n > 1 && path[n - 1] == '/' ? "directory" : "file";
}

/* Check the session files the runner found; the good ones go in p->files. */
static void check_files(struct bt_service_rm *p, const char *coder, const struct bt_strv *found)
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
            fail(p, BT_SERVICE_FAILED, rc,
                 bt_xasprintf("cannot look at %s: %s", found->v[i], bt_strerror(rc)));
        free(resolved);
        free(why);
    }
}

/* The coder's own command that deletes the session of c (runner.h,
 * delete_session_argv): planned in p->cmd, or a note why not. */
static void plan_command(struct bt_service_rm *p, const struct bt_store_conversation *c,
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

/* The session files of c the runner finds, checked into p->files. */
static void plan_files(struct bt_service_rm *p, const struct bt_store_conversation *c,
                       const struct bt_runner_ops *ops, const char *what)
{
    struct bt_runner_config cfg = {.cwd = c->cwd,
                                   .native_session_id = c->native_session_id,
                                   .native_session_path = c->native_session_path};
    struct bt_strv found;
    char *why = NULL;
    bt_strv_init(&found);
    int rc = ops->session_files(&cfg, p->root, &found, &why);
    size_t notes = p->notes.n;
    if (rc == -EINVAL)
        bt_strv_pushf(&p->notes, "kept the %s session %s: %s", c->coder, what, why);
    else if (rc)
        fail(p, BT_SERVICE_FAILED, rc,
             bt_xasprintf("cannot look for the %s session of %s in %s: %s", c->coder, c->id,
                          p->root, bt_strerror(rc)));
    check_files(p, c->coder, &found);
    if (rc == 0 && p->files.n == 0 && p->notes.n == notes)
        bt_strv_pushf(&p->notes, "no %s session file found for %s", c->coder, what);
    bt_strv_release(&found);
    free(why);
}

/* What of the coder's own session of c goes, and what stays. */
static void plan_session(struct bt_service_rm *p, const struct bt_store_conversation *c)
{
    const char *what = c->native_session_path ? c->native_session_path : c->native_session_id;
    if (!what)
        return;
    const struct bt_coder *coder = bt_coder_find(c->coder);
    const struct bt_runner_ops *ops = coder ? coder->runner : NULL;
    char *why = NULL;
    if (c->status == BT_STORE_CONV_TRANSFERRED)
        bt_strv_pushf(&p->notes,
                      "kept the %s session %s: the conversation was handed to %s's own "
                      "interface",
                      c->coder, what, c->coder);
    else if (p->tmux == 1)
        bt_strv_pushf(&p->notes, "kept the %s session %s: tmux session %s still runs %s on it",
                      c->coder, what, p->tmux_name, c->coder);
    else if (ops && ops->delete_session_argv)
        plan_command(p, c, coder, what);
    else if (!ops || !ops->session_root || !ops->session_files)
        bt_strv_pushf(&p->notes, "kept the %s session %s: baton cannot remove %s sessions",
                      c->coder, what, c->coder);
    else if (ops->session_root(&p->root, &why) != 0)
        bt_strv_pushf(&p->notes,
                      "kept the %s session %s: baton cannot tell where %s keeps its "
                      "sessions: %s",
                      c->coder, what, c->coder, why);
    else
        plan_files(p, c, ops, what);
    free(why);
}

static char *busy_message(const char *id)
{
    return bt_xasprintf("conversation %s has a turn running: wait for it to end or cancel it, "
                        "then remove it",
                        id);
}

int bt_service_rm_plan(struct bt_store *s, const char *id, const char *typed, int force,
                       struct bt_service_rm *p)
{
    memset(p, 0, sizeof *p);
    bt_strv_init(&p->files);
    bt_strv_init(&p->notes);
    bt_strv_init(&p->cmd);
    bt_strv_init(&p->cmd_env);
    p->force = force;
    int err = bt_store_conversation_survey(s, id, &p->r);
    if (err == BT_EBUSY)
        return refuse(p, BT_SERVICE_USAGE, err, busy_message(id));
    if (err == BT_ENOTFOUND)
        return refuse(p, BT_SERVICE_USAGE, err,
                      bt_xasprintf("no conversation matches '%s'", typed ? typed : id));
    if (err)
        return refuse(p, BT_SERVICE_FAILED, err,
                      bt_xasprintf("cannot read conversation %s: %s", id, bt_store_errmsg(s)));
    if ((err = check_worktree(p)) != 0)
        return err;
    p->tmux = bt_service_tmux_running(id, p->tmux_name);
    plan_session(p, &p->r.conv);
    if (p->tmux == 1)
        bt_strv_pushf(&p->notes, "left tmux session %s running (tmux kill-session -t %s ends it)",
                      p->tmux_name, p->tmux_name);
    return 0; /* a failure while looking is a line already, and the result */
}

/* Unlink the run files of r. */
static void remove_run_files(struct bt_store *s, struct bt_service_rm *p,
                             const struct bt_store_removal *r)
{
    static const char *const suffixes[] = {".out.zst", ".err.zst", ".out", ".err"};
    for (size_t i = 0; i < r->n_runs; i++) {
        for (size_t k = 0; k < BT_ARRAY_SIZE(suffixes); k++) {
            char *path = bt_store_run_file(s, r->runs[i], suffixes[k]);
            if (!path)
                continue;
            if (unlink(path) == 0)
                line(p, 0, bt_xasprintf("removed %s", path));
            else if (errno != ENOENT)
                fail(p, BT_SERVICE_FAILED, -errno,
                     bt_xasprintf("cannot remove '%s': %s", path, strerror(errno)));
            free(path);
        }
    }
}

/* The references that kept the conversation's working-tree snapshots
 * (refs/baton/<id>/ of baton's store of the repository of its directory,
 * src/repo.h; the store goes when no snapshot is left in it): the user's
 * repository, branches and files are not touched. */
static void remove_snapshots(struct bt_store *s, struct bt_service_rm *p,
                             const struct bt_store_conversation *c)
{
    char *prefix = bt_xasprintf("refs/baton/%s/", c->id), *why = NULL;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s));
    /* a worktree's repository through its git directory: the worktree may
     * be gone already */
    const char *dir = c->worktree.repo ? c->worktree.repo : c->cwd;
    int rc = bt_repo_refs_delete(dir, snapshots, prefix, &why);
    free(snapshots);
    if (rc) { /* said on stdout as what was kept, but a failure */
        line(p, 0,
             bt_xasprintf("kept the turns' snapshots (%s* in baton's store of the git "
                          "repository of %s): %s",
                          prefix, c->cwd, why));
        if (p->result == BT_SERVICE_OK) {
            p->result = BT_SERVICE_FAILED;
            p->message = bt_xasprintf("kept the turns' snapshots of %s", c->id);
        }
    }
    free(why);
    free(prefix);
}

/* Remove c's worktree and branch, losing what force allows (repo.h). */
static void remove_worktree(struct bt_service_rm *p, const struct bt_store_conversation *c)
{
    if (!c->worktree.path)
        return;
    struct bt_repo_worktree wt = worktree_of(c);
    char *why = NULL;
    int rc = bt_repo_worktree_drop(&wt, p->force ? BT_REPO_DROP_ALL : BT_REPO_DROP_NOTHING, &why);
    if (rc == 0 && why)
        line(p, 0,
             bt_xasprintf("removed what was left of worktree %s and branch %s (%s)", wt.path,
                          wt.branch, why));
    else if (rc == 0)
        line(p, 0, bt_xasprintf("removed worktree %s and branch %s", wt.path, wt.branch));
    else if (rc != BT_ENOTFOUND)
        fail(p, BT_SERVICE_FAILED, rc,
             bt_xasprintf("kept worktree %s and branch %s: %s", wt.path, wt.branch, why));
    free(why);
}

/* Remove the planned session files (checked again as they go). */
static void remove_session_files(struct bt_service_rm *p)
{
    const char *coder = p->r.conv.coder;
    for (size_t i = 0; i < p->files.n; i++) {
        char *resolved, *why;
        int err = bt_runner_session_file(p->root, p->files.v[i], 1, &resolved, &why);
        const char *kind = kind_of(p->files.v[i]);
        if (err == 0)
            line(p, 0, bt_xasprintf("removed %s session %s %s", coder, kind, resolved));
        else if (err == -EPERM)
            line(p, 0,
                 bt_xasprintf("kept the %s session %s %s: %s", coder, kind, p->files.v[i], why));
        else if (err != -ENOENT)
            fail(p, BT_SERVICE_FAILED, err,
                 bt_xasprintf("cannot remove the %s session %s %s: %s", coder, kind, p->files.v[i],
                              bt_strerror(err)));
        free(resolved);
        free(why);
    }
}

/* The first line of a coder's output that says something, without ANSI
 * escapes or other control characters, at most 200 bytes (owned). */
static char *first_line(const char *out)
{
    char *text = bt_strip_ansi(out, strlen(out)), *l = text;
    while (*l == '\n' || *l == '\r' || *l == ' ')
        l++;
    size_t n = strcspn(l, "\r\n");
    char *said = bt_xstrndup(l, n > 200 ? 200 : n);
    for (char *c = said; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    free(text);
    return said;
}

/* Run the coder's command that deletes its session (p->cmd), bounded by
 * BT_CODER_COMMAND_MS, and say what came of it. */
static void delete_by_command(struct bt_service_rm *p)
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
    char *first = first_line(out.data);
    const char *id = c->native_session_id;
    if (rc == -EINTR)
        fail(p, BT_SERVICE_CANCELLED, rc,
             bt_xasprintf("interrupted while `%s` ran: the %s session %s may be left", p->cmd_text,
                          c->coder, id));
    else if (rc == -ETIMEDOUT)
        fail(p, BT_SERVICE_FAILED, rc,
             bt_xasprintf("`%s` did not end within %d s and was stopped: the %s session %s may "
                          "be left",
                          p->cmd_text, BT_CODER_COMMAND_MS / 1000, c->coder, id));
    else if (rc)
        fail(p, BT_SERVICE_FAILED, rc,
             bt_xasprintf("cannot run `%s`: %s", p->cmd_text, bt_strerror(rc)));
    else if (said == 0)
        line(p, 0, bt_xasprintf("removed %s session %s (%s)", c->coder, id, p->cmd_text));
    else if (said == -ENOENT)
        line(p, 0,
             bt_xasprintf("no %s session %s found (%s: %s)", c->coder, id, p->cmd_text, first));
    else
        fail(p, BT_SERVICE_FAILED, -EIO,
             bt_xasprintf("cannot remove the %s session %s: `%s` exited %d%s%s", c->coder, id,
                          p->cmd_text, status, *first ? ": " : "", first));
    free(first);
    bt_buf_release(&out);
}

int bt_service_rm(struct bt_store *s, struct bt_service_rm *p)
{
    struct bt_store_removal r;
    const char *id = p->r.conv.id;
    int err = bt_store_conversation_delete(s, id, &r);
    if (err == BT_EBUSY) { /* a turn started since the plan */
        free(p->message);
        return refuse(p, BT_SERVICE_USAGE, err, busy_message(id));
    }
    if (err) {
        free(p->message);
        return refuse(p, BT_SERVICE_FAILED, err,
                      bt_xasprintf("cannot remove conversation %s: %s", id, bt_store_errmsg(s)));
    }
    line(p, 0,
         bt_xasprintf("removed conversation %s (%lld %s, %zu %s, %lld %s): %s", id,
                      (long long)r.messages, plural(r.messages, "message", "messages"), r.n_runs,
                      plural((int64_t)r.n_runs, "run", "runs"), (long long)r.events,
                      plural(r.events, "event", "events"), r.conv.title));
    remove_run_files(s, p, &r);
    remove_snapshots(s, p, &r.conv);
    remove_worktree(p, &r.conv);
    remove_session_files(p);
    if (p->cmd.n)
        delete_by_command(p);
    for (size_t i = 0; i < p->notes.n; i++)
        line(p, 0, bt_xstrdup(p->notes.v[i]));
    bt_store_removal_release(&r);
    return p->result == BT_SERVICE_OK ? 0 : p->result == BT_SERVICE_CANCELLED ? -EINTR : -EIO;
}

void bt_service_rm_release(struct bt_service_rm *p)
{
    for (size_t i = 0; i < p->n_lines; i++)
        free(p->lines[i].text);
    free(p->lines);
    p->lines = NULL;
    p->n_lines = 0;
    bt_strv_release(&p->files);
    bt_strv_release(&p->notes);
    bt_strv_release(&p->cmd);
    bt_strv_release(&p->cmd_env);
    free(p->cmd_text);
    free(p->message);
    free(p->root);
    p->cmd_text = p->message = p->root = NULL;
    bt_store_removal_release(&p->r);
}
