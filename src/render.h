/* SPDX-License-Identifier: MIT */
/*
 * render: human output of a turn's events on a terminal or a pipe. The
 * answer text streams to stdout as it arrives; tool activity becomes
 * one-line summaries; errors go to stderr. A spinner runs on stderr only
 * when it is a terminal; colour only on a terminal and never with NO_COLOR.
 */
#ifndef BT_RENDER_H
#define BT_RENDER_H

#include <stdio.h>

#include "event.h"

struct bt_render {
    FILE *out, *err;
    int color;      /* ANSI colours on out */
    int spinner;    /* a spinner may be drawn on err */
    int spinning;   /* a spinner frame is on screen */
    unsigned frame; /* spinner frame counter */
    int mid_line;   /* out's cursor is not at a line start */
    int text_open;  /* answer text has been printed since the last summary */
    int declined;   /* approvals declined whose item has not ended yet */
};

/* Decides colour and spinner from isatty() and NO_COLOR. */
void bt_render_init(struct bt_render *r, FILE *out, FILE *err);
void bt_render_event(struct bt_render *r, const struct bt_event *ev);
/* Append to out the questions of a user_input approval.requested
 * (event.h questions_json) for a person to read, one line each: the
 * header, the text, and the options with their descriptions,
 * "DB: Which database? [SQLite (one file) / Postgres (a server)]"; a
 * question that allows several choices says "(one or more)". Nothing for
 * NULL or text that is not an array. */
struct bt_buf;
void bt_render_questions(const char *questions_json, struct bt_buf *out);
/* What a person is told of a question nobody could answer. */
#define BT_RENDER_UNANSWERED "nobody could answer during the turn; answer it with your next message"
/* A line of baton's own on err ("baton: " and text, which is written as
 * the coder's words are: no terminal controls), after the spinner is
 * cleared and a partial line of the answer is ended. */
void bt_render_note(struct bt_render *r, const char *text);
/* Advance the spinner (call every ~100 ms). */
void bt_render_tick(struct bt_render *r);

#endif
