/* SPDX-License-Identifier: MIT */
/* render: human output of events (see render.h). */
#include "render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIM "\x1b[2m"
#define RED "\x1b[31m"
#define YELLOW "\x1b[33m"
#define RESET "\x1b[0m"

void bt_render_init(struct bt_render *r, FILE *out, FILE *err)
{
    const char *nc = getenv("NO_COLOR");
    int no_color = nc && *nc;
    memset(r, 0, sizeof(*r));
    r->out = out;
    r->err = err;
    r->color = !no_color && isatty(fileno(out));
    r->spinner = isatty(fileno(err));
}

static void clear_spinner(struct bt_render *r)
{
    if (!r->spinning)
        return;
    fputs("\r\x1b[K", r->err);
    fflush(r->err);
    r->spinning = 0;
}

void bt_render_tick(struct bt_render *r)
{
    static const char *const frames[] = {"|", "/", "-", "\\"};
    if (!r->spinner || r->mid_line)
        return;
    fprintf(r->err, "\r%s working…", frames[r->frame++ % 4]);
    fflush(r->err);
    r->spinning = 1;
}

static void end_line(struct bt_render *r)
{
    if (r->mid_line)
        fputc('\n', r->out);
    r->mid_line = 0;
}

/* One dim summary line on out. */
static void summary(struct bt_render *r, const char *fmt, ...) BT_PRINTF(2, 3);
static void summary(struct bt_render *r, const char *fmt, ...)
{
    va_list ap;
    end_line(r);
    if (r->text_open) {
        fputc('\n', r->out);
        r->text_open = 0;
    }
    if (r->color)
        fputs(DIM, r->out);
    fputs("• ", r->out);
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
    if (r->color)
        fputs(RESET, r->out);
    fputc('\n', r->out);
}

static void delta(struct bt_render *r, const struct bt_event *ev)
{
    /* a sub-agent's words are not the answer: its item's line says it ended */
    if (ev->item.kind != BT_ITEM_MESSAGE || !ev->delta_len || ev->item.subagent)
        return;
    bt_term_write(r->out, ev->delta, ev->delta_len);
    r->mid_line = ev->delta[ev->delta_len - 1] != '\n';
    r->text_open = 1;
}

static void completed_item(struct bt_render *r, const struct bt_item *it)
{
    char code[32] = "";
    if (it->exit_code != BT_UNKNOWN)
        snprintf(code, sizeof(code), " (exit %lld)", (long long)it->exit_code);
    const char *st = it->status && strcmp(it->status, "completed") != 0 ? it->status : NULL;
    const char *cmd = it->command ? it->command : "";
    const char *name = it->name ? it->name : it->kind == BT_ITEM_SUBAGENT ? it->id : "";
    /* what a sub-agent did, marked as its own */
    const char *who = it->subagent && it->kind != BT_ITEM_SUBAGENT ? "sub-agent " : "";
    /* the approval's line said it; one line per declined action */
    if (st && strcmp(st, "declined") == 0 && r->declined > 0) {
        r->declined--;
        return;
    }
    switch (it->kind) {
    case BT_ITEM_COMMAND:
        if (st)
            summary(r, "%s%s: %s", who, st, cmd);
        else
            summary(r, "%sran %s%s", who, cmd, code);
        break;
    case BT_ITEM_FILE_CHANGE:
        summary(r, "%schanged files%s%s", who, st ? " — " : "", st ? st : "");
        break;
    case BT_ITEM_TOOL_CALL: summary(r, "%stool %s%s", who, name, st ? " (failed)" : ""); break;
    case BT_ITEM_WEB_SEARCH: summary(r, "%ssearched %s", who, name); break;
    case BT_ITEM_SUBAGENT: summary(r, "sub-agent %s%s", name, st ? " (failed)" : " done"); break;
    default: break;
    }
}

static void message_line(struct bt_render *r, const char *color, const char *label, const char *msg)
{
    end_line(r);
    fflush(r->out);
    int c = r->color && isatty(fileno(r->err));
    fprintf(r->err, "%s%s: %s%s\n", c ? color : "", label, msg ? msg : "", c ? RESET : "");
}

void bt_render_event(struct bt_render *r, const struct bt_event *ev)
{
    clear_spinner(r);
    switch (ev->type) {
    case BT_EVENT_ITEM_DELTA: delta(r, ev); break;
    case BT_EVENT_ITEM_COMPLETED: completed_item(r, &ev->item); break;
    case BT_EVENT_APPROVAL_RESOLVED: {
        int yes = ev->decision && strcmp(ev->decision, "accept") == 0;
        r->declined += !yes;
        summary(r, "%s by %s: %s", yes ? "approved" : "declined", ev->by ? ev->by : "policy",
                ev->summary ? ev->summary : "");
        break;
    }
    case BT_EVENT_WARNING:
        if (ev->kind && (strcmp(ev->kind, "retry") == 0 || strcmp(ev->kind, "coder") == 0))
            message_line(r, YELLOW, "warning", ev->message);
        break;
    case BT_EVENT_ERROR: message_line(r, RED, "error", ev->message); break;
    case BT_EVENT_TURN_COMPLETED:
        end_line(r);
        if (ev->status == BT_TURN_CANCELLED)
            message_line(r, YELLOW, "cancelled",
                         ev->message ? ev->message : "the turn was interrupted");
        else if (ev->status == BT_TURN_INTERRUPTED) /* recovered: no error event before it */
            message_line(r, YELLOW, "interrupted",
                         ev->message ? ev->message : "the turn did not finish");
        break;
    default: break;
    }
    fflush(r->out);
}
