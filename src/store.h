/* SPDX-License-Identifier: MIT */
/*
 * store: baton's database of conversations, messages, runs and run events,
 * in SQLite (WAL mode) at $BATON_HOME/baton.db, plus the layout of
 * $BATON_HOME (run files under runs/). The only module that touches SQLite;
 * no SQLite type or statement leaves the store*.c files. Tables and
 * invariants are described in docs/store.md.
 *
 * Conventions of this header:
 * - Every function returns 0 on success or a negative code: BT_ESTORE when
 *   SQLite failed, BT_ENOTFOUND, BT_EAMBIGUOUS, BT_EBUSY, BT_ESCHEMA, -EINVAL
 *   for bad arguments (a NULL required string, an enum out of range), or
 *   -EALREADY where noted. After any error bt_store_errmsg() describes it.
 * - `const char *` arguments are borrowed for the call. `char *` results and
 *   the strings inside result structs belong to the caller, who frees them
 *   with the matching *_release / *_free function (or free() where noted).
 * - Times are milliseconds since the Unix epoch (int64_t, "_ms").
 * - Ids of conversations and runs are bt_id strings (id.h) returned in
 *   caller-provided char[BT_ID_SIZE] buffers; message ids are int64_t.
 * - Optional strings are NULL when absent, both in and out.
 * - A handle is for one thread at a time; open one handle per process.
 *   Several processes may share a database: writers wait for each other up to
 *   BT_STORE_BUSY_TIMEOUT_MS.
 */
#ifndef BT_STORE_H
#define BT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "id.h"

#define BT_STORE_SCHEMA_VERSION 10                   /* PRAGMA user_version this code writes */
#define BT_STORE_BUSY_TIMEOUT_MS 5000                /* wait for another writer at most this long */
#define BT_STORE_TITLE_MAX 80                        /* bytes of a conversation title */
#define BT_STORE_STDERR_TAIL_MAX ((size_t)64 * 1024) /* bytes of a run's stderr tail kept */

struct bt_store;

/* --- names stored in the database ------------------------------------- */

/* X(NAME, "text") lists; the enum value 0 is never a valid state, so it can
 * mean "none" or "unchanged" where documented. */
#define BT_STORE_CONV_STATUSES(X)                                                                  \
    X(ACTIVE, "active")                                                                            \
    X(TRANSFERRED, "transferred")                                                                  \
    X(ARCHIVED, "archived")

#define BT_STORE_ROLES(X)                                                                          \
    X(USER, "user")                                                                                \
    X(ASSISTANT, "assistant")

#define BT_STORE_MSG_STATES(X)                                                                     \
    X(STREAMING, "streaming")                                                                      \
    X(COMPLETE, "complete")                                                                        \
    X(FAILED, "failed")                                                                            \
    X(CANCELLED, "cancelled")                                                                      \
    X(INTERRUPTED, "interrupted")                                                                  \
    X(QUEUED, "queued")

#define BT_STORE_RUN_STATES(X)                                                                     \
    X(RUNNING, "running")                                                                          \
    X(COMPLETED, "completed")                                                                      \
    X(FAILED, "failed")                                                                            \
    X(CANCELLED, "cancelled")                                                                      \
    X(INTERRUPTED, "interrupted")

enum bt_store_conv_status {
    BT_STORE_CONV_NONE = 0,
#define BT_STORE_X(name, text) BT_STORE_CONV_##name,
    BT_STORE_CONV_STATUSES(BT_STORE_X)
#undef BT_STORE_X
};

enum bt_store_role {
    BT_STORE_ROLE_NONE = 0,
#define BT_STORE_X(name, text) BT_STORE_ROLE_##name,
    BT_STORE_ROLES(BT_STORE_X)
#undef BT_STORE_X
};

enum bt_store_msg_state {
    BT_STORE_MSG_NONE = 0,
#define BT_STORE_X(name, text) BT_STORE_MSG_##name,
    BT_STORE_MSG_STATES(BT_STORE_X)
#undef BT_STORE_X
};

enum bt_store_run_state {
    BT_STORE_RUN_NONE = 0,
#define BT_STORE_X(name, text) BT_STORE_RUN_##name,
    BT_STORE_RUN_STATES(BT_STORE_X)
#undef BT_STORE_X
};

/* The stored text of a value ("active", "user", "streaming", "running"), or
 * "none" for 0 and out-of-range values. Static strings. */
const char *bt_store_conv_status_name(enum bt_store_conv_status v);
const char *bt_store_role_name(enum bt_store_role v);
const char *bt_store_msg_state_name(enum bt_store_msg_state v);
const char *bt_store_run_state_name(enum bt_store_run_state v);

/* --- opening ----------------------------------------------------------- */

/* $BATON_HOME if set and non-empty (NULL if it is not an absolute path);
 * else $XDG_STATE_HOME/baton if XDG_STATE_HOME is an absolute path; else
 * $HOME/.local/state/baton. NULL if none of these is available. Caller
 * frees. */
char *bt_store_default_home(void);

