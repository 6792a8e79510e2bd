/* SPDX-License-Identifier: MIT */
/*
 * cmd-run: `baton run` (a new conversation, one turn), `baton send` (the
 * next turn of a conversation, or queued while one runs) and `baton retry`
 * (the last prompt again after a failed turn). Human output or, with
 * --json, the event stream as JSON lines on stdout and nothing else there.
 * With --detach the turn runs in a detached worker (cmd-worker.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd-turn.h"
#include "cmd.h"
#include "error.h"
#include "render.h"
#include "service.h"

#define BT_PROMPT_MAX BT_SERVICE_PROMPT_MAX

enum mode { MODE_RUN, MODE_SEND, MODE_RETRY };

struct run_args {
    struct bt_service_turn turn;
    enum mode mode;
    int json;
    int detach;
    char *cwd;    /* owned absolute path */
    char *prompt; /* owned */
};

/* Seconds as a decimal number, 0 meaning "no limit"; anything else below a
 * millisecond becomes one, so a tiny limit never turns into none. */
int bt_cmd_parse_seconds(const char *s, uint64_t *ms)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0 && v <= 1e7)) /* also refuses nan */
        return -1;
    *ms = (uint64_t)(v * 1000.0);
    if (*ms == 0 && v > 0)
        *ms = 1;
    return 0;
}

int bt_cmd_parse_approval(const char *s, enum bt_approval *a)
{
    if (strcmp(s, "deny") == 0 || strcmp(s, "decline") == 0)
        *a = BT_APPROVAL_DENY;
    else if (strcmp(s, "auto") == 0)
        *a = BT_APPROVAL_AUTO;
    else if (strcmp(s, "never") == 0)
        *a = BT_APPROVAL_NEVER;
    else
        return -1;
    return 0;
}

