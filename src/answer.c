/* SPDX-License-Identifier: MIT */
/* answer: the answer text of a turn from its message items (see answer.h). */
#include "answer.h"

#include <stdlib.h>
#include <string.h>

/* Phases remembered from item.started, so that a message's deltas (which
 * do not repeat it) count where they belong; a bound, since the list lives
 * as long as the turn: past it a message's deltas count as unmarked until
 * its item.completed names the phase. */
#define MAX_MARKS 4096

void bt_answer_init(struct bt_answer *a)
{
    memset(a, 0, sizeof(*a));
    bt_buf_init(&a->text);
    bt_buf_init(&a->commentary);
    bt_buf_init(&a->final);
    bt_buf_init(&a->msg);
}

void bt_answer_release(struct bt_answer *a)
{
    bt_buf_release(&a->text);
    bt_buf_release(&a->commentary);
    bt_buf_release(&a->final);
    bt_buf_release(&a->msg);
    free(a->msg_id);
    free(a->done_id);
    for (size_t i = 0; i < a->nmarks; i++)
        free(a->marks[i].id);
    free(a->marks);
    memset(a, 0, sizeof(*a));
}

static void join(struct bt_buf *b, const char *s, size_t n)
{
    if (!n)
        return;
    if (b->len)
        bt_buf_adds(b, "\n\n");
    bt_buf_add(b, s, n);
}

static int same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static enum bt_answer_phase phase_of(const char *phase)
{
    if (same(phase, "commentary"))
        return BT_ANSWER_COMMENTARY;
    if (same(phase, "final_answer"))
        return BT_ANSWER_FINAL;
    return BT_ANSWER_PLAIN;
}

static enum bt_answer_phase marked(const struct bt_answer *a, const char *id)
{
    for (size_t i = a->nmarks; i-- > 0;)
        if (same(a->marks[i].id, id))
            return a->marks[i].phase;
    return BT_ANSWER_PLAIN;
}

static void mark(struct bt_answer *a, const char *id, enum bt_answer_phase phase)
{
    if (phase == BT_ANSWER_PLAIN || marked(a, id) == phase || a->nmarks >= MAX_MARKS)
        return;
    if (a->nmarks == a->marks_cap) {
        a->marks_cap = a->marks_cap ? a->marks_cap * 2 : 8;
        a->marks = bt_xrealloc(a->marks, a->marks_cap * sizeof(*a->marks));
    }
    a->marks[a->nmarks].id = bt_xstrdup(id);
    a->marks[a->nmarks++].phase = phase;
}

/* A message's whole text, into the place its phase says. */
static void complete(struct bt_answer *a, enum bt_answer_phase phase, const char *s, size_t n)
{
    switch (phase) {
    case BT_ANSWER_FINAL:
        bt_buf_reset(&a->final); /* a steered turn: the last answer is the answer */
        bt_buf_add(&a->final, s, n);
        a->final_seen = 1;
        break;
    case BT_ANSWER_COMMENTARY: join(&a->commentary, s, n); break;
    default: join(&a->text, s, n); break;
    }
}

/* Whether an item of the turn's own agent is work (a command, a tool, a
 * sub-agent…) rather than words: what the agent said before it was a
 * preamble, not its answer. */
static int is_work(const struct bt_event *ev)
{
    const struct bt_item *it = &ev->item;
    if (ev->type != BT_EVENT_ITEM_STARTED && ev->type != BT_EVENT_ITEM_COMPLETED)
        return 0;
    if (it->kind == BT_ITEM_SUBAGENT) /* the sub-agent item names itself (event.h) */
        return !it->subagent || same(it->subagent, it->id);
    return !it->subagent && it->kind != BT_ITEM_MESSAGE && it->kind != BT_ITEM_REASONING &&
           it->kind != BT_ITEM_PLAN;
}

/* The unmarked messages so far were a preamble to work: commentary now,
 * the one being streamed too. */
static void preamble(struct bt_answer *a)
{
    join(&a->commentary, a->text.data, a->text.len);
    bt_buf_reset(&a->text);
    if (a->msg_id && a->phase == BT_ANSWER_PLAIN) {
        a->phase = BT_ANSWER_COMMENTARY;
        mark(a, a->msg_id, BT_ANSWER_COMMENTARY);
    }
}

void bt_answer_add(struct bt_answer *a, const struct bt_event *ev)
{
    const struct bt_item *it = &ev->item;
    if (is_work(ev))
        preamble(a);
    if (it->kind != BT_ITEM_MESSAGE || !it->id || it->subagent)
        return;
    enum bt_answer_phase phase = phase_of(it->phase);
    if (ev->type == BT_EVENT_ITEM_STARTED) {
        mark(a, it->id, phase);
    } else if (ev->type == BT_EVENT_ITEM_DELTA) {
        if (same(a->done_id, it->id))
            return;
        if (!same(a->msg_id, it->id)) {
            free(a->msg_id);
            a->msg_id = bt_xstrdup(it->id);
            a->phase = marked(a, it->id);
            bt_buf_reset(&a->msg);
        }
        bt_buf_add(&a->msg, ev->delta, ev->delta_len);
    } else if (ev->type == BT_EVENT_ITEM_COMPLETED) {
        if (phase == BT_ANSWER_PLAIN)
            phase = marked(a, it->id);
        if (it->text)
            complete(a, phase, it->text, it->text_len);
        else if (same(a->msg_id, it->id))
            complete(a, phase, a->msg.data, a->msg.len);
        free(a->done_id);
        a->done_id = bt_xstrdup(it->id);
        free(a->msg_id);
        a->msg_id = NULL;
        bt_buf_reset(&a->msg);
    }
}

int bt_answer_repairs(const struct bt_answer *a, const struct bt_event *ev)
{
    const struct bt_item *it = &ev->item;
    if (ev->type != BT_EVENT_ITEM_COMPLETED || it->kind != BT_ITEM_MESSAGE || !it->text ||
        !same(a->msg_id, it->id))
        return 0;
    return it->text_len != a->msg.len || memcmp(it->text, a->msg.data, a->msg.len) != 0;
}

void bt_answer_add_json(struct bt_answer *a, const char *json, size_t len)
{
    struct bt_event ev;
    struct bt_event_doc *doc;
    if (bt_event_parse(json, len, &ev, &doc) != 0)
        return;
    bt_answer_add(a, &ev);
    bt_event_doc_free(doc);
}

char *bt_answer_text(const struct bt_answer *a)
{
    struct bt_buf b = BT_BUF_INIT;
    int streaming = a->msg_id != NULL;
    if (streaming && a->phase == BT_ANSWER_FINAL) {
        bt_buf_add(&b, a->msg.data, a->msg.len); /* the last answer, cut short */
    } else if (a->final_seen) {
        bt_buf_add(&b, a->final.data, a->final.len);
    } else if (a->text.len || (streaming && a->phase == BT_ANSWER_PLAIN)) {
        bt_buf_add(&b, a->text.data, a->text.len);
        if (streaming && a->phase == BT_ANSWER_PLAIN)
            join(&b, a->msg.data, a->msg.len);
    } else {
        bt_buf_add(&b, a->commentary.data, a->commentary.len);
        if (streaming)
            join(&b, a->msg.data, a->msg.len);
    }
    return bt_buf_detach(&b, NULL);
}
