/* SPDX-License-Identifier: MIT */
/*
 * cmd-run: `baton run` (a new conversation, one turn), `baton send` (the
 * next turn of a conversation, or queued while one runs) and `baton retry`
 * (the last prompt again after a failed turn), and `baton steer` (or
 * `send --steer`: the text into the running turn, service-steer.c). Human
 * output or, with
 * --json, the event stream as JSON lines on stdout and nothing else there.
 * With --detach the turn runs in a detached worker (cmd-turn.c starts it,
 * cmd-worker.c is the worker).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-ask.h"
#include "cmd-common.h"
#include "cmd-opts.h"
#include "cmd-exit.h"
#include "cmd-fanout.h"
#include "cmd-turn.h"
#include "cmd.h"
#include "coder.h"
#include "input.h"
#include "error.h"
#include "render.h"
#include "service.h"
#include "view.h"

#define BT_PROMPT_MAX BT_SERVICE_PROMPT_MAX

enum mode { MODE_RUN, MODE_SEND, MODE_RETRY, MODE_STEER };

/* How long steer waits for the turn's owner to take the text in or queue
 * it before saying it is stored (it then still goes in, or is queued). */
#define STEER_WAIT_MS 5000

struct run_args {
    struct bt_service_turn turn;
    enum mode mode;
    int json;
    int detach;
    int steer;        /* send --steer */
    char *cwd;        /* owned absolute path */
    char *prompt;     /* owned */
    const char *conv; /* CONV as typed (send, retry) */
};