/* Open (creating as needed) the store in home: mkdir -p home and home/runs
 * (new directories get mode 0700; existing ones are left alone), create
 * home/baton.db with mode 0600 (an existing db, -wal or -shm file with group
 * or other bits set is chmod'ed to 0600; SQLite gives new -wal/-shm files the
 * db's mode), set WAL journal mode, synchronous=NORMAL, foreign_keys=ON, no
 * checkpoint on close (commits checkpoint a WAL over 128 pages) and a
 * busy timeout of BT_STORE_BUSY_TIMEOUT_MS, and migrate the schema forward to
 * BT_STORE_SCHEMA_VERSION, one transaction per step. SQLite opens its files
 * with O_CLOEXEC, so no descriptor of the store leaks into a coder.
 *
 * Returns 0 and sets *out; or, with *out NULL and *errmsg (if errmsg is not
 * NULL) set to a message the caller frees: a negated errno when a directory
 * or the db file cannot be created, BT_ESCHEMA when the db's user_version is
 * newer than this code, BT_ESTORE for any other SQLite failure (including a
 * failed migration step, which leaves the db at the previous version). */
int bt_store_open(const char *home, struct bt_store **out, char **errmsg);

/* Commit any pending events (see bt_store_flush), then close. NULL is a
 * no-op. */
void bt_store_close(struct bt_store *s);

/* What the last failed call on s went wrong with: lower-case, no final
 * period. Borrowed, valid until the next call on s; "" if nothing failed. */
const char *bt_store_errmsg(const struct bt_store *s);

/* The home directory given to bt_store_open. Borrowed. */
const char *bt_store_home(const struct bt_store *s);

/* home/runs/<run><suffix>, e.g. suffix ".out" or ".err"; caller frees. NULL
 * if run is not a valid id or suffix is NULL or contains '/'. */
char *bt_store_run_file(const struct bt_store *s, const char *run, const char *suffix);

/* --- conversations ----------------------------------------------------- */

/* A conversation's own git worktree (`baton run --worktree`, src/repo.h):
 * all NULL when it has none. */
struct bt_store_worktree {
    char *path;   /* its top directory (absolute); the conversation's cwd is
                     in it */
    char *branch; /* its branch ("baton/<short id>") */
    char *base;   /* the branch it started from, or the commit id when HEAD
                     was detached */
    char *start;  /* the commit it started from (hex) */
    char *repo;   /* the repository's (common) git directory */
};

struct bt_store_conversation {
    char id[BT_ID_SIZE];                    /* conversation id */
    char *title;                            /* never NULL, may be "" */
    char *coder;                            /* coder name, never NULL */
    char *model;                            /* NULL: the coder's default */
    char *cwd;                              /* project directory, never NULL */
    char *native_session_id;                /* coder's session id, or NULL */
    char *native_session_path;              /* coder's session file, or NULL */
    enum bt_store_conv_status status;       /* active, transferred, archived */
    int64_t created_ms;                     /* creation time */
    int64_t updated_ms;                     /* last activity (see docs/store.md) */
    char last_run[BT_ID_SIZE];              /* newest run's id, "" if none */
    enum bt_store_run_state last_run_state; /* its state, NONE if no run */
    int waiting;                            /* that run is running, but its worker
                                               waits for a turn slot (slot.h) */
    struct bt_store_worktree worktree;      /* its own worktree, if any */
    char group[BT_ID_SIZE];                 /* its group's id, "" if none */
};

/* Free the strings of c and zero it. NULL is a no-op. */
void bt_store_conversation_release(struct bt_store_conversation *c);

struct bt_store_conversation_new {
    const char *id;    /* optional: the id, made beforehand with bt_id_new
                          (an ACP session's, handed out before its first
                          prompt); NULL: a new one */
    const char *coder; /* required */
    const char *model; /* optional */
    const char *cwd;   /* required */
    const char *title; /* optional: the first prompt or any text; the title is
                          its first non-blank line, trimmed and cut to
                          BT_STORE_TITLE_MAX bytes on a UTF-8 boundary */
    const struct bt_store_worktree *worktree; /* optional: its own worktree
                                                 (every field set), made
                                                 beforehand */
    const char *group;                        /* optional: the id of the group
                                                 it belongs to */
};

/* Create an active conversation; writes its id. -EINVAL for an o->id that
 * is not an id (bt_id_valid); BT_ESTORE when a conversation has it. */
int bt_store_conversation_create(struct bt_store *s, const struct bt_store_conversation_new *o,
                                 char id[BT_ID_SIZE]);

/* Fill *out (owned strings; bt_store_conversation_release) for the exact id.
 * BT_ENOTFOUND if there is none (out is then zeroed). */
int bt_store_conversation_get(struct bt_store *s, const char *id,
                              struct bt_store_conversation *out);

/* Resolve what a user typed (a full id or a unique prefix of one, any case)
 * to a full id. BT_ENOTFOUND if nothing matches (also for "" or text that
 * cannot be part of an id), BT_EAMBIGUOUS if several do. Ids begin with
 * their creation time, so conversations created close together share long
 * prefixes. */
int bt_store_conversation_resolve(struct bt_store *s, const char *text, char id[BT_ID_SIZE]);

/* Record the coder's native session: session_id and/or session_path; a NULL
 * argument leaves that field unchanged. BT_ENOTFOUND if no conversation. */
int bt_store_conversation_set_native(struct bt_store *s, const char *id, const char *session_id,
                                     const char *session_path);

/* Set the status. BT_ENOTFOUND if no conversation, -EINVAL for NONE. */
int bt_store_conversation_set_status(struct bt_store *s, const char *id,
                                     enum bt_store_conv_status status);

