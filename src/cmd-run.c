/* SPDX-License-Identifier: MIT */
/*
 * cmd-run: `baton run` (a new conversation, one turn) and `baton send`
 * (the next turn of a conversation). Human output or, with --json, the event
 * stream as JSON lines on stdout and nothing else there.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "render.h"
#include "service.h"

/* The largest prompt baton takes: far above what coders accept (codex
 * 0.171.0 refuses more than 1,048,576 characters), far below what could
 * strain a pipe or the store. */
#define BT_PROMPT_MAX (16 << 20)

struct run_args {
    struct bt_service_turn turn;
    int json;
    char *cwd;    /* owned absolute path */
    char *prompt; /* owned */
};

/* Seconds as a decimal number, 0 meaning "no limit"; anything else below a
 * millisecond becomes one, so a tiny limit never turns into none. */
static int parse_seconds(const char *s, uint64_t *ms)
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

static int parse_approval(const char *s, enum bt_approval *a)
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
        rc = bt_fail(BT_EXIT_USAGE, "the prompt is larger than %d MiB", BT_PROMPT_MAX >> 20);
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

/* Parse options common to run and send; returns 0 or an exit code. */
static int parse(int argc, char **argv, int is_run, struct run_args *a)
{
    static const struct option opts[] = {{"coder", required_argument, NULL, 'c'},
                                         {"model", required_argument, NULL, 'm'},
                                         {"cwd", required_argument, NULL, 'C'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"approval", required_argument, NULL, 'a'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"idle-timeout", required_argument, NULL, 'i'},
                                         {"no-retry", no_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *dir = ".";
    int c;
    a->turn.coder = "codex";
    a->turn.idle_timeout_ms = 600000;
    optind = 1;
    while ((c = getopt_long(argc, argv, is_run ? "c:m:C:h" : "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->turn.coder = optarg; break;
        case 'm': a->turn.model = optarg; break;
        case 'C': dir = optarg; break;
        case 'j': a->json = 1; break;
        case 'r': a->turn.no_retry = 1; break;
        case 'a':
            if (parse_approval(optarg, &a->turn.approval))
                return bt_fail(BT_EXIT_USAGE, "--approval takes deny, auto or never");
            break;
        case 't':
            if (parse_seconds(optarg, &a->turn.timeout_ms))
                return bt_fail(BT_EXIT_USAGE, "--timeout takes seconds, e.g. 300");
            break;
        case 'i':
            if (parse_seconds(optarg, &a->turn.idle_timeout_ms))
                return bt_fail(BT_EXIT_USAGE, "--idle-timeout takes seconds, e.g. 120");
            break;
        case 'h': bt_help(argv[0]); return -1;
        default: return bt_bad_option(argv);
        }
        if (!is_run && (c == 'c' || c == 'm' || c == 'C'))
            return bt_usage(argv[0]);
    }
    if (argc - optind != (is_run ? 1 : 2))
        return bt_usage(argv[0]);
    struct stat st;
    a->cwd = realpath(dir, NULL);
    if (!a->cwd || stat(a->cwd, &st) != 0 || !S_ISDIR(st.st_mode))
        return bt_fail(BT_EXIT_USAGE, "cannot use '%s' as the working directory", dir);
    if (bt_utf8_invalid_at(a->cwd, strlen(a->cwd)) < strlen(a->cwd))
        return bt_fail(BT_EXIT_USAGE, "the working directory's name is not valid UTF-8");
    int rc = read_prompt(argv[argc - 1], &a->prompt);
    if (rc)
        return rc;
    a->turn.prompt = a->prompt;
    a->turn.cwd = a->cwd;
    return 0;
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

static int execute(int argc, char **argv, int is_run)
{
    struct run_args a = {0};
    struct bt_render render;
    struct bt_store *s = NULL;
    struct bt_service_outcome out = {0};
    char conv[BT_ID_SIZE];
    int rc = parse(argc, argv, is_run, &a);
    if (rc)
        goto done;
    if ((rc = bt_cmd_open_store(&s)) != 0)
        goto done;
    if (!is_run && (rc = bt_cmd_resolve(s, argv[optind], conv)) != 0)
        goto done;
    bt_render_init(&render, stdout, stderr);
    a.turn.on_event = a.json ? print_json : print_human;
    a.turn.on_tick = a.json ? NULL : tick;
    a.turn.data = &render;
    if (is_run)
        bt_service_run(s, &a.turn, &out);
    else
        bt_service_send(s, conv, &a.turn, &out);
    if (out.message)
        bt_fail(out.exit_code, "%s", out.message);
    else if (!a.json)
        fprintf(stderr, "conversation %s\n", out.conversation);
    rc = out.exit_code;
done:
    free(out.message);
    bt_store_close(s);
    free(a.cwd);
    free(a.prompt);
    return rc < 0 ? 0 : rc;
}

int bt_cmd_run(int argc, char **argv)
{
    return execute(argc, argv, 1);
}

int bt_cmd_send(int argc, char **argv)
{
    return execute(argc, argv, 0);
}