/* Read all of stdin (for "-"), at most BT_PROMPT_MAX + 1 bytes. */
static int read_stdin(struct bt_buf *b)
{
    char chunk[65536];
    size_t n;
    while (b->len <= BT_PROMPT_MAX && (n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
        bt_buf_add(b, chunk, n);
    if (ferror(stdin))
        return bt_cmd_fail(BT_EXIT_USAGE, "cannot read the prompt from stdin: %s", strerror(errno));
    /* the line ending(s) `echo` or an editor leave at the end */
    while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
        b->data[--b->len] = '\0';
    return 0;
}

/* The prompt: the argument, or stdin for "-" (input.h says what it must be).
 * Nothing but blanks on stdin is one usage error, whether "-" was typed
 * or stdin was taken for the missing PROMPT. */
static int read_prompt(const struct bt_args *args, const char *arg, char **prompt)
{
    struct bt_buf b = BT_BUF_INIT;
    int rc = 0;
    if (!arg)
        return bt_cmd_fail(BT_EXIT_USAGE, "missing PROMPT");
    if (strcmp(arg, "-") == 0)
        rc = read_stdin(&b);
    else
        bt_buf_adds(&b, arg);
    char *why = rc ? NULL : bt_input_prompt_problem(b.data ? b.data : "", b.len);
    if (why && strcmp(arg, "-") == 0 && strcmp(why, "the prompt is empty") == 0)
        rc = bt_args_fail(args, "missing PROMPT: stdin holds no text");
    else if (why)
        rc = bt_cmd_fail(BT_EXIT_USAGE, "%s", why);
    free(why);
    *prompt = bt_buf_detach(&b, NULL);
    return rc;
}

static int set_cwd(struct run_args *a, const struct bt_args *args, const char *dir)
{
    char *why = bt_input_cwd(dir, &a->cwd);
    if (why) {
        int rc = bt_args_fail(args, "%s", why);
        free(why);
        return rc;
    }
    a->turn.cwd = a->cwd;
    return 0;
}

static int check_model(const struct bt_args *a)
{
    if (!*a->value)
        return bt_args_fail(a, "%s needs a model name (without -m the coder uses its own)", a->arg);
    const char *why = bt_input_model_problem(a->value);
    return why ? bt_args_fail(a, "%s: %s", a->arg, why) : 0;
}

/* Parse the options of run, send and retry; returns 0 or an exit code
 * (-1 after --help). */
static int parse(int argc, char **argv, struct run_args *a)
{
    struct bt_args args;
    const char *dir = ".";
    int id;
    a->turn.coder = bt_coders[0]->name;
    a->turn.idle_timeout_ms = BT_CMD_IDLE_TIMEOUT_MS;
    static const struct bt_cmd *const entries[] = {
        [MODE_RUN] = &bt_cmd_def_run,
        [MODE_SEND] = &bt_cmd_def_send,
        [MODE_RETRY] = &bt_cmd_def_retry,
        [MODE_STEER] = &bt_cmd_def_steer,
    };
    bt_args_init(&args, entries[a->mode], argc, argv);
    while ((id = bt_args_next(&args)) > 0) {
        int rc = bt_cmd_turn_option(&args, id, &a->turn);
        if (rc != 1) {
            if (rc)
                return rc;
            continue;
        }
        switch (id) {
        case 'c':
            /* several, comma-separated: run fans out (cmd-fanout.c) */
            if ((rc = bt_cmd_check_coders(&args, args.value, a->mode == MODE_RUN)) != 0)
                return rc;
            a->turn.coder = args.value;
            break;
        case 'm':
            if ((rc = check_model(&args)) != 0)
                return rc;
            a->turn.model = args.value;
            break;
        case 'C': dir = args.value; break;
        case 'j': a->json = 1; break;
        case 'd': a->detach = 1; break;
        case 's': a->steer = 1; break;
        case 'f': a->turn.force = 1; break;
        case 'W': a->turn.worktree = 1; break;
        case 'b': a->turn.branch = args.value; break;
        }
    }
    int rc = id < 0 ? BT_EXIT_USAGE : bt_args_end(&args);
    if (rc == 0 && a->steer && a->detach)
        rc = bt_args_fail(&args, "--steer puts the text into the running turn: no --detach");
    if (a->steer)
        a->mode = MODE_STEER;
    if (rc == 0 && a->turn.branch && !a->turn.worktree)
        rc = bt_args_fail(&args, "--branch names the branch of --worktree: give both");
    if (rc)
        return rc;
    a->conv = a->mode == MODE_RUN ? NULL : args.operands[0];
    int conv_first = a->mode == MODE_SEND || a->mode == MODE_STEER; /* CONV [PROMPT] */
    const char *prompt = a->mode == MODE_RETRY ? NULL : args.operands[conv_first];
    int implicit = a->mode != MODE_RETRY && args.n_operands == conv_first;
    if (implicit) {
        /* no PROMPT: a pipe or file on stdin is the prompt, as with
         * `claude -p` and `codex exec`; a terminal would wait unseen */
        if (isatty(STDIN_FILENO))
            return bt_args_fail(&args, "missing PROMPT (give it, or - or a pipe for stdin)");
        prompt = "-";
    }
    if ((rc = set_cwd(a, &args, dir)) != 0 || a->mode == MODE_RETRY)
        return rc;
    rc = read_prompt(&args, prompt, &a->prompt);
    a->turn.prompt = a->prompt;
    return rc;
}

/* Where a foreground turn's events go, and whether stdout still takes
 * them: once it does not (the reader of a pipe is gone: `| head`), the
 * turn stops as a cancel would stop it and nothing more is written. */
struct output {
    struct bt_render render;
    struct bt_cmd_ask *ask; /* --approval ask on a terminal: the inline ask; NULL: none */
    int json;
    int failed; /* errno of stdout (bt_cmd_stdout_error), 0 while it works */
};

static void print_event(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    struct output *o = data;
    if (o->failed)
        return;
    if (o->json)
        fwrite(json, 1, len, stdout);
    else
        bt_render_event(&o->render, ev);
    o->failed = bt_cmd_stdout_error(0); /* a gone reader: the tick polls for it */
    if (o->ask)
        bt_cmd_ask_event(o->ask, ev);
}

static int tick(void *data)
{
    struct output *o = data;
    if (!o->failed)
        o->failed = bt_cmd_stdout_error(1);
    if (o->ask)
        bt_cmd_ask_tick(o->ask);
    else if (!o->json && !o->failed)
        bt_render_tick(&o->render); /* no spinner over a question */
    return o->failed != 0;
}

/* The exit code and the sentence for a turn whose stdout went away: 141,
 * as the shell reports a tool killed by SIGPIPE, for a closed pipe. */
static int say_stdout_failed(const struct output *o, const struct bt_service_outcome *out)
{
    const char *what = o->failed == EPIPE ? "stdout was closed" : "stdout cannot be written";
    if (out->completed) /* it ended before the next tick noticed */
        fprintf(stderr, "baton: %s; the turn had completed (`baton show %.12s` has it all)\n", what,
                out->conversation);
    else
        fprintf(stderr,
                "baton: %s, so the turn was stopped; what the coder produced is stored "
                "(`baton show %.12s`)\n",
                what, out->conversation);
    if (o->failed != EPIPE)
        fprintf(stderr, "baton: stdout: %s\n", bt_cmd_stdout_reason(o->failed));
    return o->failed == EPIPE ? BT_EXIT_STDOUT_CLOSED : BT_EXIT_FAILED;
}

/* What a queued prompt means for the user, on stderr; with --json also
 * its queue number on stdout, for a script that may take it back. */
static void say_queued(const struct bt_service_outcome *out, int json)
{
    if (json) {
        struct bt_buf b = BT_BUF_INIT;
        bt_buf_addc(&b, '{');
        bt_json_member(&b, "conversation", out->conversation);
        bt_buf_addf(&b, ",\"queued\":true,\"queue_no\":%lld}\n", (long long)out->queue_no);
        fputs(b.data, stdout);
        bt_buf_release(&b);
    }
    fprintf(stderr,
            "baton: queued as #%lld in %s: it goes out when the running turn "
            "completes\n       (if that turn fails or is cancelled, with the next send; "
            "`baton rm-queued %.12s %lld` takes it back)\n",
            (long long)out->queue_no, out->conversation, out->conversation,
            (long long)out->queue_no);
}

/* After a completed turn, what others queued meanwhile goes out in a
 * detached worker, so this command ends with its own turn. */
static void hand_on_queue(const struct run_args *a, const struct bt_service_outcome *out)
{
    if (!out->completed || out->waiting <= 0)
        return;
    int rc = bt_cmd_worker_start("flush", out->conversation, &a->turn, NULL);
    if (rc == 0)
        fprintf(stderr,
                "baton: %lld queued message(s) of %s go out now in a detached worker "
                "(`baton attach %.12s` to follow)\n",
                (long long)out->waiting, out->conversation, out->conversation);
    else
        fprintf(stderr,
                "baton: %lld queued message(s) of %s wait: the worker to send them did not "
                "start (%s); `baton send` sends them first\n",
                (long long)out->waiting, out->conversation, bt_strerror(rc));
}

/* The turn in this process, rendered as it streams. */
static int foreground(struct bt_store *s, struct run_args *a, const char *conv)
{
    struct output o = {.json = a->json};
    struct bt_service_outcome out = {0};
    bt_render_init(&o.render, stdout, stderr);
    /* a person at the terminal answers the coder's requests inline */
    if (a->turn.approval == BT_APPROVAL_ASK && isatty(STDIN_FILENO))
        o.ask = bt_cmd_ask_new(s, STDIN_FILENO, stderr);
    a->turn.on_event = print_event;
    a->turn.on_tick = tick;
    a->turn.data = &o;
    a->turn.queue = a->mode == MODE_SEND ? BT_STORE_QUEUE_IF_BUSY : BT_STORE_QUEUE_NEVER;
    if (a->mode == MODE_RUN)
        bt_service_run(s, &a->turn, &out);
    else if (a->mode == MODE_SEND)
        bt_service_send(s, conv, &a->turn, &out);
    else
        bt_service_retry(s, conv, &a->turn, &out);
    if (out.message)
        bt_cmd_fail(bt_cmd_exit_service(&out), "%s", out.message);
    else if (out.queued)
        say_queued(&out, a->json);
    else if (!a->json)
        fprintf(stderr, "conversation %s\n", out.conversation);
    hand_on_queue(a, &out);
    free(out.message);
    bt_cmd_ask_free(o.ask);
    return o.failed && out.run[0] ? say_stdout_failed(&o, &out) : bt_cmd_exit_service(&out);
}

/* steer: the text into the running turn, or queued; said on stderr, or
 * as one JSON object on stdout (view.h bt_view_steered). */
static int steered(struct bt_store *s, const struct run_args *a, const char *conv)
{
    struct bt_service_steered st;
    int rc = bt_service_steer(s, conv, a->prompt, &a->turn, STEER_WAIT_MS, &st);
    if (rc) {
        int code = rc == BT_ESTORE ? BT_EXIT_FAILED : BT_EXIT_USAGE;
        bt_cmd_fail(code, "%s", st.message ? st.message : bt_strerror(rc));
        bt_service_steered_release(&st);
        return code;
    }
    if (a->json) {
        struct bt_buf b = BT_BUF_INIT;
        bt_view_steered(&b, conv, &st);
        printf("%s\n", b.data);
        bt_buf_release(&b);
    }
    if (st.state == BT_STORE_CONTROL_DONE)
        fprintf(stderr, "baton: steered the running turn of %s\n", conv);
    else if (st.state == BT_STORE_CONTROL_QUEUED) /* the reason may be the coder's words */
        bt_term_printf(stderr,
                       "baton: not steered (%s): queued as #%lld in %s, for the next turn\n"
                       "       (`baton rm-queued %.12s %lld` takes it back)\n",
                       st.reason ? st.reason : "the turn could not take it", (long long)st.queue_no,
                       conv, conv, (long long)st.queue_no);
    else
        fprintf(stderr,
                "baton: stored as request %lld for the running turn of %s; its owner has not "
                "taken it yet\n       (it goes into the turn, or is queued for the next one)\n",
                (long long)st.control, conv);
    bt_service_steered_release(&st);
    return BT_EXIT_OK;
}

/* --detach: store the prompt queued, then a worker takes it. */
static int detached(struct bt_store *s, struct run_args *a, const char *conv)
{
    struct bt_service_outcome out = {0};
    int rc = 0;
    a->turn.queue = BT_STORE_QUEUE_ALWAYS;
    if (a->mode == MODE_RUN)
        rc = bt_service_run(s, &a->turn, &out);
    else if (a->mode == MODE_SEND)
        rc = bt_service_send(s, conv, &a->turn, &out);
    else
        memcpy(out.conversation, conv, BT_ID_SIZE);
    if (rc) {
        int code = bt_cmd_exit_service(&out);
        bt_cmd_fail(code, "%s", out.message ? out.message : bt_strerror(rc));
        free(out.message);
        return code ? code : BT_EXIT_FAILED;
    }
    if (out.busy) { /* the running turn's owner sends it next */
        say_queued(&out, a->json);
        return BT_EXIT_OK;
    }
    return bt_cmd_worker_detach(s, a->mode == MODE_RETRY ? "retry" : "flush", out.conversation,
                                out.queued, &a->turn, a->json);
}

static int execute(int argc, char **argv, enum mode mode)
{
    struct run_args a = {.mode = mode};
    struct bt_store *s = NULL;
    char conv[BT_ID_SIZE] = "";
    int rc = parse(argc, argv, &a);
    if (rc)
        goto done;
    if ((rc = bt_cmd_open_store(&s)) != 0)
        goto done;
    if (mode != MODE_RUN && (rc = bt_cmd_resolve(s, a.conv, conv)) != 0)
        goto done;
    if (a.mode == MODE_STEER)
        rc = steered(s, &a, conv);
    else if (mode == MODE_RUN && strchr(a.turn.coder, ','))
        rc = bt_cmd_fanout(s, &a.turn, a.turn.coder, a.json, a.detach);
    else
        rc = a.detach ? detached(s, &a, conv) : foreground(s, &a, conv);
done:
    bt_store_close(s);
    free(a.cwd);
    free(a.prompt);
    return rc < 0 ? 0 : rc;
}

static const struct bt_opt run_opts[] = {
    {.id = 'c',
     .letter = 'c',
     .name = "coder",
     .value = "CODER",
     .help = "the coder (default: the first `baton coders` lists)"},
    {.id = 'm',
     .letter = 'm',
     .name = "model",
     .value = "MODEL",
     .help = "the model, as the coder names it (default: its own)"},
    {.id = 'C',
     .letter = 'C',
     .name = "cwd",
     .value = "DIR",
     .help = "the project directory (default: the current one)"},
    {.id = 'W',
     .name = "worktree",
     .help = "run the conversation in a git worktree of its own,\non a new branch "
             "baton/<short id> from HEAD\n(under $BATON_HOME/worktrees)"},
    {.id = 'b',
     .name = "branch",
     .value = "NAME",
     .help = "with --worktree: the new branch's name"},
    TURN_OPTS,
    {0}};

const struct bt_cmd bt_cmd_def_run = {
    .name = "run",
    .run = bt_cmd_run,
    .operands = "[PROMPT|-]",
    .summary = "start a conversation with one turn",
    .opts = run_opts,
    .notes =
        PROMPT_NOTE "With --worktree, the directory must be in a git repository with a commit;\n"
                    "the worktree has the whole repository, and the turns run at the directory's\n"
                    "place in it. `baton diff` shows what they changed; `baton rm` removes the\n"
                    "worktree and its branch when nothing would be lost.\n"};

int bt_cmd_run(int argc, char **argv)
{
    return execute(argc, argv, MODE_RUN);
}

static const struct bt_opt send_opts[] = {
    TURN_OPTS,
    {.id = 's',
     .name = "steer",
     .help = "put PROMPT into the running turn (as `baton steer`)\ninstead of queueing it"},
    {.id = 'f', .name = "force", .help = "send to a conversation handed off to the coder's UI"},
    {0}};

const struct bt_cmd bt_cmd_def_send = {
    .name = "send",
    .run = bt_cmd_send,
    .operands = "CONV [PROMPT|-]",
    .summary = "next turn of a conversation, queued while one runs",
    .opts = send_opts,
    .notes = PROMPT_NOTE
    "CONV is a conversation id or a unique prefix of one. The turn runs in the\n"
    "conversation's own directory with its coder and model, resuming its native\n"
    "session. While a turn of CONV runs (from any terminal), the prompt is queued\n"
    "instead and send exits 0 at once; when the running turn completes, everything\n"
    "queued goes out as the next turn, joined by blank lines (after a failed or\n"
    "cancelled turn it waits for the next send).\n"};

int bt_cmd_send(int argc, char **argv)
{
    return execute(argc, argv, MODE_SEND);
}

static const struct bt_opt steer_opts[] = {
    {.id = 'j', .name = "json", .help = "print what became of it as one JSON object"}, {0}};

const struct bt_cmd bt_cmd_def_steer = {
    .name = "steer",
    .run = bt_cmd_steer,
    .operands = "CONV [PROMPT|-]",
    .summary = "put a message into the running turn of a conversation",
    .opts = steer_opts,
    .notes =
        PROMPT_NOTE "The message goes into the running turn on the coder's own protocol (codex\n"
                    "turn/steer, pi steer, claude a user message): the coder takes it in before\n"
                    "its next model request, and it is part of that turn (`baton show`). With no\n"
                    "turn running, a coder that cannot steer (the ACP agents; `baton coders\n"
                    "--json` says which can), or a turn that ends first, it is queued as the next\n"
                    "turn's message instead, and steer says so; it is never lost or sent twice.\n"};

int bt_cmd_steer(int argc, char **argv)
{
    return execute(argc, argv, MODE_STEER);
}

static const struct bt_opt retry_opts[] = {
    TURN_OPTS,
    {.id = 'f', .name = "force", .help = "retry in a conversation handed off to the coder's UI"},
    {0}};

const struct bt_cmd bt_cmd_def_retry = {
    .name = "retry",
    .run = bt_cmd_retry,
    .operands = "CONV",
    .summary = "the last prompt again after a failed, cancelled or interrupted turn",
    .opts = retry_opts,
    .notes = "CONV is a conversation id or a unique prefix of one. A completed turn is never\n"
             "sent again (exit 2).\n"};

int bt_cmd_retry(int argc, char **argv)
{
    return execute(argc, argv, MODE_RETRY);
}