/* Hand the conversation off to its coder's terminal UI: set its status to
 * transferred, in one transaction that refuses while a run of it is running
 * (BT_EBUSY) or user messages wait queued (-EAGAIN: they would never be
 * sent). Handing off a transferred conversation again is allowed. Turns
 * are then refused (bt_store_run_submit: -EPERM) unless forced.
 * BT_ENOTFOUND if no conversation. */
int bt_store_conversation_hand_off(struct bt_store *s, const char *conv);

/* What bt_store_conversation_hand_off would refuse, with the same codes
 * and messages, changing nothing (`baton handoff --print`). 0 when it
 * would hand off. */
int bt_store_conversation_hand_off_check(struct bt_store *s, const char *conv);

/* All conversations (at most limit, 0 = no limit), newest activity first,
 * each with its newest run's state. Sets *out to an array of *n entries
 * (NULL when 0) that the caller frees with bt_store_conversation_list_free. */
int bt_store_conversation_list(struct bt_store *s, size_t limit, struct bt_store_conversation **out,
                               size_t *n);
void bt_store_conversation_list_free(struct bt_store_conversation *v, size_t n);

/* --- groups ------------------------------------------------------------ */

/* Conversations started together on one prompt, one per coder (`baton run
 * -c a,b,c`). A group is removed with its last conversation. */
struct bt_store_group {
    char id[BT_ID_SIZE];
    char *name;         /* never NULL */
    int64_t created_ms; /* creation time */
    int64_t members;    /* its conversations now */
};
void bt_store_group_release(struct bt_store_group *g);

/* Create a group named name (its title: the first line of the prompt,
 * bt_store_make_title); writes its id. */
int bt_store_group_create(struct bt_store *s, const char *name, char id[BT_ID_SIZE]);

/* Resolve what a user typed (a unique prefix of a group id, any case) to
 * a full id. BT_ENOTFOUND, BT_EAMBIGUOUS as bt_store_conversation_resolve. */
int bt_store_group_resolve(struct bt_store *s, const char *text, char id[BT_ID_SIZE]);

/* Delete group id if it has no conversation (none could be made). */
int bt_store_group_delete_empty(struct bt_store *s, const char *id);

/* Groups, newest first (at most limit, 0 = all): *out an array of *n
 * (free with bt_store_group_list_free). */
int bt_store_group_list(struct bt_store *s, size_t limit, struct bt_store_group **out, size_t *n);
void bt_store_group_list_free(struct bt_store_group *v, size_t n);

/* One group (*g owned: bt_store_group_release) and its conversations in
 * the order they were made (*v, *n: bt_store_conversation_list_free).
 * BT_ENOTFOUND if there is no such group. */
int bt_store_group_get(struct bt_store *s, const char *id, struct bt_store_group *g,
                       struct bt_store_conversation **v, size_t *n);

/* --- messages ---------------------------------------------------------- */

struct bt_store_message {
    int64_t id;                    /* message id, > 0 */
    char conversation[BT_ID_SIZE]; /* owning conversation */
    int64_t seq;                   /* order in the conversation, from 1 */
    enum bt_store_role role;       /* user or assistant */
    enum bt_store_msg_state state; /* streaming, complete, ... queued */
    char *text;                    /* never NULL */
    char *error_kind;              /* NULL unless failed */
    char *error_text;              /* NULL unless failed */
    char run[BT_ID_SIZE];          /* run that produced/answers it, or "" */
    int64_t created_ms;            /* when added */
    int64_t updated_ms;            /* last change */
    int64_t queue_no;              /* its number in the conversation's queue
                                      (bt_store_queued_discard), kept once
                                      sent; 0 if it was never queued */
};

void bt_store_message_release(struct bt_store_message *m);

struct bt_store_message_new {
    const char *conversation;      /* required */
    enum bt_store_role role;       /* required */
    enum bt_store_msg_state state; /* required */
    const char *text;              /* NULL means "" */
    const char *run;               /* optional run id */
};

/* Append a message at the end of its conversation (seq = last + 1) and mark
 * the conversation active now (updated_ms); a queued message gets the
 * conversation's next queue number. Writes the new id to *id (may be
 * NULL). BT_ENOTFOUND if no conversation; BT_ESTORE if run is not a run. */
int bt_store_message_add(struct bt_store *s, const struct bt_store_message_new *o, int64_t *id);

/* Changes to a message; zero/NULL fields are left unchanged. */
struct bt_store_message_update {
    enum bt_store_msg_state state; /* NONE: unchanged */
    const char *text;              /* replaces the text */
    const char *append;            /* appended (after text, if both) */
    const char *error_kind;        /* replaces the error kind */
    const char *error_text;        /* replaces the error text */
    const char *run;               /* links the message to a run */
};

/* Apply u to message id and set its updated_ms. BT_ENOTFOUND if no such
 * message. */
int bt_store_message_update(struct bt_store *s, int64_t id,
                            const struct bt_store_message_update *u);

/* The messages of a conversation in turn order, the transcript every
 * front end shows: by the turn of the run a message belongs to (a retry's
 * answer under the prompt it answers, though stored after prompts queued
 * meanwhile), queued prompts last, seq order within a turn; so seq does
 * not always rise along the list. *out is an array of *n (NULL when 0),
 * freed with bt_store_message_list_free. BT_ENOTFOUND if no conversation. */
