/* SPDX-License-Identifier: MIT */
/* cmd-common: what several commands share (cmd-common.h): the error
 * message, opening the store (and recovering the runs whose baton process
 * is gone), resolving a conversation id typed by the user, the output of
 * the list commands and whether stdout still takes it. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd-exit.h"
#include "cmd.h"
#include "coder.h"
#include "perf.h"
#include "error.h"
#include "proc.h"
#include "service-conv.h"
#include "store.h"
#include "view.h"

int bt_cmd_open_store(struct bt_store **s)
{
    struct bt_service_outcome o = {0};
    int rc = bt_service_open(s, bt_cmd_say, NULL, &o);
    if (rc) { /* said as bt_cmd_fail says it */
        fprintf(stderr, "baton: %s\n", o.message);
        rc = bt_cmd_exit_service(&o);
    }
    free(o.message);
    return rc;
}

void bt_cmd_say(void *data, const char *line)
{
    (void)data;
    fprintf(stderr, "baton: %s\n", line);
}

int bt_cmd_recover(struct bt_store *s)
{
    int rc = bt_service_recover(s, bt_cmd_say, NULL);
    return rc < 0 ? rc : 0;
}

int bt_cmd_fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("baton: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* The widths of ls's coder and state columns: the longest coder name, the
 * longest word the state column can say, so no row shifts its columns
 * ("transferred" beside "new", "opencode" beside "pi"). */
static int coder_width(void)
{
    size_t w = 0;
    for (const struct bt_coder *const *c = bt_coders; *c; c++)
        w = strlen((*c)->name) > w ? strlen((*c)->name) : w;
    return (int)w;
}

static int state_width(void)
{
    size_t w = strlen("new");
#define BT_WIDEST(name, text) w = sizeof(text) - 1 > w ? sizeof(text) - 1 : w;
    BT_STORE_RUN_STATES(BT_WIDEST)
    BT_STORE_CONV_STATUSES(BT_WIDEST)
#undef BT_WIDEST
    return (int)w;
}

void bt_cmd_print_conversation(const struct bt_store_conversation *c)
{
    char ts[48];
    bt_time_local(c->updated_ms, ts);
    const char *state = c->last_run[0] ? bt_view_run_state(c->last_run_state, c->waiting) : "new";
    if (c->status != BT_STORE_CONV_ACTIVE)
        state = bt_store_conv_status_name(c->status);
    printf("%.12s  %-*s %-*s %s  ", c->id, coder_width(), c->coder, state_width(), state, ts);
    bt_term_write(stdout, c->title, strlen(c->title));
    if (c->worktree.branch) { /* its own worktree: where its work is */
        fputs("  [", stdout);
        bt_term_write(stdout, c->worktree.branch, strlen(c->worktree.branch));
        putchar(']');
    }
    putchar('\n');
}

int bt_cmd_list_option(struct bt_cmd_list *l, const struct bt_args *a, int id)
{
    enum bt_cmd_list_format f = id == 'j' ? BT_CMD_LIST_JSON : BT_CMD_LIST_ARRAY;
    if (l->format != BT_CMD_LIST_HUMAN && l->format != f)
        return bt_args_fail(a, "--json and --json-array go alone");
    l->format = f;
    return 0;
}

void bt_cmd_list_put(struct bt_cmd_list *l, const char *json)
{
    if (l->format == BT_CMD_LIST_ARRAY)
        fputs(l->n ? ",\n" : "[\n", stdout);
    fputs(json, stdout);
    if (l->format == BT_CMD_LIST_JSON)
        fputc('\n', stdout);
    l->n++;
}

void bt_cmd_list_end(struct bt_cmd_list *l)
{
    if (l->format == BT_CMD_LIST_ARRAY)
        fputs(l->n ? "\n]\n" : "[]\n", stdout);
}

int bt_cmd_stdout_error(int ahead)
{
    static int fifo = -1;
    if (fifo < 0) {
        struct stat st;
        fifo = fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
    }
    errno = 0;
    int bad = fflush(stdout) == EOF || ferror(stdout);
    int err = errno;
    if (!bad && !ahead)
        return 0;
    struct pollfd p = {.fd = STDOUT_FILENO};
    if (fifo && poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
        return EPIPE; /* also names the cause of an earlier failed write */
    return bad ? (err ? err : EIO) : 0;
}

const char *bt_cmd_stdout_reason(int err)
{
    return err == EIO ? "a write failed" : strerror(err);
}

size_t bt_cmd_parse_count(const char *text, size_t max)
{
    size_t len = strlen(text), v = 0;
    if (len == 0 || len > 18 || strspn(text, "0123456789") != len)
        return 0;
    for (const char *p = text; *p; p++)
        v = v * 10 + (size_t)(*p - '0');
    return v <= max ? v : 0;
}

int bt_cmd_check_coders(const struct bt_args *a, const char *list, int several)
{
    char name[64];
    for (const char *p = list;; p++) {
        size_t len = several ? strcspn(p, ",") : strlen(p);
        if (len == 0 && several)
            return bt_args_fail(a, "%s takes coders separated by commas, not '%s'", a->arg, list);
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        if (len >= sizeof name || !bt_coder_find(name)) {
            char *all = bt_coder_names(0);
            int rc = bt_args_fail(a, "unknown coder '%.*s' (one of: %s)", (int)len, p, all);
            free(all);
            return rc;
        }
        p += len;
        if (!*p)
            return 0;
    }
}

void bt_cmd_sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int bt_cmd_resolve(struct bt_store *s, const char *text, char *id)
{
    int rc = bt_store_conversation_resolve(s, text, id);
    if (rc == BT_EAMBIGUOUS)
        return bt_cmd_fail(BT_EXIT_USAGE, "'%s' matches several conversations: give more of the id",
                           text);
    if (rc)
        return bt_cmd_fail(BT_EXIT_USAGE, "no conversation matches '%s'", text);
    return 0;
}
