/* SPDX-License-Identifier: MIT */
/*
 * cmd-ask: the inline ask of a foreground `baton run|send|retry
 * --approval ask` whose stdin is a terminal: each approval request is put
 * to the person (allow once / always for its kind / deny), each question
 * with its numbered choices, on stderr; the line they type is the
 * decision, given through the service (bt_service_decide) like `baton
 * approve` from another terminal, which may answer first. The terminal is
 * read without blocking from the turn's tick, so the turn's loop never
 * waits for the person.
 */
#ifndef BT_CMD_ASK_H
#define BT_CMD_ASK_H

#include <stdio.h>

#include "event.h"
#include "store.h"

struct bt_cmd_ask;

/* An inline asker over store s (borrowed), prompting on err, reading fd
 * (a terminal). */
struct bt_cmd_ask *bt_cmd_ask_new(struct bt_store *s, int fd, FILE *err);
/* An event of the turn: approval.requested puts a request in line (and
 * asks, when it is the first), approval.resolved takes it out (answered
 * elsewhere, declined by timeout or the stop). */
void bt_cmd_ask_event(struct bt_cmd_ask *k, const struct bt_event *ev);
/* Read what the person typed so far, without waiting; a whole line
 * answers the request asked. Called from the turn's tick. */
void bt_cmd_ask_tick(struct bt_cmd_ask *k);
void bt_cmd_ask_free(struct bt_cmd_ask *k);

/* Append to all (a JSON array) the answer text gives to question q (its
 * event form, docs/events.md): option numbers ("2", "1,3") are their
 * labels, anything else the words themselves; an array of strings either
 * way. Returns 0, or the number of q's options (nothing appended) when
 * text is only option numbers and one of them is none of q's: a typo
 * never goes to the coder as the person's words. A question without
 * options takes numbers as words. Shared with `baton answer`. */
struct cJSON;
int bt_cmd_answer_add(struct cJSON *all, const struct cJSON *q, const char *text);

#endif