int bt_store_message_list(struct bt_store *s, const char *conversation,
                          struct bt_store_message **out, size_t *n);
void bt_store_message_list_free(struct bt_store_message *v, size_t n);

/* --- runs -------------------------------------------------------------- */

struct bt_store_run {
    char id[BT_ID_SIZE];           /* run id */
    char conversation[BT_ID_SIZE]; /* owning conversation */
    int64_t turn;                  /* turn number in the conversation, from 1 */
    char *coder;                   /* never NULL */
    char *coder_version;           /* NULL until known */
    char *model;                   /* NULL: the coder's default */
    enum bt_store_run_state state; /* running until finished or recovered */
    int pid;                       /* coder's pid, 0 until started */
    int pgid;                      /* coder's process group, 0 until started */
    uint64_t child_start;          /* pid's start time (bt_proc_pid_start), 0 unknown */
    int owner_pid;                 /* baton process that runs it */
    uint64_t owner_start;          /* its start time, 0 unknown */
    int64_t exit_code;             /* coder's exit code, BT_UNKNOWN if none */
    int exit_signal;               /* signal that ended the coder, 0 if none */
    int stop_stage;                /* signals baton sent its group: 0 none,
                                      1 SIGTERM, 2 SIGKILL; -1 unknown (not
                                      finished by its baton, or schema < 5) */
    char *error_kind;              /* NULL unless failed/interrupted */
    char *error_text;              /* curated, user-facing, or NULL */
    char *stderr_tail;             /* NULL, or stderr_tail_len bytes + NUL */
    size_t stderr_tail_len;        /* bytes of stderr_tail */
    char *native_session_id;       /* session the run used/created, or NULL */
    struct bt_usage usage;         /* turn totals; BT_UNKNOWN / < 0 unknown */
    int64_t message;               /* the run's assistant message id */
    int64_t started_ms;            /* creation time */
    int64_t ended_ms;              /* 0 while running */
    char *prompt;                  /* the text the run sent; NULL for runs of schema 1 */
    int64_t cancel_ms;             /* when a cancel was requested, 0 if never */
    char *tree_start;              /* its git working tree's snapshot before it
                                      (a tree id, src/repo.h); NULL: none */
    char *tree_end;                /* and after it; NULL: none */
    int waiting;                   /* running, but its worker waits for a turn
                                      slot (slot.h): no coder started yet */
};

void bt_store_run_release(struct bt_store_run *r);

/* Queued user messages of one turn are joined with this between them. */
#define BT_STORE_QUEUE_JOIN "\n\n"

enum bt_store_queue {
    BT_STORE_QUEUE_NEVER = 0,   /* a running run means BT_EBUSY */
    BT_STORE_QUEUE_IF_BUSY = 1, /* a running run means: queue user_text */
    BT_STORE_QUEUE_ALWAYS = 2,  /* queue user_text, start nothing (a worker
                                   will take it); BT_EBUSY never happens */
};

/* The turn settings a queued message was sent with (messages.approval,
 * timeout_ms, idle_timeout_ms, no_retry; docs/store.md): the sender's, not
 * those of whichever process sends the queue later. The store keeps the
 * numbers as given; their meaning is the service's. */
struct bt_store_settings {
    int approval;             /* enum bt_approval's value (runners/runner.h) */
    uint64_t timeout_ms;      /* the turn's time limit, 0 = none */
    uint64_t idle_timeout_ms; /* the limit on the coder's silence, 0 = none */
    int no_retry;             /* 1: the coder was asked not to retry requests */
};

struct bt_store_run_new {
    const char *conversation;  /* required */
    const char *coder;         /* required */
    const char *model;         /* optional */
    int64_t turn;              /* 0: one more than the conversation's last */
    int64_t user_message;      /* optional (0): the prompt this run answers */
    const char *user_text;     /* optional: a new prompt, stored as a complete
                                  user message in the same transaction (so a
                                  refused run leaves no prompt behind); not
                                  together with user_message */
    int take_queued;           /* the conversation's queued user messages go
                                  first into the prompt, in order, joined by
                                  BT_STORE_QUEUE_JOIN, and become complete
                                  messages of the run */
    enum bt_store_queue queue; /* what to do with user_text (required then) */
    const char *prompt;        /* the prompt when there is no user_text and
                                  nothing queued is taken (a retry) */
    const char *after_run;     /* optional: BT_EBUSY unless this is still the
                                  conversation's newest run (a retry) */
    size_t max_prompt;         /* optional bound of the joined prompt (and of
                                  what may wait queued), bytes: BT_ETOOBIG */
    /* optional: the sender's turn settings, kept with user_text when it is
     * queued */
    const struct bt_store_settings *settings;
    int force; /* send even if the conversation was handed
                  off (it becomes active again); without it
                  such a conversation refuses with -EPERM */
};

/* What bt_store_run_submit did. */
struct bt_store_submitted {
    char run[BT_ID_SIZE]; /* the new run, "" if the prompt was queued */
    int64_t message;      /* the new run's assistant message */
    int64_t queued;       /* > 0: user_text was queued as this message */
    int64_t queue_no;     /* and this is its queue number (> 0) */
    int busy;             /* another run was running (also on BT_EBUSY) */
    char *prompt;         /* the text the new run sends; NULL if queued */
    /* the settings of each queued message the run took, in order (all 0
     * for one stored without); NULL when none */
    struct bt_store_settings *settings;
    size_t n_settings; /* entries of settings */
};

