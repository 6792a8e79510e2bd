/* SPDX-License-Identifier: MIT */
/*
 * cmd-attach: `baton attach CONV [--from SEQ] [--json]` follows the running
 * (or last) turn of a conversation, whichever process runs it: events come
 * live through the run owner's channel (channel.h) as the owner commits
 * them (after each read from the coder), and are read from the store by
 * sequence number for what came before (or while there is no channel), so
 * any number of attachers see the same events in the same order, each
 * once, and one that joins late starts from seq 1. It
 * ends with the turn's turn.completed and exits with the turn's exit code.
 * The owner (pid and start time stored with the run) is checked every
 * second: one that died meanwhile is recovered here (the run is rebuilt
 * from its raw output, or becomes interrupted, and gets its closing
 * turn.completed), which is then followed to its end. When the store
 * cannot be written, the run cannot be recovered: attach says so and
 * exits, rather than waiting for a turn nobody runs, and never says "the
 * turn goes on" when its owner is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "error.h"
#include "proc.h"
#include "render.h"
#include "service.h"
#include "store.h"

#define POLL_MS 50      /* between reads of new events */
#define RECOVER_MS 1000 /* between checks that the owner still lives */
#define HINT_MS 1000    /* a request still open this long waits for a person */

/* Ctrl-C (or SIGTERM) stops following; the turn is not ours to stop. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

struct follow {
    struct bt_render render;
    int json;
    int64_t next;       /* next seq to read */
    int ended;          /* turn.completed seen */
    int exit_code;      /* from turn.completed */
    const char *conv;   /* the conversation followed */
    int64_t asked_seq;  /* the last approval.requested shown, 0: none */
    int64_t asked_ms;   /* when it was shown (bt_mono_ms) */
    int64_t hinted_seq; /* requests up to this seq were said to wait */
};

