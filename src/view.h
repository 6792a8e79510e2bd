/* SPDX-License-Identifier: MIT */
/*
 * view: the JSON objects of conversations, messages, runs and coders, one
 * writer for the CLI's --json (ls, show, coders) and baton serve's replies
 * (docs/api.md), so the two cannot drift apart. Each appends to b with no
 * trailing newline unless said; times are RFC 3339 UTC, unknown numbers
 * and absent strings null.
 */
#ifndef BT_VIEW_H
#define BT_VIEW_H

#include <stddef.h>

#include "store.h"
#include "util.h"

struct bt_coder;
struct bt_coder_exe;
struct bt_store;
struct bt_store_conversation;
struct bt_store_message;
struct bt_store_run;
struct bt_store_worktree;

/* Text into HTML for a message's "html" member (serve: markdown.h). */
typedef void (*bt_view_html_fn)(struct bt_buf *out, const char *text, size_t len);

/* The state word of a run for people and programs: the store's, or
 * "waiting" for a running run whose worker waits for a turn slot (slot.h;
 * BATON_MAX_TURNS): it holds the conversation as a running run does, but
 * no coder runs yet. Static strings. */
const char *bt_view_run_state(enum bt_store_run_state state, int waiting);

/* The `baton ls --json` object: id, title, coder, model, cwd,
 * native_session_id, status, last_run, last_run_state, created, updated,
 * worktree (bt_view_worktree), group (its id, or null). */
void bt_view_conversation(struct bt_buf *b, const struct bt_store_conversation *c);

/* A conversation's worktree: {path, branch, base, start}, or null. */
void bt_view_worktree(struct bt_buf *b, const struct bt_store_worktree *w);
/* The `baton show --json` message object; with html, an "html" member of
 * its text rendered by html. */
void bt_view_message(struct bt_buf *b, const struct bt_store_message *m, bt_view_html_fn html);
/* A run: id, turn, state, coder, coder_version, model, started, ended,
 * exit_code, error_kind, error, native_session_id, usage{…},
 * cancel_requested. */
void bt_view_run(struct bt_buf *b, const struct bt_store_run *r);
/* What became of a steer (service.h bt_service_steered), as `baton steer
 * --json` prints it and POST /v1/conversations/{id}/steer answers:
 * {conversation, run (the running turn's, or null), control (the stored
 * request's id, or null when none was stored), state ("done": taken into
 * the running turn; "queued": waits as the next turn's message;
 * "pending": stored, not yet delivered), queue_no (queued: its number,
 * else null), reason (queued: why, else null)}. */
struct bt_service_steered;
void bt_view_steered(struct bt_buf *b, const char *conversation,
                     const struct bt_service_steered *st);

/* The `baton coders --json` object. */
void bt_view_coder(struct bt_buf *b, const struct bt_coder *c, const struct bt_coder_exe *exe,
                   const char *version);

/* {"conversations":[…]}\n: newest first, at most limit, or with q the
 * full-text search's hits (each with "snippet"); each with "context" of
 * its last run that reported it (or null). 0 or BT_ESTORE. */
int bt_view_conversations(struct bt_store *s, const char *q, size_t limit, struct bt_buf *b);
/* The GET /v1/conversations/{id} object and a newline: conversation,
 * messages, runs, running, queued, context, last_event. 0, BT_ENOTFOUND,
 * or BT_ESTORE. */
int bt_view_conversation_detail(struct bt_store *s, const char *conv, bt_view_html_fn html,
                                struct bt_buf *b);
/* {"coders":[…]}\n, each coder's version from the store when it knows the
 * executable (asked with --version, and stored, only when it does not). */
int bt_view_coders(struct bt_store *s, struct bt_buf *b);

/* view-group.c: groups (service-work.h). A member: conversation, coder,
 * model, status, duration_ms, tokens, cost_usd, files, added, removed
 * (null when unknown), worktree. */
struct bt_service_member;
struct bt_service_group;
struct bt_store_group;
void bt_view_member(struct bt_buf *b, const struct bt_store_conversation *c,
                    const struct bt_service_member *m);
/* A group's "id", "name", "created" members, no braces. */
void bt_view_group_head(struct bt_buf *b, const struct bt_store_group *g);
/* {id, name, created, members: [member…]} of `baton group show --json`. */
void bt_view_group(struct bt_buf *b, const struct bt_service_group *g);
/* {"groups":[{id, name, created, members: N}…]}\n, newest first, at most
 * limit (0: all). 0 or BT_ESTORE. */
int bt_view_groups(struct bt_store *s, size_t limit, struct bt_buf *b);

#endif