void bt_store_submitted_release(struct bt_store_submitted *out);

/* Start the conversation's next run or queue its prompt, decided in one
 * transaction, so a submit racing the end of a running run either sees it
 * running (and queues) or sees it ended (and starts):
 * - a running run: with o->queue IF_BUSY user_text becomes a queued user
 *   message (out->queued), else BT_EBUSY;
 * - o->queue ALWAYS: user_text becomes a queued message, nothing starts;
 * - otherwise a run starts as bt_store_run_create does, with the prompt
 *   built from the queued messages (o->take_queued), then user_text, or
 *   o->prompt; BT_ENOTFOUND when take_queued finds nothing and no other
 *   text is given.
 * The prompt is stored with the run (runs.prompt) and returned. Errors as
 * bt_store_run_create, plus BT_ETOOBIG (o->max_prompt), BT_EBUSY when
 * o->after_run is no longer the newest run, and -EPERM when the
 * conversation was handed off and o->force is 0 (nothing is stored). Release out with
 * bt_store_submitted_release in every case. */
int bt_store_run_submit(struct bt_store *s, const struct bt_store_run_new *o,
                        struct bt_store_submitted *out);

/* Start a run in one transaction: insert it (state running, started_ms now,
 * owner = this process and its start time), add o->user_text as a user
 * message if given, add its assistant message
 * (state streaming, text ""), link o->user_message to it (a queued user
 * message becomes complete), and mark the conversation active now. Writes
 * the run id and, if message is not NULL, the assistant message id.
 * BT_ENOTFOUND if the conversation or the user message (in that
 * conversation, role user) does not exist; BT_EBUSY if the conversation
 * already has a running run (at most one per conversation, enforced by the
 * database across processes). */
int bt_store_run_create(struct bt_store *s, const struct bt_store_run_new *o, char id[BT_ID_SIZE],
                        int64_t *message);

/* Record the spawned coder: its pid, process group, version (optional) and
 * the pid's start time read now from /proc. With an event batch open the
 * record joins the batch (bt_store_flush commits both at once). BT_ENOTFOUND
 * if no such run. */
int bt_store_run_started(struct bt_store *s, const char *id, int pid, int pgid,
                         const char *coder_version);

struct bt_store_run_end {
    enum bt_store_run_state state; /* completed, failed, cancelled, interrupted */
    int64_t exit_code;             /* BT_UNKNOWN if not exited normally */
    int exit_signal;               /* 0 if none */
    int stop_stage;                /* signals baton sent the coder's group:
                                      0 none, 1 SIGTERM, 2 SIGKILL */
    const char *error_kind;        /* optional (see docs/events.md kinds) */
    const char *error_text;        /* optional, curated */
    const char *stderr_tail;       /* optional bytes; only the last
                                      BT_STORE_STDERR_TAIL_MAX are kept */
    size_t stderr_tail_len;        /* bytes of stderr_tail */
    const struct bt_usage *usage;  /* optional turn totals */
    const char *native_session_id; /* optional: NULL keeps the current one */
    const char *final_text;        /* optional: the assistant message's text;
                                      NULL keeps what was streamed */
};

/* Finish a running run in one transaction: commit pending events, set the
 * run's end state, exit, error, stderr tail, usage, native session id and
 * ended_ms; set its assistant message to the matching state (completed ->
 * complete, others the same word) with final_text and the error; mark the
 * conversation active now. -EINVAL for state NONE or RUNNING, BT_ENOTFOUND
 * if no such run, -EALREADY if it has already finished (nothing changes). */
int bt_store_run_finish(struct bt_store *s, const char *id, const struct bt_store_run_end *e);

/* Record a cancel request for the conversation's running run (the time is
 * kept if one was already recorded) and fill *out with that run, so the
 * caller can signal its owner. Recovery then ends the run cancelled rather
 * than interrupted, so a crash after the request still reads as cancelled.
 * BT_ENOTFOUND if no run of the conversation is running. */
int bt_store_run_cancel(struct bt_store *s, const char *conversation, struct bt_store_run *out);

/* *requested = 1 if a cancel of run was requested. BT_ENOTFOUND if no run. */
int bt_store_run_cancel_requested(struct bt_store *s, const char *run, int *requested);

/* Number of queued user messages of the conversation. */
int bt_store_queued_count(struct bt_store *s, const char *conversation, int64_t *n);

/* Remove a queued user message (by message id) before a run takes it.
 * BT_ENOTFOUND if the conversation has no such user message; -EALREADY if
 * it is no longer queued (a run took it: the message says which). */
int bt_store_message_discard(struct bt_store *s, const char *conversation, int64_t msg);

/* Queue numbers (store-queue.c). Every message queued in a conversation
 * gets the next number of that conversation's counter: 1 for the first
 * message ever queued in it, 2 for the next, and so on. A number is never
 * given twice in a conversation, not even after its message was removed or
 * sent, so whoever queued #N and takes back #N takes back its own message.
 * Message ids are global and are not queue numbers. */

/* Remove the conversation's queued message with queue number `number`
 * before a run takes it; *msg (may be NULL) gets its message id.
 * BT_ENOTFOUND if the conversation never had such a number (the message
 * says what is queued now, and names the queue number when `number` is
 * the message id of one of its queued messages); -EALREADY if #number was
 * sent already (the message names the run). */
