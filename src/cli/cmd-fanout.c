/* SPDX-License-Identifier: MIT */
/*
 * cmd-fanout: `baton run -c a,b,c [--worktree] PROMPT`: one prompt to
 * several coders at once, one conversation each (each in a worktree of its
 * own with --worktree), all in one group, as the service makes them
 * (service-work.h, bt_service_fanout). Every turn
 * runs in a detached worker, so the coders work in parallel and outlive
 * this command; it follows them from the store as `baton attach` does: on
 * a terminal one live line per coder (spinner, state, time, tokens), then
 * the group's table (cmd-group.h); with --json every member's events as
 * they are stored, each naming its conversation. Ctrl-C stops following,
 * not the turns.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd-fanout.h"
#include "cmd-group.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "error.h"
#include "service-work.h"
#include "json.h"
#include "proc.h"

#define POLL_MS 50
#define RECOVER_MS 1000 /* between checks that a worker still lives */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

struct member {
    char coder[64];        /* as named in -c */
    char conv[BT_ID_SIZE]; /* "" when none was made */
    char run[BT_ID_SIZE];  /* "" until its worker started the turn */
    int64_t queued;        /* the prompt's message, taken back if no turn starts */
    char *failure;         /* why it did not start or run (owned), or NULL */
    int code;              /* its exit code once ended */
    int ended;
    int64_t next;       /* the next event to read */
    int64_t tokens;     /* -1 until a usage event says */
    int64_t started_ms; /* when its turn started */
    int64_t ended_ms;
    const char *state;           /* what the live line says */
    struct bt_channel_conn conn; /* to its run's owner (channel.h), fd -1 if none */
};

struct fanout {
    struct bt_store *s;
    struct member *m;
    size_t n;
    char group[BT_ID_SIZE];
    int json;
    int live;      /* live lines on a terminal */
    int drawn;     /* they are on screen */
    unsigned tick; /* spinner frame */
};

/* Split "a,b,c" into names; an exit code for an empty name, too many or
 * an unknown coder (nothing is made then). */
static int split(const char *list, struct bt_strv *names)
{
    if (bt_service_coder_list(list, names, BT_SERVICE_FANOUT_MAX) != 0)
        return bt_cmd_fail(BT_EXIT_USAGE, "-c takes up to %d coders separated by commas, not '%s'",
                           BT_SERVICE_FANOUT_MAX, list);
    for (size_t i = 0; i < names->n; i++)
        if (!bt_coder_find(names->v[i]))
            return bt_cmd_fail(BT_EXIT_USAGE, "unknown coder '%s' (baton coders lists them)",
                               names->v[i]);
    return 0;
}

