/* SPDX-License-Identifier: MIT */
/*
 * answer: the answer text of a turn (turn.completed final_text), built from
 * the message items of the turn's own agent. The turn engine builds it
 * live; crash recovery and the queue rebuild it from the stored events, by
 * the same rule:
 *
 *   - items of a sub-agent (item.subagent set) are never part of it;
 *   - when the coder marks its final answer (codex agentMessage `phase:
 *     "final_answer"`, codex-cli 0.171.0), the answer is the last such
 *     message: commentary before tool calls and earlier answers of a
 *     steered turn are left out;
 *   - otherwise the texts of the unmarked messages after the agent's last
 *     work (an item that is not a message, reasoning or plan: a command,
 *     tool call, file change, web search, sub-agent), joined by a blank
 *     line: what it said before a tool call was a preamble (claude -p
 *     2.1.332 likewise prints the last message as its `result`);
 *   - a turn that ended with commentary or preambles only (cut short
 *     before its answer) keeps them, joined likewise;
 *   - a message cut short (deltas, no item.completed) counts with its
 *     partial text, in its place.
 */
#ifndef BT_ANSWER_H
#define BT_ANSWER_H

#include <stddef.h>

#include "event.h"
#include "util.h"

enum bt_answer_phase {
    BT_ANSWER_PLAIN,      /* the coder does not say (every coder but codex) */
    BT_ANSWER_COMMENTARY, /* a preamble: not the answer while there is one */
    BT_ANSWER_FINAL,      /* the coder's final answer: the last one wins */
};

struct bt_answer_mark {
    char *id;                   /* a message item whose item.started named a phase */
    enum bt_answer_phase phase; /* that phase */
};

struct bt_answer {
    struct bt_buf text;           /* completed unmarked message texts, joined */
    struct bt_buf commentary;     /* completed commentary texts, joined */
    struct bt_buf final;          /* the last completed final answer */
    int final_seen;               /* a final answer completed */
    char *msg_id;                 /* message item being streamed, or NULL */
    enum bt_answer_phase phase;   /* its phase */
    struct bt_buf msg;            /* its deltas so far */
    char *done_id;                /* the last message item that completed */
    struct bt_answer_mark *marks; /* phases from item.started, for the deltas */
    size_t nmarks, marks_cap;
};

void bt_answer_init(struct bt_answer *a);
void bt_answer_release(struct bt_answer *a);

/* Take one event into account (only message item.started, item.delta and
 * item.completed of the turn's own agent matter; others are ignored). A
 * delta of a message that completed already is ignored. */
void bt_answer_add(struct bt_answer *a, const struct bt_event *ev);

/* 1 if ev is the item.completed of the message item whose deltas are
 * being streamed, with a text that differs from them (a delta was lost or
 * cut): its text, the complete message, is what bt_answer_add keeps. */
int bt_answer_repairs(const struct bt_answer *a, const struct bt_event *ev);

/* The same for a stored event's JSON text (as bt_event_to_json wrote it);
 * what does not parse is ignored. */
void bt_answer_add_json(struct bt_answer *a, const char *json, size_t len);

/* The answer so far; caller frees. */
char *bt_answer_text(const struct bt_answer *a);

#endif
