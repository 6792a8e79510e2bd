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
#include "cmd.h"
#include "coder.h"
#include "perf.h"
#include "error.h"
#include "proc.h"
#include "rebuild.h"
#include "service.h"
#include "store.h"
#include "view.h"

int bt_cmd_open_store(struct bt_store **s)
{
    char *home = bt_store_default_home();
    char *err = NULL;
    const char *env = getenv("BATON_HOME");
    if (!home && env && *env)
        return bt_cmd_fail(BT_EXIT_USAGE, "BATON_HOME must be an absolute path, not '%s'", env);
    if (!home)
        return bt_cmd_fail(BT_EXIT_FAILED, "cannot find a home for the store: set BATON_HOME");
    int rc = bt_store_open(home, s, &err);
    if (rc) {
        bt_cmd_fail(BT_EXIT_FAILED, "cannot open the store in %s: %s", home,
                    err ? err : bt_strerror(rc));
        free(err);
        free(home);
        return BT_EXIT_FAILED;
    }
    free(home);
    bt_perf_mark("store opened");
    bt_cmd_recover(*s);
    bt_perf_mark("earlier runs recovered");
    return 0;
}

/* Say what recovery did with a run (stderr: the command's own output is
 * not disturbed). */
static void tell_rebuilt(const struct bt_store_run *r, const struct bt_rebuild_report *rep)
{
    fprintf(stderr,
            "baton: run %s of conversation %s was rebuilt from the coder's raw output "
            "(%lld events kept, %lld added): %s%s%s\n",
            r->id, r->conversation, (long long)rep->kept, (long long)rep->added,
            bt_store_run_state_name(rep->state), rep->problem ? "; " : "",
            rep->problem ? rep->problem : "");
}

/* Rebuild a run whose owner is gone from its raw output when the store
 * lacks events it holds, or the coder's own end (rebuild.h); else leave it
 * to bt_store_recover. 1 if rebuilt. */
static int rebuild_dead(struct bt_store *s, const struct bt_store_run *r)
{
    struct bt_rebuild_report rep;
    int rc = bt_rebuild_run(s, &(struct bt_rebuild){.run = r}, &rep);
    if (rc == 0 && rep.rebuilt) {
        tell_rebuilt(r, &rep);
        bt_proc_stop_orphan(r->pgid, r->child_start, r->id);
    } else if (rc == 0 && rep.problem) {
        fprintf(stderr,
                "baton: run %s of conversation %s: %s; it is marked interrupted with "
                "the events the store has\n",
                r->id, r->conversation, rep.problem);
    } else if (rc && rc != -EALREADY) {
        fprintf(stderr, "baton: cannot rebuild run %s of conversation %s: %s\n", r->id,
                r->conversation, bt_store_errmsg(s));
    }
    int rebuilt = rc == 0 && rep.rebuilt;
    bt_rebuild_report_release(&rep);
    return rebuilt;
}

int bt_cmd_recover(struct bt_store *s)
{
    struct bt_store_run *dead = NULL;
    size_t n = 0;
    int rc = bt_store_dead_runs(s, &dead, &n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rebuild_dead(s, &dead[i]);
    bt_store_run_list_free(dead, n);
    if (rc == 0 && n == 0)
        return bt_service_control_strand(s); /* left by owners that died before */
    struct bt_store_orphan *orphans = NULL;
    size_t n_orphans = 0;
    if (rc == 0)
        rc = bt_store_recover(s, NULL, &orphans, &n_orphans);
    for (size_t i = 0; rc == 0 && i < n_orphans; i++)
        bt_proc_stop_orphan(orphans[i].pgid, orphans[i].child_start, orphans[i].run);
    free(orphans);
    if (rc == 0) /* their control requests: a cancel is done, the rest refused */
        rc = bt_service_control_strand(s);
    if (rc)
        fprintf(stderr, "baton: cannot recover the runs whose baton process is gone: %s\n",
                bt_store_errmsg(s));
    return rc;
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