/* SIGINT, SIGTERM, SIGHUP set interrupted. */
static void hear_signals(void)
{
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The members as the service made them (service-fanout.c). */
static void take_members(struct fanout *f, const struct bt_service_fanout *made)
{
    memcpy(f->group, made->group, BT_ID_SIZE);
    f->n = made->n;
    for (size_t i = 0; i < f->n; i++) {
        struct member *m = &f->m[i];
        const struct bt_service_fanned *x = &made->v[i];
        snprintf(m->coder, sizeof m->coder, "%s", x->coder);
        m->conn.fd = -1; /* no channel followed yet */
        m->tokens = -1;
        m->state = "starting";
        if (!x->conversation[0]) {
            m->failure = bt_xstrdup(x->message ? x->message : "it could not start");
            struct bt_service_outcome out = {.result = x->result};
            m->code = bt_cmd_exit_service(&out);
            m->code = m->code ? m->code : BT_EXIT_FAILED;
            m->ended = 1;
            m->state = "not started";
            continue;
        }
        memcpy(m->conv, x->conversation, BT_ID_SIZE);
        m->queued = x->queued;
    }
}

/* Start a worker per conversation, then wait for each to report. */
static void start_workers(struct fanout *f, const struct bt_service_turn *base)
{
    int *fd = bt_xcalloc(f->n, sizeof *fd);
    for (size_t i = 0; i < f->n; i++) {
        struct member *m = &f->m[i];
        fd[i] = -1;
        if (m->ended)
            continue;
        int rc = bt_cmd_worker_start("flush", m->conv, base, &fd[i]);
        if (rc) {
            m->failure = bt_xasprintf("cannot start a worker: %s", bt_strerror(rc));
            m->code = BT_EXIT_FAILED;
        }
    }
    for (size_t i = 0; i < f->n; i++) {
        struct member *m = &f->m[i];
        if (fd[i] >= 0 && (m->code = bt_cmd_worker_report(fd[i], m->run, &m->failure)) == 0) {
            m->started_ms = bt_now_ms();
            m->state = "running";
            m->next = 1;
            continue;
        }
        if (m->ended)
            continue;
        m->ended = 1;
        m->state = "not started";
        if (m->queued > 0) /* a failed start leaves nothing queued */
            bt_store_message_discard(f->s, m->conv, m->queued);
    }
    free(fd);
}

/* --- following ---------------------------------------------------------- */

struct reading {
    struct fanout *f;
    struct member *m;
};

static int on_stored(void *data, const struct bt_store_event *ev)
{
    struct reading *r = data;
    struct member *m = r->m;
    struct bt_event e;
    struct bt_event_doc *doc = NULL;
    m->next = ev->seq + 1;
    if (r->f->json) {
        fwrite(ev->data, 1, ev->len, stdout);
        fputc('\n', stdout);
    }
    if (bt_event_parse(ev->data, ev->len, &e, &doc) == 0) {
        const struct bt_usage *u = &e.usage;
        if ((e.type == BT_EVENT_USAGE || e.type == BT_EVENT_TURN_COMPLETED) &&
            (u->input_tokens >= 0 || u->output_tokens >= 0))
            m->tokens = (u->input_tokens > 0 ? u->input_tokens : 0) +
                        (u->output_tokens > 0 ? u->output_tokens : 0);
        if (e.type == BT_EVENT_TURN_COMPLETED) {
            m->ended = 1;
            m->code = bt_cmd_exit_turn(e.status, bt_error_kind_parse(e.kind));
            m->state = bt_turn_status_name(e.status);
        }
    }
    bt_event_doc_free(doc);
    return m->ended;
}

/* Read m's new events; its end when its run ended without one (a worker
 * that died, once recovered). 0, or BT_ESTORE. */
static int poll_member(struct fanout *f, struct member *m, int check_owner)
{
    struct bt_store_run r;
    if (bt_store_run_get(f->s, m->run, &r) != 0)
        return BT_ESTORE;
    enum bt_store_run_state st = r.state;
    int gone =
        st == BT_STORE_RUN_RUNNING && check_owner && bt_proc_pid_gone(r.owner_pid, r.owner_start);
    bt_store_run_release(&r);
    struct reading rd = {f, m};
    if (bt_store_event_each(f->s, m->run, m->next, on_stored, &rd) < 0)
        return BT_ESTORE;
    if (gone)
        bt_cmd_recover(f->s); /* its end is read next time */
    if (!m->ended && st != BT_STORE_RUN_RUNNING) {
        m->ended = 1;
        m->state = bt_store_run_state_name(st);
        m->code = st == BT_STORE_RUN_CANCELLED ? BT_EXIT_CANCELLED : BT_EXIT_FAILED;
    }
    if (m->ended && !m->ended_ms)
        m->ended_ms = bt_now_ms();
    return 0;
}

/* The live lines: one per member, redrawn in place. */
static void draw(struct fanout *f)
{
    static const char *const frames[] = {"|", "/", "-", "\\"};
    int64_t now = bt_now_ms();
    if (f->drawn)
        printf("\033[%zuA", f->n);
    for (size_t i = 0; i < f->n; i++) {
        const struct member *m = &f->m[i];
        int64_t end = m->ended_ms ? m->ended_ms : now;
        const char *mark = !m->ended ? frames[f->tick % 4] : m->code == 0 ? "+" : "x";
        printf("\r\033[K%s %-9s %-12s %6.1fs", mark, m->coder, m->state,
               m->started_ms ? (double)(end - m->started_ms) / 1000.0 : 0.0);
        if (m->tokens >= 0)
            printf("  %lld tokens", (long long)m->tokens);
        if (m->conv[0])
            printf("  %.12s", m->conv);
        putchar('\n');
    }
    fflush(stdout);
    f->drawn = 1;
    f->tick++;
}

/* Without a terminal: a line as each member ends. */
static void say_ended(const struct member *m)
{
    printf("%s %s %.1fs %s\n", m->coder, m->state,
           m->started_ms ? (double)(m->ended_ms - m->started_ms) / 1000.0 : 0.0,
           m->conv[0] ? m->conv : "-");
    fflush(stdout);
}

/* The channel's lines are read from the store by seq (poll_member): they
 * only say when. */
static void on_line(void *data, const char *line, size_t len)
{
    (void)data, (void)line, (void)len;
}

/* Wait up to POLL_MS for any running member's owner to commit events
 * (their channels, connected as their runs start; the store is read
 * every POLL_MS without one). */
static void wait_members(struct fanout *f)
{
    struct pollfd *p = bt_xcalloc(f->n, sizeof *p);
    size_t *of = bt_xcalloc(f->n, sizeof *of); /* p[k] is member of[k]'s */
    nfds_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        struct member *m = &f->m[i];
        if (m->ended || !m->run[0])
            continue;
        if (m->conn.fd < 0)
            bt_channel_follow_start(bt_store_home(f->s), m->run, 0, &m->conn, on_line, m);
        if (m->conn.fd >= 0) {
            p[n] = (struct pollfd){.fd = m->conn.fd, .events = POLLIN};
            of[n++] = i;
        }
    }
    if (poll(p, n, POLL_MS) > 0)
        for (nfds_t i = 0; i < n; i++)
            if (p[i].revents && bt_channel_conn_read(&f->m[of[i]].conn) != 0)
                bt_channel_conn_close(&f->m[of[i]].conn); /* its owner closed it: its end comes */
    free(of);
    free(p);
}

/* Follow every member to its end; 0, or an exit code when following
 * stopped (Ctrl-C, stdout gone, the store unreadable). */