/* Read all of stdin (for "-"), at most BT_PROMPT_MAX + 1 bytes. */
static int read_stdin(struct bt_buf *b)
{
    char chunk[65536];
    size_t n;
    while (b->len <= BT_PROMPT_MAX && (n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
        bt_buf_add(b, chunk, n);
    if (ferror(stdin))
        return bt_fail(BT_EXIT_USAGE, "cannot read the prompt from stdin: %s", strerror(errno));
    /* the line ending(s) `echo` or an editor leave at the end */
    while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r'))
        b->data[--b->len] = '\0';
    return 0;
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return 0;
    return 1;
}

/* The prompt: the argument, or stdin for "-". It must be text a coder's
 * JSON protocol can carry: valid UTF-8, no NUL, not blank, bounded. */
static int read_prompt(const char *arg, char **prompt)
{
    struct bt_buf b = BT_BUF_INIT;
    int rc = 0;
    if (strcmp(arg, "-") == 0)
        rc = read_stdin(&b);
    else
        bt_buf_adds(&b, arg);
    size_t bad = bt_utf8_invalid_at(b.data, b.len);
    if (rc != 0)
        goto out;
    if (b.len > BT_PROMPT_MAX)
        rc = bt_fail(BT_EXIT_USAGE, "the prompt is larger than %zu MiB", BT_PROMPT_MAX >> 20);
    else if (memchr(b.data, '\0', b.len))
        rc = bt_fail(BT_EXIT_USAGE, "the prompt contains a NUL byte");
    else if (bad < b.len)
        rc = bt_fail(BT_EXIT_USAGE, "the prompt is not valid UTF-8 (byte %zu)", bad);
    else if (is_blank(b.data))
        rc = bt_fail(BT_EXIT_USAGE, "the prompt is empty");
out:
    *prompt = bt_buf_detach(&b, NULL);
    return rc;
}

/* The options every turn takes (also the worker's); returns 0 when c was
 * one of them, 1 when it was not, or an exit code. */
int bt_cmd_turn_option(int c, struct bt_service_turn *t)
{
    switch (c) {
    case 'r': t->no_retry = 1; return 0;
    case 'a':
        if (bt_cmd_parse_approval(optarg, &t->approval))
            return bt_fail(BT_EXIT_USAGE, "--approval takes deny, auto or never");
        return 0;
    case 't':
        if (bt_cmd_parse_seconds(optarg, &t->timeout_ms))
            return bt_fail(BT_EXIT_USAGE, "--timeout takes seconds, e.g. 300");
        return 0;
    case 'i':
        if (bt_cmd_parse_seconds(optarg, &t->idle_timeout_ms))
            return bt_fail(BT_EXIT_USAGE, "--idle-timeout takes seconds, e.g. 120");
        return 0;
    default: return 1;
    }
}

static int set_cwd(struct run_args *a, const char *dir)
{
    struct stat st;
    a->cwd = realpath(dir, NULL);
    if (!a->cwd || stat(a->cwd, &st) != 0 || !S_ISDIR(st.st_mode))
        return bt_fail(BT_EXIT_USAGE, "cannot use '%s' as the working directory", dir);
    if (bt_utf8_invalid_at(a->cwd, strlen(a->cwd)) < strlen(a->cwd))
        return bt_fail(BT_EXIT_USAGE, "the working directory's name is not valid UTF-8");
    a->turn.cwd = a->cwd;
    return 0;
}

/* Parse the options of run, send and retry; returns 0 or an exit code
 * (-1 after --help). */
static int parse(int argc, char **argv, struct run_args *a)
{
    static const struct option opts[] = {BT_CMD_TURN_OPTIONS,
                                         {"coder", required_argument, NULL, 'c'},
                                         {"model", required_argument, NULL, 'm'},
                                         {"cwd", required_argument, NULL, 'C'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"detach", no_argument, NULL, 'd'},
                                         {"force", no_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *dir = ".";
    int c, is_run = a->mode == MODE_RUN;
    a->turn.coder = "codex";
    a->turn.idle_timeout_ms = BT_CMD_IDLE_TIMEOUT_MS;
    optind = 1;
    while ((c = getopt_long(argc, argv, is_run ? "c:m:C:dh" : "dh", opts, NULL)) != -1) {
        int rc = bt_cmd_turn_option(c, &a->turn);
        if (rc == 0)
            continue;
        if (rc != 1)
            return rc;
        switch (c) {
        case 'c': a->turn.coder = optarg; break;
        case 'm': a->turn.model = optarg; break;
        case 'C': dir = optarg; break;
        case 'j': a->json = 1; break;
        case 'd': a->detach = 1; break;
        case 'f': a->turn.force = 1; break;
        case 'h': bt_help(argv[0]); return -1;
        default: return bt_bad_option(argv);
        }
        if ((!is_run && (c == 'c' || c == 'm' || c == 'C')) || (is_run && c == 'f'))
            return bt_usage(argv[0]);
    }
    int want = a->mode == MODE_RUN ? 1 : a->mode == MODE_SEND ? 2 : 1;
    if (argc - optind != want)
        return bt_usage(argv[0]);
    int rc = set_cwd(a, dir);
    if (rc || a->mode == MODE_RETRY)
        return rc;
    rc = read_prompt(argv[argc - 1], &a->prompt);
    a->turn.prompt = a->prompt;
    return rc;
}

static void print_json(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    (void)data;
    (void)ev;
    fwrite(json, 1, len, stdout);
    fflush(stdout);
}

static void print_human(void *data, const struct bt_event *ev, const char *json, size_t len)
{
    (void)json;
    (void)len;
    bt_render_event(data, ev);
}

static void tick(void *data)
{
    bt_render_tick(data);
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
    struct bt_render render;
    struct bt_service_outcome out = {0};
    bt_render_init(&render, stdout, stderr);
    a->turn.on_event = a->json ? print_json : print_human;
    a->turn.on_tick = a->json ? NULL : tick;
    a->turn.data = &render;
    a->turn.queue = a->mode == MODE_SEND ? BT_STORE_QUEUE_IF_BUSY : BT_STORE_QUEUE_NEVER;
    if (a->mode == MODE_RUN)
        bt_service_run(s, &a->turn, &out);
    else if (a->mode == MODE_SEND)
        bt_service_send(s, conv, &a->turn, &out);
    else
        bt_service_retry(s, conv, &a->turn, &out);
    if (out.message)
        bt_fail(out.exit_code, "%s", out.message);
    else if (out.queued)
        say_queued(&out, a->json);
    else if (!a->json)
        fprintf(stderr, "conversation %s\n", out.conversation);
    hand_on_queue(a, &out);
    free(out.message);
    return out.exit_code;
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
        bt_fail(out.exit_code, "%s", out.message ? out.message : bt_strerror(rc));
        free(out.message);
        return out.exit_code ? out.exit_code : BT_EXIT_FAILED;
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
    if (mode != MODE_RUN && (rc = bt_cmd_resolve(s, argv[optind], conv)) != 0)
        goto done;
    rc = a.detach ? detached(s, &a, conv) : foreground(s, &a, conv);
done:
    bt_store_close(s);
    free(a.cwd);
    free(a.prompt);
    return rc < 0 ? 0 : rc;
}

int bt_cmd_run(int argc, char **argv)
{
    return execute(argc, argv, MODE_RUN);
}

int bt_cmd_send(int argc, char **argv)
{
    return execute(argc, argv, MODE_SEND);
}

int bt_cmd_retry(int argc, char **argv)
{
    return execute(argc, argv, MODE_RETRY);
}