int bt_store_queued_discard(struct bt_store *s, const char *conversation, int64_t number,
                            int64_t *msg);

/* Fill *out (owned strings; bt_store_run_release). BT_ENOTFOUND if none. */
int bt_store_run_get(struct bt_store *s, const char *id, struct bt_store_run *out);

/* The conversation's runs in turn order (the runs of one turn in the order
 * they started): *out is an array of *n (NULL when
 * none), freed with bt_store_run_list_free. */
int bt_store_run_list(struct bt_store *s, const char *conversation, struct bt_store_run **out,
                      size_t *n);

/* The conversation's newest run. BT_ENOTFOUND if it has none. */
int bt_store_run_last(struct bt_store *s, const char *conversation, struct bt_store_run *out);

/* --- events ------------------------------------------------------------ */

/* One stored event: the JSON object text of a normalized event. */
struct bt_store_event {
    const char *run;  /* run id */
    int64_t seq;      /* per run, from 1 */
    const char *type; /* event type name, "item.delta", ... */
    int64_t ts_ms;    /* event time */
    const char *data; /* JSON object text, NUL-terminated when read */
    size_t len;       /* bytes of data */
};

/* Add an event to the pending batch: the first append after a flush begins a
 * write transaction, which bt_store_flush (or any other writing call, or
 * bt_store_close) commits; until then other handles do not see the events.
 * One trailing '\n' of data is dropped. The caller flushes after each read
 * from the coder, before returning to its event loop: other writers wait
 * while a batch is open. BT_ESTORE on a duplicate (run, seq) or an unknown
 * run (the batch stays open with the events before it). */
int bt_store_event_append(struct bt_store *s, const struct bt_store_event *ev);

/* The rowid the last bt_store_event_append gave its event (the order of
 * commits, store-follow.h), 0 when it failed or there was none. */
int64_t bt_store_event_appended(const struct bt_store *s);

/* Commit the pending batch, if any. On failure the batch is rolled back and
 * its events are lost (the message says so). */
int bt_store_flush(struct bt_store *s);

/* Called for each event; ev and its strings live only for the call. Return 0
 * to continue, anything else to stop (bt_store_event_each returns it). The
 * callback may read through s but must not write through it. */
typedef int (*bt_store_event_fn)(void *data, const struct bt_store_event *ev);

/* Call fn for the run's events with seq >= from_seq, in seq order. Returns
 * 0, fn's non-zero value, or BT_ESTORE. An unknown run has no events. */
int bt_store_event_each(struct bt_store *s, const char *run, int64_t from_seq, bt_store_event_fn fn,
                        void *data);

/* The run's answer so far (store-queue.c): the text answer.h builds from
 * its stored message events (item.delta, item.completed), which is what
 * `baton attach` has shown. A streaming assistant message's own text stays
 * "" until its run ends (nothing is written per delta), so this is how a
 * running turn's text is read. *text is owned ("" when there is none). */
int bt_store_run_answer(struct bt_store *s, const char *run, char **text);

/* --- coder versions ---------------------------------------------------- */

/* A coder's executable as stat(2) saw it: a new install or upgrade changes
 * its inode and ctime, so a version stored for one identity is never given
 * for another. */
struct bt_store_exe {
    const char *coder; /* "pi": one file may serve several coders */
    const char *path;  /* the absolute realpath baton runs */
    int64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
};

/* Fill exe's identity from stat(path); exe->coder = coder and exe->path =
 * path (both borrowed). Returns 0 or the negated errno of stat. */
int bt_store_exe_stat(const char *coder, const char *path, struct bt_store_exe *exe);

/* What is stored for exe's coder and path, if the file's identity is the
 * same as when it was stored: 0 and an owned *version, or 0 with *version
 * NULL when the coder was asked and gave no version (so it is not asked
 * again); BT_ENOTFOUND (with *version NULL) when nothing is stored or the
 * executable has changed since. */
int bt_store_coder_version_get(struct bt_store *s, const struct bt_store_exe *exe, char **version);

/* Store version for exe (NULL: asked, no answer; "" is refused),
 * replacing what was stored for its coder and path. */
int bt_store_coder_version_put(struct bt_store *s, const struct bt_store_exe *exe,
                               const char *version);

/* Set the coder version of a run (the version the coder named in its
 * protocol, which wins over a stored one). BT_ENOTFOUND for no such run. */
int bt_store_run_set_version(struct bt_store *s, const char *run, const char *version);

/* Set a run's working-tree snapshots (tree ids, src/repo.h): start before
 * it, end after it; a NULL one is left as it is. BT_ENOTFOUND for no such
 * run. */
int bt_store_run_set_trees(struct bt_store *s, const char *run, const char *start, const char *end);

/* --- crash recovery ---------------------------------------------------- */

/* A recovered run whose process group may still be alive. */
struct bt_store_orphan {
    char run[BT_ID_SIZE]; /* the run */
    int pgid;             /* its coder's process group, 0 if never recorded */
    uint64_t child_start; /* start time of the group leader (pid == pgid), 0 unknown */
};

