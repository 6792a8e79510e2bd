/* SPDX-License-Identifier: MIT */
/*
 * progress: what counts as a coder getting on with its turn, for the turn
 * engine's idle watchdog (--idle-timeout). A line is not progress by being
 * a line: codex pointed at an endpoint where nothing listens prints a
 * reconnect notice every few seconds forever, and must still be stopped.
 *
 * Progress: item events (answer text, reasoning, commands and their output,
 * tool calls), approvals, session.started, a usage event whose counts
 * changed (a model request completed), the coder's responses to the
 * runner's requests and its own requests, and BT_SIGNAL_PROGRESS from a
 * parser (parser.h). Not progress: warnings, errors, retries, keep-alives,
 * lines that map to nothing.
 *
 * It also keeps the coder's reason for its last retry since the last
 * progress: a turn the watchdog stops while the coder retries fails with
 * that reason and kind, not as merely `stalled`.
 */
#ifndef BT_PROGRESS_H
#define BT_PROGRESS_H

#include <stddef.h>

#include "event.h"
#include "parser.h"

struct bt_progress {
    struct bt_usage usage;         /* counts of the last usage event */
    enum bt_error_kind retry_kind; /* the last retry's error kind since progress; NONE if none */
    char *retry_message;           /* its reason, curated (see bt_progress_curate); NULL if none */
};

void bt_progress_init(struct bt_progress *p);
void bt_progress_release(struct bt_progress *p);

/* 1 if ev is progress (and the last retry is forgotten), else 0. */
int bt_progress_event(struct bt_progress *p, const struct bt_event *ev);

/* 1 if sig is progress (and the last retry is forgotten), else 0. A RETRY
 * signal is not progress: its error_kind and message are kept as the last
 * retry (a retry without a kind keeps model_error, one without a message
 * "the request failed"). */
int bt_progress_signal(struct bt_progress *p, const struct bt_signal *sig);

/* A coder's reason fit to show: control characters become spaces, the
 * user:password of a URL becomes "***", cut to at most max bytes on a
 * character boundary. Caller frees. */
char *bt_progress_curate(const char *s, size_t max);

#endif