static int follow(struct fanout *f)
{
    int64_t checked = bt_mono_ms(), drawn = 0;
    for (;;) {
        size_t open = 0;
        int64_t now = bt_mono_ms();
        int check = now - checked >= RECOVER_MS;
        if (check)
            checked = now;
        for (size_t i = 0; i < f->n; i++) {
            struct member *m = &f->m[i];
            if (m->ended || !m->run[0])
                continue;
            if (poll_member(f, m, check) != 0)
                return bt_cmd_fail(BT_EXIT_FAILED, "cannot read the runs: %s",
                                   bt_store_errmsg(f->s));
            if (m->ended && !f->live && !f->json)
                say_ended(m);
            open += !m->ended;
        }
        if (f->json)
            fflush(stdout);
        if (f->live && (now - drawn >= 100 || !open)) {
            draw(f);
            drawn = now;
        }
        if (!open)
            return 0;
        int err = bt_cmd_stdout_error(1);
        if (err)
            return err == EPIPE ? BT_EXIT_STDOUT_CLOSED : BT_EXIT_FAILED;
        if (interrupted)
            return BT_EXIT_CANCELLED;
        wait_members(f);
    }
}

/* 1 if a member's conversation was made. */
static int started(const struct fanout *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->m[i].conv[0])
            return 1;
    return 0;
}

/* The group side by side, from the store. */
static void table(struct fanout *f)
{
    struct bt_service_group g;
    if (bt_service_group_show(f->s, f->group, &g) == 0) {
        putchar('\n');
        bt_cmd_members_table(stdout, g.conv, g.member, g.n);
    }
    bt_service_group_release(&g);
}

/* --detach: the members as started, and nothing followed. */
static void say_detached(const struct fanout *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const struct member *m = &f->m[i];
        if (!m->run[0])
            continue;
        if (f->json) {
            struct bt_buf b = BT_BUF_INIT;
            bt_buf_addc(&b, '{');
            bt_json_member(&b, "group", f->group);
            bt_json_member(&b, "coder", m->coder);
            bt_json_member(&b, "conversation", m->conv);
            bt_json_member(&b, "run", m->run);
            bt_buf_adds(&b, ",\"detached\":true}\n");
            fputs(b.data, stdout);
            bt_buf_release(&b);
        } else {
            printf("%s %s\n", m->conv, m->coder);
        }
    }
}

/* The exit code: 0 when every member completed, else the first other. */
static int outcome(const struct fanout *f, int followed)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->m[i].failure)
            fprintf(stderr, "baton: %s: %s\n", f->m[i].coder, f->m[i].failure);
    if (followed)
        return followed;
    for (size_t i = 0; i < f->n; i++)
        if (f->m[i].code)
            return f->m[i].code;
    return BT_EXIT_OK;
}

int bt_cmd_fanout(struct bt_store *s, const struct bt_service_turn *t, const char *coders, int json,
                  int detach)
{
    struct fanout f = {.s = s, .json = json};
    struct bt_strv names;
    struct bt_service_fanout made = {0};
    int rc = split(coders, &names);
    if (rc == 0 && t->branch)
        rc = bt_cmd_fail(BT_EXIT_USAGE, "--branch names one branch: with several coders each "
                                        "gets its own, baton/<short id>");
    if (rc == 0 && !t->worktree)
        fprintf(stderr,
                "baton: the %zu coders share %s: each one's changes may hold the others' "
                "(--worktree gives each its own)\n",
                names.n, t->cwd);
    /* from here a signal is heard, not the default action: the members
     * are all made and started before following stops */
    struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term, old_hup;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    if (rc == 0 && bt_service_fanout(s, t, (const char *const *)names.v, names.n, &made) != 0 &&
        !made.n) /* refused before anything was made */
        rc = bt_cmd_fail(made.result == BT_SERVICE_USAGE ? BT_EXIT_USAGE : BT_EXIT_FAILED, "%s",
                         made.message);
    hear_signals(); /* a version probe's libuv handlers leave the default */
    if (rc == 0) {
        f.m = bt_xcalloc(made.n, sizeof *f.m);
        take_members(&f, &made);
        if (f.group[0])
            start_workers(&f, t);
        int followed = 0;
        if (!started(&f)) { /* none started: no group to show */
            if (f.group[0])
                bt_store_group_delete_empty(s, f.group);
            f.group[0] = '\0';
        } else if (detach) {
            say_detached(&f);
        } else {
            f.live = !json && isatty(STDOUT_FILENO);
            followed = follow(&f);
            if (followed == BT_EXIT_CANCELLED)
                fprintf(stderr, "baton: stopped following; the turns go on in their workers\n");
            if (!json && followed != BT_EXIT_STDOUT_CLOSED)
                table(&f);
        }
        rc = outcome(&f, followed);
        if (!json && f.group[0])
            fprintf(stderr, "group %s (`baton group show %.12s`)\n", f.group, f.group);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    for (size_t i = 0; i < f.n; i++) {
        free(f.m[i].failure);
        bt_channel_conn_close(&f.m[i].conn);
    }
    free(f.m);
    bt_service_fanout_release(&made);
    bt_strv_release(&names);
    return rc;
}