/* Mark every running run whose owner process is dead (bt_proc_pid_gone: no
 * such pid, a zombie, or a pid whose start time differs from owner_start)
 * interrupted,
 * in one transaction: the run gets ended_ms and an error text, its assistant
 * message becomes interrupted keeping the text streamed so far, and, unless
 * the run's last event already is turn.completed, a turn.completed event
 * {status: interrupted} is appended. Events are kept.
 *
 * *count (may be NULL) is set to the number of runs marked. *orphans is set
 * to an array of *n_orphans (free() it; NULL when 0) for those marked runs
 * whose process group may still exist (bt_proc_group_alive), and those whose
 * group was never recorded (pgid 0: the caller finds their processes by
 * the run's tag in their environment, bt_proc_kill_tagged). Before signalling
 * such a group the caller must check it still belongs to the run: the leader
 * pgid either no longer exists (Linux does not reuse a pid while it is a
 * live group's id) or has start time child_start (bt_proc_pid_start). */
int bt_store_recover(struct bt_store *s, int *count, struct bt_store_orphan **orphans,
                     size_t *n_orphans);

/* --- rebuilding a run from its raw output (store-rebuild.c) ------------ */

/* The running runs whose owner is gone (bt_proc_pid_gone), as
 * bt_store_run_get fills them: *out is an array of *n (NULL when 0), freed
 * with bt_store_run_list_free. Reads only. */
int bt_store_dead_runs(struct bt_store *s, struct bt_store_run **out, size_t *n);
void bt_store_run_list_free(struct bt_store_run *v, size_t n);

/* Rebuild a running run in one write transaction: keep its stored events
 * with seq <= kept, replace the rest with the n events ev (seq kept + 1 on,
 * in order; the last should be turn.completed), and finish the run as
 * bt_store_run_finish does with e. A rebuild cut short changes nothing, so
 * it can be done again. -EALREADY (nothing changes) when the run is no
 * longer running: someone else finished or rebuilt it first; BT_ENOTFOUND
 * for no such run; -EINVAL for events out of sequence; BT_ESTORE. */
int bt_store_run_rebuild(struct bt_store *s, const char *run, int64_t kept,
                         const struct bt_store_event *ev, size_t n,
                         const struct bt_store_run_end *e);

/* --- search and removal ------------------------------------------------ */

/* One conversation found by bt_store_search. */
struct bt_store_search_hit {
    struct bt_store_conversation conv; /* as bt_store_conversation_list gives it */
    int64_t message;                   /* best-matching message id, 0 if only the title matched */
    char *snippet;                     /* excerpt of that message around the match, white space
                                          runs as one space, cut parts as "…"; NULL if
                                          only the title matched */
};

/* Full-text search (FTS5, docs/store.md) of conversation titles and message
 * texts. text is what a person typed: it is split on white space, and each
 * word is matched as a literal FTS5 string, never as query syntax (quotes,
 * AND/OR/NOT/NEAR, '*', '-', "col:" are plain text); matching ignores case
 * and diacritics, and a word's punctuation only separates the tokens of a
 * phrase ("don't" is the phrase "don t"). A word of ASCII punctuation only
 * ("*", "--") is dropped: it could never match. A conversation matches when
 * its title, or at least one of its messages, holds every word.
 *
 * Sets *out to an array of *n hits (NULL when 0; free with
 * bt_store_search_free), newest activity first as in
 * bt_store_conversation_list, at most limit of them (0 = no limit); the
 * snippet comes from the conversation's best-ranked (bm25) matching message.
 * *more (may be NULL) is set to 1 when more conversations match than limit.
 * -EINVAL when text is NULL, blank or not valid UTF-8 (message says which);
 * no match at all, also when every word was dropped, is 0 with *n == 0. */
int bt_store_search(struct bt_store *s, const char *text, size_t limit,
                    struct bt_store_search_hit **out, size_t *n, int *more);
void bt_store_search_free(struct bt_store_search_hit *v, size_t n);

/* What bt_store_conversation_delete removed. */
struct bt_store_removal {
    struct bt_store_conversation conv; /* the conversation as it was (owned strings) */
    char (*runs)[BT_ID_SIZE];          /* ids of its runs, oldest first; NULL if none */
    size_t n_runs;                     /* entries of runs */
    int64_t messages;                  /* messages removed */
    int64_t events;                    /* events removed */
};

/* Free what r holds and zero it. NULL is a no-op. */
void bt_store_removal_release(struct bt_store_removal *r);

/* Delete conversation id with its messages, runs and their events, in one
 * write transaction, and fill *out (zeroed first; release with
 * bt_store_removal_release) with what it was. The run files
 * (bt_store_run_file) and the coder's native session are not touched: the
 * caller removes them, using out, once this has returned 0. BT_EBUSY, with
 * nothing removed, when the conversation has a running run (checked in the
 * same transaction, so a run cannot start between the check and the
 * delete; a run that starts after it finds no conversation); BT_ENOTFOUND
 * if there is no such conversation. */
int bt_store_conversation_delete(struct bt_store *s, const char *id, struct bt_store_removal *out);

/* What bt_store_conversation_delete would remove now, with its checks and
 * codes (BT_EBUSY while a run runs), removing nothing: for asking first. */
int bt_store_conversation_survey(struct bt_store *s, const char *id, struct bt_store_removal *out);

/* --- controls ---------------------------------------------------------- */

/* Control requests to the process that owns a run (its turn engine): a
 * cancel, a steer, a person's decision on an approval or a question. A
 * request is stored first (bt_store_control_add), then the owner is woken
 * (its channel, src/channel.h) and delivers it to the coder on the turn's
 * loop (src/service-control.c), which finishes it with a result. A request
 * whose owner died waits stored; recovery finishes it (docs/store.md,
 * "Controls"). Requests of a run are delivered in id order. */
