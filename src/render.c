/* SPDX-License-Identifier: MIT */
/* render: human output of events (see render.h). */
#include "render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "util.h"

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
    /* the line holds the coder's text (a command, a question): written
     * so that it cannot move the cursor, retitle the window, recolour */
    struct bt_buf b = BT_BUF_INIT;
    va_start(ap, fmt);
    bt_buf_vaddf(&b, fmt, ap);
    va_end(ap);
    bt_term_write(r->out, b.data ? b.data : "", b.len);
    bt_buf_release(&b);
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

/* "label: msg" on err, msg written as the coder's words; color NULL: none. */
static void message_line(struct bt_render *r, const char *color, const char *label, const char *msg)
{
    end_line(r);
    fflush(r->out);
    int c = color && r->color && isatty(fileno(r->err));
    fprintf(r->err, "%s%s: ", c ? color : "", label);
    bt_term_write(r->err, msg ? msg : "", msg ? strlen(msg) : 0); /* the coder's words */
    fprintf(r->err, "%s\n", c ? RESET : "");
}

void bt_render_note(struct bt_render *r, const char *text)
{
    clear_spinner(r);
    message_line(r, NULL, "baton", text); /* no colour: baton's own line */
    fflush(r->err);
}

/* One question's options, " [a (why) / b]", on out. */
static void question_options(const cJSON *q, struct bt_buf *out)
{
    const cJSON *o;
    int n = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(q, "options"))
    {
        const char *label = bt_json_str(o, "label"), *d = bt_json_str(o, "description");
        if (!label)
            continue;
        bt_buf_adds(out, n++ ? " / " : " [");
        bt_buf_adds(out, label);
        if (d && *d)
            bt_buf_addf(out, " (%s)", d);
    }
    if (n)
        bt_buf_addc(out, ']');
}

void bt_render_questions(const char *questions_json, struct bt_buf *out)
{
    cJSON *qs = questions_json ? cJSON_Parse(questions_json) : NULL;
    const cJSON *list = cJSON_IsArray(qs) ? qs : NULL, *q;
    cJSON_ArrayForEach(q, list)
    {
        const char *text = bt_json_str(q, "text"), *header = bt_json_str(q, "header");
        if (!text)
            continue;
        if (header && *header)
            bt_buf_addf(out, "%s: ", header);
        bt_buf_adds(out, text);
        question_options(q, out);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "multiple")))
            bt_buf_adds(out, " (one or more)");
        bt_buf_addc(out, '\n');
    }
    cJSON_Delete(qs);
}

/* A question the coder asked: its lines, one summary each. */
static void question(struct bt_render *r, const struct bt_event *ev)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_render_questions(ev->questions_json, &b);
    if (!b.len)
        bt_buf_addf(&b, "%s\n", ev->summary ? ev->summary : "");
    for (char *line = b.data, *nl; line && (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        summary(r, "question: %s", line);
    }
    bt_buf_release(&b);
}

/* The person's words, taken into the running turn: their first line. */
static void steered(struct bt_render *r, const char *text)
{
    char *line = bt_xstrndup(text ? text : "", text ? strcspn(text, "\n") : 0);
    summary(r, "steered: %s", line);
    free(line);
}

void bt_render_event(struct bt_render *r, const struct bt_event *ev)
{
    clear_spinner(r);
    switch (ev->type) {
    case BT_EVENT_ITEM_DELTA: delta(r, ev); break;
    case BT_EVENT_ITEM_COMPLETED: completed_item(r, &ev->item); break;
    case BT_EVENT_APPROVAL_REQUESTED:
        if (ev->approval_kind && strcmp(ev->approval_kind, "user_input") == 0)
            question(r, ev);
        break;
    case BT_EVENT_APPROVAL_RESOLVED: {
        int yes = ev->decision && strcmp(ev->decision, "accept") == 0;
        const char *by = ev->by ? ev->by : "policy";
        if (ev->approval_kind && strcmp(ev->approval_kind, "user_input") == 0 &&
            strcmp(by, "cancel") != 0) {
            /* answered by a person (--approval ask), refused by them, or by nobody */
            int person = yes || strcmp(by, "user") == 0;
            summary(r, "%s: %s",
                    !person ? "not answered"
                    : yes   ? "answered by user"
                            : "declined to answer by user",
                    !person       ? BT_RENDER_UNANSWERED
                    : ev->summary ? ev->summary
                                  : "");
            break;
        }
        r->declined += !yes;
        summary(r, "%s by %s: %s", yes ? "approved" : "declined", by,
                ev->summary ? ev->summary : "");
        break;
    }
    case BT_EVENT_TURN_STEERED: steered(r, ev->steer_text); break;
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
