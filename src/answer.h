/* SPDX-License-Identifier: MIT */
/*
 * answer: the answer text of a turn, built from its message items: the
 * final texts of completed message items joined by a blank line, then the
 * deltas of a message item that was cut short. The turn engine builds it
 * live; crash recovery rebuilds it from the stored events, by the same rule.
 */
#ifndef BT_ANSWER_H
#define BT_ANSWER_H

#include <stddef.h>

#include "event.h"
#include "util.h"

struct bt_answer {
    struct bt_buf text; /* completed message texts, joined */
    char *msg_id;       /* message item being streamed, or NULL */
    struct bt_buf msg;  /* its deltas so far */
    char *done_id;      /* the last message item that completed */
};

void bt_answer_init(struct bt_answer *a);
void bt_answer_release(struct bt_answer *a);

/* Take one event into account (only message item.delta / item.completed
 * matter; others are ignored). A delta of a message that completed already
 * is ignored. */
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