/* Render one stored event; the turn's end decides the exit code. */
static void show(struct follow *f, const struct bt_store_event *ev)
{
    struct bt_event e;
    struct bt_event_doc *doc = NULL;
    int parsed = bt_event_parse(ev->data, ev->len, &e, &doc) == 0;
    if (f->json) {
        fwrite(ev->data, 1, ev->len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    } else if (parsed) {
        bt_render_event(&f->render, &e);
    }
    if (parsed && e.type == BT_EVENT_APPROVAL_REQUESTED) {
        f->asked_seq = ev->seq;
        f->asked_ms = bt_mono_ms();
    }
    if (parsed && e.type == BT_EVENT_TURN_COMPLETED) {
        f->ended = 1;
        f->exit_code = bt_cmd_exit_turn(e.status, bt_error_kind_parse(e.kind));
    }
    bt_event_doc_free(doc);
}

static int on_stored(void *data, const struct bt_store_event *ev)
{
    struct follow *f = data;
    f->next = ev->seq + 1;
    show(f, ev);
    return f->ended;
}

static int exit_for_state(enum bt_store_run_state st)
{
    switch (st) {
    case BT_STORE_RUN_COMPLETED: return BT_EXIT_OK;
    case BT_STORE_RUN_CANCELLED: return BT_EXIT_CANCELLED;
    default: return BT_EXIT_FAILED;
    }
}

/* The run's state now; INTERRUPTED if it cannot be read. */
static enum bt_store_run_state run_state(struct bt_store *s, const char *run)
{
    struct bt_store_run r;
    enum bt_store_run_state st =
        bt_store_run_get(s, run, &r) == 0 ? r.state : BT_STORE_RUN_INTERRUPTED;
    bt_store_run_release(&r);
    return st;
}

/* 1 if run is still marked running and its owner is gone (*pid: its pid). */
static int owner_gone(struct bt_store *s, const char *run, int *pid)
{
    struct bt_store_run r;
    int gone = 0;
    if (bt_store_run_get(s, run, &r) == 0) {
        gone = r.state == BT_STORE_RUN_RUNNING && bt_proc_pid_gone(r.owner_pid, r.owner_start);
        *pid = r.owner_pid;
    }
    bt_store_run_release(&r);
    return gone;
}

/* A request that waits for a person (--approval ask) says so once it has
 * waited HINT_MS, with the command that answers it from this terminal:
 * a policy decides within milliseconds, so one still open then waits for
 * someone, and the turn looks stalled without a word. */
static void hint(struct bt_store *s, struct follow *f)
{
    if (f->json || f->asked_seq <= f->hinted_seq || bt_mono_ms() - f->asked_ms < HINT_MS)
        return;
    int64_t before = f->hinted_seq;
    f->hinted_seq = f->asked_seq;
    struct bt_service_requests r = {0};
    if (bt_service_pending(s, f->conv, &r) != 0)
        return;
    for (size_t i = 0; i < r.n; i++) {
        const struct bt_service_request *q = &r.v[i];
        if (q->seq <= before)
            continue;
        char *line =
            strcmp(q->kind, "user_input") == 0
                ? bt_xasprintf("the question above waits for your answer: baton answer %.12s "
                               "--id %s ANSWER",
                               f->conv, q->request_id)
                : bt_xasprintf("%s %s waits for you: baton approve %.12s %s --allow (or "
                               "--always, --deny)",
                               q->kind, q->summary ? q->summary : "", f->conv, q->request_id);
        bt_render_note(&f->render, line);
        free(line);
    }
    bt_service_requests_release(&r);
}

/* One round's checks after the store was read: -1 to go on, else the
 * exit code. */
static int follow_step(struct bt_store *s, const char *run, struct follow *f,
                       enum bt_store_run_state st, int64_t *checked)
{
    if (f->ended)
        return f->exit_code;
    int err = bt_cmd_stdout_error(1);
    if (err) { /* the reader is gone: stop following, the turn is not ours */
        fprintf(stderr, "baton: %s; the turn goes on (`baton attach` follows it again)\n",
                err == EPIPE ? "stdout was closed" : bt_cmd_stdout_reason(err));
        return err == EPIPE ? BT_EXIT_STDOUT_CLOSED : BT_EXIT_FAILED;
    }
    if (st != BT_STORE_RUN_RUNNING)
        return exit_for_state(st);
    int pid = 0;
    int64_t now = bt_mono_ms();
    if (interrupted || now - *checked >= RECOVER_MS) {
        *checked = now;
        if (owner_gone(s, run, &pid)) {
            bt_cmd_recover(s);
            if (run_state(s, run) != BT_STORE_RUN_RUNNING)
                return -1; /* recovered: its end is read next */
            return bt_cmd_fail(
                BT_EXIT_FAILED,
                "the baton process running this turn (pid %d) is gone, and the store "
                "cannot be written to recover the run now; the next baton command "
                "that can write it rebuilds the run from the coder's raw output",
                pid);
        }
    }
    if (interrupted)
        return bt_cmd_fail(BT_EXIT_CANCELLED, "stopped following; the turn goes on "
                                              "(baton cancel stops it)");
    return -1;
}

/* The live side: the run owner's channel (channel.h), events as they are
 * committed, each shown once: a seq already shown is dropped, a gap is
 * read from the store first. */
struct live {
    struct follow *f;
    struct bt_store *s;
    const char *run;
    struct bt_channel_conn conn;
    int connected;
    int64_t tried_ms; /* the last connection attempt (bt_mono_ms) */
};

static void on_live(void *data, const char *line, size_t len)
{
    struct live *l = data;
    struct bt_event e;
    struct bt_event_doc *doc = NULL;
    if (len == 0 && !l->f->ended) { /* a line too long to pass: committed, so stored */
        bt_store_event_each(l->s, l->run, l->f->next, on_stored, l->f);
        return;
    }
    if (l->f->ended || bt_event_parse(line, len, &e, &doc) != 0 || !e.run ||
        strcmp(e.run, l->run) != 0) { /* not this run's: the store has its events */
        bt_event_doc_free(doc);
        return;
    }
    int64_t seq = e.seq;
    bt_event_doc_free(doc);
    if (seq > l->f->next) /* cut off and back, or joined between: the store has it */
        bt_store_event_each(l->s, l->run, l->f->next, on_stored, l->f);
    if (seq != l->f->next || l->f->ended)
        return;
    struct bt_store_event ev = {.run = l->run, .seq = seq, .data = line, .len = len};
    on_stored(l->f, &ev);
}

/* Connect to the owner's channel while the run runs, at most every
 * POLL_MS: before it listens (a turn waiting for its slot) and after it
 * closed (the coder is gone, the end is being recorded), the store is
 * polled instead. */
static void live_connect(struct live *l)
{
    int64_t now = bt_mono_ms();
    if (l->connected || now - l->tried_ms < POLL_MS)
        return;
    l->tried_ms = now;
    l->connected = bt_channel_follow(bt_store_home(l->s), l->run, &l->conn, on_live, l) == 0;
}

/* Wait up to ms for the owner's next events (shown as they come), or
 * sleep that long without a channel. */
static void live_wait(struct live *l, unsigned ms)
{
    if (!l->connected) {
        bt_cmd_sleep_ms(ms < POLL_MS ? ms : POLL_MS);
        return;
    }
    if (bt_channel_conn_wait(&l->conn, (int)ms) != 0 && bt_channel_conn_read(&l->conn) != 0) {
        bt_channel_conn_close(&l->conn); /* the owner closed it: the store has the rest */
        l->connected = 0;
    }
}

/* Follow run until its end; returns the exit code. */
static int follow_run(struct bt_store *s, const char *run, struct follow *f)
{
    struct live l = {.f = f, .s = s, .run = run, .tried_ms = -POLL_MS};
    int64_t checked = bt_mono_ms(), ticked = checked;
    int rc = -1;
    while (rc < 0) {
        /* the state is read before the events, so events committed before
         * the run ended are all read below; connecting before the store is
         * read means no event falls between the two */
        enum bt_store_run_state st = run_state(s, run);
        if (st == BT_STORE_RUN_RUNNING)
            live_connect(&l);
        if (bt_store_event_each(s, run, f->next, on_stored, f) < 0) {
            rc =
                bt_cmd_fail(BT_EXIT_FAILED, "cannot read the run's events: %s", bt_store_errmsg(s));
            break;
        }
        rc = follow_step(s, run, f, st, &checked);
        if (rc >= 0)
            break;
        if (!f->json && bt_mono_ms() - ticked >= 100) {
            hint(s, f);
            bt_render_tick(&f->render);
            ticked = bt_mono_ms();
        }
        live_wait(&l, f->json ? RECOVER_MS : 100);
        if (f->ended)
            rc = f->exit_code;
    }
    bt_channel_conn_close(&l.conn);
    return rc;
}

static int parse(int argc, char **argv, struct follow *f, const char **conv)
{
    struct bt_args a;
    int id;
    f->next = 1;
    bt_args_init(&a, &bt_cmd_def_attach, argc, argv);
    while ((id = bt_args_next(&a)) > 0) {
        if (id == 'j') {
            f->json = 1;
            continue;
        }
        f->next = (int64_t)bt_cmd_parse_count(a.value, INT32_MAX);
        if (f->next < 1)
            return bt_args_fail(&a, "--from takes an event number, 1 or more, not '%s'", a.value);
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&a);
    *conv = a.operands[0];
    return rc;
}

static const struct bt_opt attach_opts[] = {
    {.id = 'j', .name = "json", .help = "the events as JSON lines on stdout"},
    {.id = 'f',
     .name = "from",
     .value = "SEQ",
     .help = "start at event SEQ (default 1: the whole turn)"},
    {0}};

const struct bt_cmd bt_cmd_def_attach = {
    .name = "attach",
    .run = bt_cmd_attach,
    .operands = "CONV",
    .summary = "follow the running (or last) turn of a conversation",
    .opts = attach_opts,
    .notes = "Ends when the turn ends, with the turn's exit code. Ctrl-C leaves the turn\n"
             "running. A request of the turn that waits for a person (--approval ask) is\n"
             "said, with the `baton approve` or `baton answer` that answers it.\n"};

int bt_cmd_attach(int argc, char **argv)
{
    struct follow f = {0};
    const char *text = NULL;
    int rc = parse(argc, argv, &f, &text);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct bt_store *s;
    char conv[BT_ID_SIZE];
    struct bt_store_run run = {0};
    if ((rc = bt_cmd_open_store(&s)) != 0)
        return rc;
    if ((rc = bt_cmd_resolve(s, text, conv)) != 0)
        goto out;
    if (bt_store_run_last(s, conv, &run) != 0) {
        rc = bt_cmd_fail(BT_EXIT_USAGE, "conversation %s has no turn to follow", conv);
        goto out;
    }
    bt_render_init(&f.render, stdout, stderr);
    f.conv = conv;
    if (!f.json && run.waiting) /* nothing comes until then: say why */
        fprintf(stderr, "baton: the turn waits for a turn slot (at most BATON_MAX_TURNS detached "
                        "turns run at once); it starts when one is free\n");
    struct sigaction sa = {.sa_handler = on_interrupt};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = follow_run(s, run.id, &f);
    if (!f.json)
        fprintf(stderr, "conversation %s\n", conv);
out:
    bt_store_run_release(&run);
    bt_store_close(s);
    return rc;
}