#define BT_STORE_CONTROL_STATES(X)                                                                 \
    X(PENDING, "pending") /* stored, not delivered yet */                                          \
    X(DONE, "done")       /* delivered to the turn */                                              \
    X(REFUSED, "refused") /* not delivered: result says why */                                     \
    X(QUEUED, "queued")   /* the turn ended first: sent as a queued message */

enum bt_store_control_state {
    BT_STORE_CONTROL_NONE = 0,
#define BT_STORE_X(name, text) BT_STORE_CONTROL_##name,
    BT_STORE_CONTROL_STATES(BT_STORE_X)
#undef BT_STORE_X
};

/* The bound of a control's kind (bytes) and body (bytes of JSON text).
 * A body holds a steer's text, which may be as large as any prompt (16
 * MiB, service.h BT_SERVICE_PROMPT_MAX) and grows up to six times in JSON
 * (a control character is written \u0001): its bound holds that, and the
 * body's other members, so no prompt that could be sent is refused as a
 * steer. */
#define BT_STORE_CONTROL_KIND_MAX 32
#define BT_STORE_CONTROL_BODY_MAX ((size_t)(6 * 16 + 1) << 20)

struct bt_store_control {
    int64_t id;                        /* rowid, from 1, increasing */
    int64_t created_ms;                /* when it was stored (Unix ms) */
    int64_t done_ms;                   /* when it was finished, 0 while pending */
    char *kind;                        /* "cancel", "steer", "decision" */
    char *body;                        /* JSON object text: the kind's fields; never NULL */
    char *result;                      /* JSON text the handler finished it with, or NULL */
    enum bt_store_control_state state; /* PENDING until finished */
    enum bt_store_run_state run_state; /* its run's state now; NONE if the run is gone */
    char conversation[BT_ID_SIZE];     /* the run's conversation */
    char run[BT_ID_SIZE];              /* the run it is for */
};

/* Free what c holds and zero it. NULL is a no-op. */
void bt_store_control_release(struct bt_store_control *c);

/* The stored name of a state ("pending", ...), "none" for NONE. */
const char *bt_store_control_state_name(enum bt_store_control_state st);

/* Store a control request of kind (1..BT_STORE_CONTROL_KIND_MAX bytes of
 * [a-z_]) with body (a JSON object's text, at most
 * BT_STORE_CONTROL_BODY_MAX bytes; NULL: "{}") for run of conversation,
 * pending, and set *id. Only a running run takes requests, checked in the
 * same statement, so a request is never stored after the owner's last
 * look at its pending requests (it finishes the run first, then looks):
 * -EALREADY if the run has ended (the message names its state),
 * BT_ENOTFOUND if the conversation has no such run, -EINVAL for a bad
 * kind or body. */
int bt_store_control_add(struct bt_store *s, const char *conversation, const char *run,
                         const char *kind, const char *body_json, int64_t *id);

/* Call cb for each pending request of run with an id above after_id, in id
 * order, each *c valid for the call only. The rows are read first, so cb
 * may use the store (finish the request, add events). A nonzero return of
 * cb stops the walk and is returned; otherwise 0 or a store error. */
typedef int (*bt_store_control_fn)(void *data, const struct bt_store_control *c);
int bt_store_control_pending(struct bt_store *s, const char *run, int64_t after_id,
                             bt_store_control_fn cb, void *data);

/* The same for every pending request whose run is not running (its owner
 * finished it, or died and recovery ended it), in id order, each with its
 * run's end in c->run_state: what recovery finishes. */
int bt_store_control_stranded(struct bt_store *s, bt_store_control_fn cb, void *data);

/* Finish pending request id with state (DONE, REFUSED or QUEUED) and
 * result (a JSON text, or NULL) now. -EALREADY if it was already finished
 * (nothing changes: a request is finished once), BT_ENOTFOUND if there is
 * no such request, -EINVAL for a bad state. */
int bt_store_control_finish(struct bt_store *s, int64_t id, enum bt_store_control_state state,
                            const char *result_json);

/* Read request id into *out (release with bt_store_control_release).
 * BT_ENOTFOUND if there is none. */
int bt_store_control_get(struct bt_store *s, int64_t id, struct bt_store_control *out);

/* A steer (kind "steer") that did not go into its turn: queue text as a
 * user message of the request's conversation and finish pending request
 * id queued with the result {"reason": why, "queue_no": its queue number},
 * in one transaction, so the text waits as the next turn's message
 * exactly once (store-steer.c); it is kept with settings, the sender's
 * (NULL: none, as an older baton's). *queue_no (may be NULL): its number.
 * -EALREADY if the request was already finished (nothing is queued),
 * BT_ENOTFOUND if there is no such request. */
struct bt_store_settings;
int bt_store_control_queue(struct bt_store *s, int64_t id, const char *text, const char *why,
                           const struct bt_store_settings *settings, int64_t *queue_no);

/* --- helpers ----------------------------------------------------------- */

/* The title for text: its first line that is not blank, with surrounding
 * whitespace trimmed, cut to BT_STORE_TITLE_MAX bytes on a UTF-8 character
 * boundary. "" for NULL or blank text. Caller frees. */
char *bt_store_make_title(const char *text);

#endif
