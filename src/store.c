/* SPDX-License-Identifier: MIT */
/*
 * store: the SQLite side of baton (see store.h for the contract and
 * docs/store.md for the schema).
 *
 * Every SQL statement lives in the STMTS table below and is prepared once per
 * handle on first use (bt_store_event_each prepares its own, so a callback
 * may read through the handle). A statement is reset and its bindings cleared
 * before each use and after it, so text can be bound SQLITE_STATIC and no
 * read transaction outlives a call. Writes of more than one row go through
 * tx_begin/tx_end (BEGIN IMMEDIATE, so a waiting writer is handled by the busy
 * timeout rather than failing on a lock upgrade). Event appends keep one
 * transaction open (s->batch) until bt_store_flush; every other write
 * commits that batch first, so nothing is committed out of order.
 */
#include "store.h"
#include "store-int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answer.h"
#include "error.h"
#include "util.h"

/* --- schema ------------------------------------------------------------- */

/* Forward migrations: migrations[v] takes a database from user_version v to
 * v + 1 and runs in one transaction with the user_version update. Never edit
 * a step that has shipped; add a new one. */
static const char *const migrations[] = {
    /* 0 -> 1: initial schema */
    "CREATE TABLE conversations ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " title TEXT NOT NULL DEFAULT '',"
    " coder TEXT NOT NULL,"
    " model TEXT,"
    " cwd TEXT NOT NULL,"
    " native_session_id TEXT,"
    " native_session_path TEXT,"
    " status TEXT NOT NULL DEFAULT 'active'"
    "  CHECK (status IN ('active', 'transferred', 'archived')),"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL);"
    "CREATE INDEX conversations_updated ON conversations(updated_ms, id);"
    "CREATE TABLE runs ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " turn INTEGER NOT NULL CHECK (turn >= 1),"
    " coder TEXT NOT NULL,"
    " coder_version TEXT,"
    " model TEXT,"
    " state TEXT NOT NULL DEFAULT 'running' CHECK (state IN"
    "  ('running', 'completed', 'failed', 'cancelled', 'interrupted')),"
    " pid INTEGER,"
    " pgid INTEGER,"
    " child_start INTEGER,"
    " owner_pid INTEGER NOT NULL,"
    " owner_start INTEGER,"
    " exit_code INTEGER,"
    " exit_signal INTEGER,"
    " error_kind TEXT,"
    " error_text TEXT,"
    " stderr_tail BLOB,"
    " native_session_id TEXT,"
    " input_tokens INTEGER,"
    " cached_input_tokens INTEGER,"
    " output_tokens INTEGER,"
    " reasoning_tokens INTEGER,"
    " context_tokens INTEGER,"
    " context_window INTEGER,"
    " cost_usd REAL,"
    " started_ms INTEGER NOT NULL,"
    " ended_ms INTEGER);"
    "CREATE INDEX runs_conversation ON runs(conversation, started_ms);"
    "CREATE UNIQUE INDEX runs_one_running ON runs(conversation) WHERE state = 'running';"
    "CREATE TABLE messages ("
    " id INTEGER PRIMARY KEY,"
    " conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL CHECK (seq >= 1),"
    " role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),"
    " state TEXT NOT NULL CHECK (state IN ('streaming', 'complete', 'failed',"
    "  'cancelled', 'interrupted', 'queued')),"
    " text TEXT NOT NULL DEFAULT '',"
    " error_kind TEXT,"
    " error_text TEXT,"
    " run TEXT REFERENCES runs(id) ON DELETE SET NULL,"
    " created_ms INTEGER NOT NULL,"
    " updated_ms INTEGER NOT NULL,"
    " UNIQUE (conversation, seq));"
    "CREATE INDEX messages_run ON messages(run);"
    "CREATE TABLE events ("
    " run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL CHECK (seq >= 1),"
    " type TEXT NOT NULL,"
    " ts_ms INTEGER NOT NULL,"
    " data TEXT NOT NULL,"
    " PRIMARY KEY (run, seq));",
    /* 1 -> 2: the prompt a run sent, cancel requests, queued messages,
     * full-text search over titles and messages (external-content FTS5
     * tables kept by triggers) */
    "ALTER TABLE runs ADD COLUMN prompt TEXT;"
    "ALTER TABLE runs ADD COLUMN cancel_ms INTEGER;"
    "CREATE INDEX messages_queued ON messages(conversation, seq) WHERE state = 'queued';"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(text, content = 'messages',"
    " content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');"
    "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
    " INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END;"
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, text)"
    " VALUES ('delete', old.id, old.text); END;"
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN"
    " INSERT INTO messages_fts (messages_fts, rowid, text)"
    " VALUES ('delete', old.id, old.text);"
    " INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text); END;"
    "CREATE VIRTUAL TABLE titles_fts USING fts5(title, content = 'conversations',"
    " content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2');"
    "CREATE TRIGGER titles_fts_insert AFTER INSERT ON conversations BEGIN"
    " INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title); END;"
    "CREATE TRIGGER titles_fts_delete AFTER DELETE ON conversations BEGIN"
    " INSERT INTO titles_fts (titles_fts, rowid, title)"
    " VALUES ('delete', old.rowid, old.title); END;"
    "CREATE TRIGGER titles_fts_update AFTER UPDATE OF title ON conversations BEGIN"
    " INSERT INTO titles_fts (titles_fts, rowid, title)"
    " VALUES ('delete', old.rowid, old.title);"
    " INSERT INTO titles_fts (rowid, title) VALUES (new.rowid, new.title); END;"
    "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');"
    "INSERT INTO titles_fts (titles_fts) VALUES ('rebuild');",
    /* 2 -> 3: the turn settings a queued message was sent with */
    "ALTER TABLE messages ADD COLUMN options TEXT;",
    /* 3 -> 4: coders' versions by executable identity (store-coder.c), so
     * a turn runs no `--version` probe; recovery's look for running runs
     * reads a partial index instead of every run */
    "CREATE TABLE coder_versions ("
    " coder TEXT NOT NULL, path TEXT NOT NULL,"
    " dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,"
    " version TEXT CHECK (version IS NULL OR version <> ''),"
    " seen_ms INTEGER NOT NULL, PRIMARY KEY (coder, path)) WITHOUT ROWID;"
    "CREATE INDEX runs_running ON runs(state) WHERE state = 'running';",
    /* 4 -> 5: queue numbers (store-queue.c): each queued message gets the
     * next number of its conversation's counter, never given twice; the
     * messages queued now are numbered 1, 2, ... in their order */
    "ALTER TABLE conversations ADD COLUMN queue_last INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE messages ADD COLUMN queue_no INTEGER;"
    "UPDATE messages SET queue_no = (SELECT count(*) FROM messages m"
    " WHERE m.conversation = messages.conversation AND m.state = 'queued'"
    " AND m.role = 'user' AND m.seq <= messages.seq)"
    " WHERE state = 'queued' AND role = 'user';"
    "UPDATE conversations SET queue_last = (SELECT count(*) FROM messages m"
    " WHERE m.conversation = conversations.id AND m.queue_no IS NOT NULL);"
    "CREATE UNIQUE INDEX messages_queue_no ON messages(conversation, queue_no)"
    " WHERE queue_no IS NOT NULL;"
    /* and whether baton had to signal a run's coder (show --debug): codex
     * exits 0 on SIGTERM, so its exit status alone does not tell */
    "ALTER TABLE runs ADD COLUMN stop_stage INTEGER;",
};

#define N_MIGRATIONS ((int)BT_ARRAY_SIZE(migrations))
_Static_assert(BT_ARRAY_SIZE(migrations) == BT_STORE_SCHEMA_VERSION,
               "one migration per schema version");

/* --- statements --------------------------------------------------------- */

#define CONV_SELECT                                                                                \
    "SELECT c.id, c.title, c.coder, c.model, c.cwd, c.native_session_id,"                          \
    " c.native_session_path, c.status, c.created_ms, c.updated_ms, r.id,"                          \
    " r.state FROM conversations c LEFT JOIN runs r ON r.rowid ="                                  \
    " (SELECT r2.rowid FROM runs r2 WHERE r2.conversation = c.id"                                  \
    " ORDER BY r2.started_ms DESC, r2.rowid DESC LIMIT 1)"

#define MSG_SELECT                                                                                 \
    "SELECT id, conversation, seq, role, state, text, error_kind, error_text,"                     \
    " run, created_ms, updated_ms, queue_no FROM messages"

#define RUN_SELECT                                                                                 \
    "SELECT r.id, r.conversation, r.turn, r.coder, r.coder_version, r.model,"                      \
    " r.state, r.pid, r.pgid, r.child_start, r.owner_pid, r.owner_start,"                          \
    " r.exit_code, r.exit_signal, r.error_kind, r.error_text, r.stderr_tail,"                      \
    " r.native_session_id, r.input_tokens, r.cached_input_tokens,"                                 \
    " r.output_tokens, r.reasoning_tokens, r.context_tokens,"                                      \
    " r.context_window, r.cost_usd, (SELECT m.id FROM messages m"                                  \
    " WHERE m.run = r.id AND m.role = 'assistant' LIMIT 1), r.started_ms,"                         \
    " r.ended_ms, r.prompt, r.cancel_ms, r.stop_stage FROM runs r"

#define STMTS(X)                                                                                   \
    X(BEGIN, "BEGIN IMMEDIATE")                                                                    \
    X(COMMIT, "COMMIT")                                                                            \
    X(ROLLBACK, "ROLLBACK")                                                                        \
    X(USER_VERSION, "PRAGMA user_version")                                                         \
    X(CONV_INSERT, "INSERT INTO conversations (id, title, coder, model, cwd,"                      \
                   " created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)")                 \
    X(CONV_TOUCH, "UPDATE conversations SET updated_ms = ?2 WHERE id = ?1")                        \
    X(CONV_GET, CONV_SELECT " WHERE c.id = ?1")                                                    \
    X(CONV_LIST, CONV_SELECT " ORDER BY c.updated_ms DESC, c.id DESC LIMIT ?1")                    \
    X(CONV_RESOLVE, "SELECT id FROM conversations WHERE id >= ?1"                                  \
                    " AND id < ?1 || '{' ORDER BY id LIMIT 2")                                     \
    X(CONV_EXISTS, "SELECT 1 FROM conversations WHERE id = ?1")                                    \
    X(CONV_SET_NATIVE, "UPDATE conversations SET native_session_id ="                              \
                       " coalesce(?2, native_session_id), native_session_path ="                   \
                       " coalesce(?3, native_session_path) WHERE id = ?1")                         \
    X(CONV_SET_STATUS, "UPDATE conversations SET status = ?2 WHERE id = ?1")                       \
    X(MSG_INSERT, "INSERT INTO messages (conversation, seq, role, state, text,"                    \
                  " run, created_ms, updated_ms) VALUES (?1, (SELECT"                              \
                  " coalesce(max(seq), 0) + 1 FROM messages WHERE"                                 \
                  " conversation = ?1), ?2, ?3, ?4, ?5, ?6, ?6)")                                  \
    X(MSG_UPDATE, "UPDATE messages SET state = coalesce(?2, state), text ="                        \
                  " coalesce(?3, text) || coalesce(?4, ''), error_kind ="                          \
                  " coalesce(?5, error_kind), error_text = coalesce(?6,"                           \
                  " error_text), run = coalesce(?7, run), updated_ms = ?8"                         \
                  " WHERE id = ?1")                                                                \
    X(MSG_LIST, MSG_SELECT " WHERE conversation = ?1 ORDER BY seq")                                \
    X(MSG_LINK_USER, "UPDATE messages SET run = ?2, state = CASE state WHEN"                       \
                     " 'queued' THEN 'complete' ELSE state END, updated_ms = ?3"                   \
                     " WHERE id = ?4 AND conversation = ?1 AND role = 'user'")                     \
    X(MSG_FINISH, "UPDATE messages SET state = ?2, text = coalesce(?3, text),"                     \
                  " error_kind = ?4, error_text = ?5, updated_ms = ?6"                             \
                  " WHERE run = ?1 AND role = 'assistant'")                                        \
    X(MSG_RUN_TEXT, "SELECT text FROM messages WHERE run = ?1"                                     \
                    " AND role = 'assistant' LIMIT 1")                                             \
    X(RUN_BUSY, "SELECT id FROM runs WHERE conversation = ?1"                                      \
                " AND state = 'running'")                                                          \
    X(RUN_NEXT_TURN, "SELECT coalesce(max(turn), 0) + 1 FROM runs"                                 \
                     " WHERE conversation = ?1")                                                   \
    X(RUN_INSERT, "INSERT INTO runs (id, conversation, turn, coder, model,"                        \
                  " owner_pid, owner_start, started_ms, prompt) VALUES"                            \
                  " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")                                         \
    X(RUN_LAST_ID, "SELECT id FROM runs WHERE conversation = ?1"                                   \
                   " ORDER BY started_ms DESC, rowid DESC LIMIT 1")                                \
    X(RUN_CANCEL, "UPDATE runs SET cancel_ms = coalesce(cancel_ms, ?2)"                            \
                  " WHERE conversation = ?1 AND state = 'running'")                                \
    X(RUN_CANCELLED, "SELECT cancel_ms IS NOT NULL FROM runs WHERE id = ?1")                       \
    X(MSG_SET_OPTIONS, "UPDATE messages SET options = ?2 WHERE id = ?1")                           \
    X(QUEUED_LIST, "SELECT text, options FROM messages WHERE conversation = ?1"                    \
                   " AND state = 'queued' AND role = 'user' ORDER BY seq")                         \
    X(QUEUED_LINK, "UPDATE messages SET run = ?2, state = 'complete', updated_ms = ?3"             \
                   " WHERE conversation = ?1 AND state = 'queued' AND role = 'user'")              \
    X(QUEUED_COUNT, "SELECT count(*) FROM messages WHERE conversation = ?1"                        \
                    " AND state = 'queued' AND role = 'user'")                                     \
    X(MSG_DISCARD, "DELETE FROM messages WHERE id = ?2 AND conversation = ?1"                      \
                   " AND state = 'queued' AND role = 'user'")                                      \
    X(MSG_STATE, "SELECT state, run FROM messages WHERE id = ?2 AND conversation = ?1"             \
                 " AND role = 'user'")                                                             \
    X(RUN_STARTED, "UPDATE runs SET pid = ?2, pgid = ?3, child_start = ?4,"                        \
                   " coder_version = coalesce(?5, coder_version) WHERE id = ?1")                   \
    X(RUN_FINISH, "UPDATE runs SET state = ?2, exit_code = ?3, exit_signal = ?4,"                  \
                  " error_kind = ?5, error_text = ?6, stderr_tail = ?7,"                           \
                  " native_session_id = coalesce(?8, native_session_id),"                          \
                  " input_tokens = ?9, cached_input_tokens = ?10,"                                 \
                  " output_tokens = ?11, reasoning_tokens = ?12,"                                  \
                  " context_tokens = ?13, context_window = ?14,"                                   \
                  " cost_usd = ?15, ended_ms = ?16, stop_stage = ?17"                              \
                  " WHERE id = ?1 AND state = 'running'")                                          \
    X(RUN_STATE, "SELECT state FROM runs WHERE id = ?1")                                           \
    X(RUN_TOUCH_CONV, "UPDATE conversations SET updated_ms = ?2 WHERE id ="                        \
                      " (SELECT conversation FROM runs WHERE id = ?1)")                            \
    X(RUN_GET, RUN_SELECT " WHERE r.id = ?1")                                                      \
    X(RUN_LAST, RUN_SELECT " WHERE r.conversation = ?1"                                            \
                           " ORDER BY r.started_ms DESC, r.rowid DESC LIMIT 1")                    \
    X(EVENT_INSERT, "INSERT INTO events (run, seq, type, ts_ms, data)"                             \
                    " VALUES (?1, ?2, ?3, ?4, ?5)")                                                \
    X(EVENT_LAST, "SELECT seq, type FROM events WHERE run = ?1"                                    \
                  " ORDER BY seq DESC LIMIT 1")                                                    \
    X(RECOVER_LIST, "SELECT id, conversation, owner_pid, owner_start, pgid,"                       \
                    " child_start, started_ms, cancel_ms IS NOT NULL FROM runs"                    \
                    " WHERE state = 'running'")                                                    \
    X(RECOVER_RUN, "UPDATE runs SET state = ?4, error_text = ?3,"                                  \
                   " ended_ms = ?2 WHERE id = ?1 AND state = 'running'")                           \
    X(RECOVER_MSG, "UPDATE messages SET state = ?5, error_text = ?3,"                              \
                   " text = CASE WHEN text = '' THEN coalesce(?4, '') ELSE text END,"              \
                   " updated_ms = ?2 WHERE run = ?1 AND role = 'assistant'"                        \
                   " AND state = 'streaming'")

enum stmt_id {
#define STMT_ENUM(name, sql) ST_##name,
    STMTS(STMT_ENUM)
#undef STMT_ENUM
        ST__COUNT
};

_Static_assert(ST__COUNT <= BT_STORE_STMTS_MAX, "raise BT_STORE_STMTS_MAX");

static const char *const stmt_sql[] = {
#define STMT_SQL(name, sql) sql,
    STMTS(STMT_SQL)
#undef STMT_SQL
};

#define EVENT_SELECT                                                                               \
    "SELECT run, seq, type, ts_ms, data FROM events WHERE run = ?1"                                \
    " AND seq >= ?2 ORDER BY seq"

#define RECOVER_TEXT "the baton process running this turn ended before it finished"
#define RECOVER_CANCEL_TEXT                                                                        \
    "the turn was cancelled; the baton process running it ended before it finished"

/* --- names -------------------------------------------------------------- */

#define NAME_TEXT(name, text) text,
static const char *const conv_status_names[] = {"none", BT_STORE_CONV_STATUSES(NAME_TEXT)};
static const char *const role_names[] = {"none", BT_STORE_ROLES(NAME_TEXT)};
static const char *const msg_state_names[] = {"none", BT_STORE_MSG_STATES(NAME_TEXT)};
static const char *const run_state_names[] = {"none", BT_STORE_RUN_STATES(NAME_TEXT)};
#undef NAME_TEXT

static const char *name_of(const char *const *names, size_t n, int v)
{
    return v > 0 && (size_t)v < n ? names[v] : names[0];
}

/* The enum value of a stored name; 0 if unknown or NULL. */
static int value_of(const char *const *names, size_t n, const unsigned char *text)
{
    for (size_t i = 1; text && i < n; i++)
        if (strcmp(names[i], (const char *)text) == 0)
            return (int)i;
    return 0;
}

#define VALID(names, v) ((int)(v) > 0 && (size_t)(v) < BT_ARRAY_SIZE(names))

const char *bt_store_conv_status_name(enum bt_store_conv_status v)
{
    return name_of(conv_status_names, BT_ARRAY_SIZE(conv_status_names), (int)v);
}

const char *bt_store_role_name(enum bt_store_role v)
{
    return name_of(role_names, BT_ARRAY_SIZE(role_names), (int)v);
}

const char *bt_store_msg_state_name(enum bt_store_msg_state v)
{
    return name_of(msg_state_names, BT_ARRAY_SIZE(msg_state_names), (int)v);
}

const char *bt_store_run_state_name(enum bt_store_run_state v)
{
    return name_of(run_state_names, BT_ARRAY_SIZE(run_state_names), (int)v);
}

/* --- errors ------------------------------------------------------------- */

/* Set the message and return code. */
BT_PRINTF(3, 4)
int bt_st_fail(struct bt_store *s, int code, const char *fmt, ...)
{
    va_list ap;
    bt_buf_reset(&s->err);
    va_start(ap, fmt);
    bt_buf_vaddf(&s->err, fmt, ap);
    va_end(ap);
    return code;
}

/* Record SQLite's message for the failed step `what`; returns BT_ESTORE. */
int bt_st_db_fail(struct bt_store *s, const char *what)
{
    return bt_st_fail(s, BT_ESTORE, "%s: %s", what, sqlite3_errmsg(s->db));
}

const char *bt_store_errmsg(const struct bt_store *s)
{
    return s ? s->err.data : "";
}

const char *bt_store_home(const struct bt_store *s)
{
    return s->home;
}

/* --- statement helpers -------------------------------------------------- */

/* The statement id, reset and with no bindings, or NULL (error set). */
static sqlite3_stmt *stmt(struct bt_store *s, enum stmt_id id)
{
    sqlite3_stmt **q = &s->stmts[id];
    if (!*q && sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, q, NULL) !=
                   SQLITE_OK) {
        bt_st_db_fail(s, "prepare");
        return NULL;
    }
    sqlite3_reset(*q);
    sqlite3_clear_bindings(*q);
    return *q;
}

sqlite3_stmt *bt_st_sql(struct bt_store *s, const char *sql)
{
    size_t i = 0;
    while (i < BT_ARRAY_SIZE(s->cache) && s->cache[i].sql && s->cache[i].sql != sql)
        i++;
    if (i == BT_ARRAY_SIZE(s->cache)) {
        bt_st_fail(s, BT_ESTORE, "prepare: too many statements");
        return NULL;
    }
    if (!s->cache[i].q) {
        if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->cache[i].q, NULL) !=
            SQLITE_OK) {
            bt_st_db_fail(s, "prepare");
            return NULL;
        }
        s->cache[i].sql = sql;
    }
    sqlite3_reset(s->cache[i].q);
    sqlite3_clear_bindings(s->cache[i].q);
    return s->cache[i].q;
}

/* Reset q after use (ends its read) and return rc. */
int bt_st_done(sqlite3_stmt *q, int rc)
{
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rc;
}

/* Step a statement that returns no rows; returns 0 or BT_ESTORE. */
int bt_st_run(struct bt_store *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : bt_st_db_fail(s, what);
    return bt_st_done(q, rc);
}

/* Step once: 1 for a row (q stays positioned), 0 for none, BT_ESTORE. */
int bt_st_step(struct bt_store *s, sqlite3_stmt *q, const char *what)
{
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        return 1;
    return bt_st_done(q, rc == SQLITE_DONE ? 0 : bt_st_db_fail(s, what));
}

void bt_st_bind_text(sqlite3_stmt *q, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(q, i, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, i);
}

/* Bind v, or NULL when v < 0 (unknown). */
static void bind_known(sqlite3_stmt *q, int i, int64_t v)
{
    if (v >= 0)
        sqlite3_bind_int64(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

char *bt_st_col_str(sqlite3_stmt *q, int i)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    return t ? bt_xstrdup((const char *)t) : NULL;
}

char *bt_st_col_str0(sqlite3_stmt *q, int i)
{
    char *t = bt_st_col_str(q, i);
    return t ? t : bt_xstrdup("");
}

/* Copy an id column into out; "" if NULL or not an id. */
void bt_st_col_id(sqlite3_stmt *q, int i, char out[BT_ID_SIZE])
{
    const char *t = (const char *)sqlite3_column_text(q, i);
    if (t && strlen(t) < BT_ID_SIZE)
        memcpy(out, t, strlen(t) + 1);
    else
        out[0] = '\0';
}

/* The column as int64, or dflt when NULL. */
int64_t bt_st_col_i64(sqlite3_stmt *q, int i, int64_t dflt)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(q, i);
}

#define COL_ENUM(q, i, names) value_of(names, BT_ARRAY_SIZE(names), sqlite3_column_text(q, i))

/* --- transactions ------------------------------------------------------- */

int bt_store_flush(struct bt_store *s)
{
    if (!s->batch)
        return 0;
    s->batch = 0;
    sqlite3_stmt *q = stmt(s, ST_COMMIT);
    int rc = q ? bt_st_run(s, q, "commit events") : BT_ESTORE;
    if (rc == 0)
        return 0;
    char *why = bt_xstrdup(s->err.data);
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    bt_st_fail(s, rc, "%s (the batch of events was lost)", why);
    free(why);
    return rc;
}

/* Commit pending events, then BEGIN IMMEDIATE. */
int bt_st_tx_begin(struct bt_store *s)
{
    int rc = bt_store_flush(s);
    if (rc)
        return rc;
    sqlite3_stmt *q = stmt(s, ST_BEGIN);
    return q ? bt_st_run(s, q, "begin") : BT_ESTORE;
}

/* Commit if rc is 0, else roll back keeping the error; returns the result. */
int bt_st_tx_end(struct bt_store *s, int rc)
{
    if (rc == 0) {
        sqlite3_stmt *q = stmt(s, ST_COMMIT);
        rc = q ? bt_st_run(s, q, "commit") : BT_ESTORE;
        if (rc == 0)
            return 0;
    }
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* The statement for a single-statement write: pending events are committed
 * first, so writes reach the database in call order. NULL on error. */
static sqlite3_stmt *write_stmt(struct bt_store *s, enum stmt_id id)
{
    return bt_store_flush(s) == 0 ? stmt(s, id) : NULL;
}

/* --- processes ---------------------------------------------------------- */

/* Parse /proc/<pid>/stat: state letter and start time (field 22). */
static int read_proc_stat(int pid, char *state, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return n < 0 && errno != ESRCH ? -EIO : -ESRCH;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'), *save = NULL, *tok;
    if (!p || p[1] != ' ')
        return -EIO;
    *state = p[2];
    tok = strtok_r(p + 1, " ", &save); /* field 3 */
    for (int field = 3; tok && field < 22; field++)
        tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return -EIO;
    *start = strtoull(tok, NULL, 10);
    return 0;
}

int bt_store_pid_start(int pid, uint64_t *start)
{
    char state = 0;
    *start = 0;
    if (pid <= 0)
        return -ESRCH;
    int rc = read_proc_stat(pid, &state, start);
    if (rc == 0 && (state == 'Z' || state == 'X')) {
        *start = 0;
        return -ESRCH;
    }
    return rc;
}

int bt_store_owner_gone(int pid, uint64_t start)
{
    uint64_t now = 0;
    if (pid <= 0)
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    int rc = bt_store_pid_start(pid, &now);
    if (rc == -ESRCH)
        return 1;
    return rc == 0 && start != 0 && now != start;
}

/* 1 if process group pgid may have members (never for 0, 1 or our own). */
static int group_may_live(int pgid)
{
    if (pgid <= 1 || pgid == (int)getpgrp())
        return 0;
    return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* --- opening ------------------------------------------------------------ */

char *bt_store_default_home(void)
{
    const char *v = getenv("BATON_HOME");
    if (v && *v) /* relative: a worker or a later cwd would find another */
        return v[0] == '/' ? bt_xstrdup(v) : NULL;
    v = getenv("XDG_STATE_HOME");
    if (v && v[0] == '/')
        return bt_xasprintf("%s/baton", v);
    v = getenv("HOME");
    if (v && *v)
        return bt_xasprintf("%s/.local/state/baton", v);
    return NULL;
}

/* Run one or more statements without results. */
static int exec(struct bt_store *s, const char *sql, const char *what)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : bt_st_db_fail(s, what);
}

#define WAL_CHECKPOINT_PAGES 128 /* 512 KiB: about three text turns */
#define WAL_MAX_PAGES 4096       /* 16 MiB: checkpoint even mid-turn */

/* After each commit (SQLite's WAL hook, which replaces its own
 * autocheckpoint): note the WAL's size for bt_store_close, and checkpoint
 * at once only when a very long turn has made it large. */
static int on_wal_commit(void *data, sqlite3 *db, const char *name, int pages)
{
    struct bt_store *s = data;
    s->wal_pages = pages;
    if (pages >= WAL_MAX_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

/* PRAGMA journal_mode=WAL, waiting for other openers: on a new db, the
 * switch to WAL needs a lock that SQLite's busy handler does not wait for
 * (three batons opening a new store at once failed "database is locked"
 * one time in five). */
static int step_journal_mode(struct bt_store *s, sqlite3_stmt **q)
{
    int waited = 0;
    for (;;) {
        int rc = *q ? SQLITE_OK : sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, q, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(*q);
        if (rc == SQLITE_ROW)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY || waited >= BT_STORE_BUSY_TIMEOUT_MS)
            return bt_st_db_fail(s, "journal_mode");
        if (*q)
            sqlite3_reset(*q);
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
        waited += 5;
    }
}

static int set_wal(struct bt_store *s)
{
    sqlite3_stmt *q = NULL;
    int rc = step_journal_mode(s, &q);
    const char *mode = rc == 0 ? (const char *)sqlite3_column_text(q, 0) : NULL;
    if (rc == 0 && (!mode || strcmp(mode, "wal") != 0))
        rc = bt_st_fail(s, BT_ESTORE, "'%s' cannot use WAL mode (journal_mode is %s)", s->db_path,
                        mode ? mode : "unknown");
    sqlite3_finalize(q);
    return rc;
}

static int open_db(struct bt_store *s)
{
    /* NOFOLLOW: a link put at baton.db after bt_st_prepare_home looked */
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
    int rc = sqlite3_open_v2(s->db_path, &s->db, flags, NULL);
    if (rc != SQLITE_OK)
        return s->db ? bt_st_db_fail(s, s->db_path)
                     : bt_st_fail(s, BT_ESTORE, "%s: %s", s->db_path, sqlite3_errstr(rc));
    /* SQLite opens a file it may not write read-only, without a word */
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return bt_st_fail(s, BT_ESTORE, "'%s' can only be read", s->db_path);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, BT_STORE_BUSY_TIMEOUT_MS);
    sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    rc = set_wal(s);
    if (rc == 0)
        rc = exec(s,
                  "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                  " PRAGMA journal_size_limit=4194304",
                  "pragma");
    /* Every baton command is a short process, and the last connection to
     * close would checkpoint the WAL into the db, fsync both and delete it:
     * about 3 ms of each turn. The WAL is durable as it is (kill -9 loses
     * nothing; synchronous=NORMAL never promised more against power loss),
     * so closing leaves it. Nor does a commit checkpoint (SQLite's default
     * past 1000 pages): two fsyncs on the event loop stall a streaming
     * turn, by 200 ms on a busy disk. bt_store_close checkpoints instead,
     * after the turn, once the WAL holds WAL_CHECKPOINT_PAGES pages; that
     * also bounds what the next opener reads to rebuild the WAL index (0.6
     * ms per MB here). */
    if (rc == 0) {
        sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
        sqlite3_wal_hook(s->db, on_wal_commit, s);
    }
    return rc;
}

static int user_version(struct bt_store *s, int *v)
{
    sqlite3_stmt *q = stmt(s, ST_USER_VERSION);
    if (!q)
        return BT_ESTORE;
    int rc = bt_st_step(s, q, "read schema version");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ESTORE, "read schema version: no result");
    *v = sqlite3_column_int(q, 0);
    return bt_st_done(q, 0);
}

static int check_version(struct bt_store *s, int v)
{
    if (v > N_MIGRATIONS)
        return bt_st_fail(s, BT_ESCHEMA,
                          "'%s' has schema version %d, newer than this baton's %d: upgrade baton",
                          s->db_path, v, N_MIGRATIONS);
    if (v < 0)
        return bt_st_fail(s, BT_ESCHEMA, "'%s' has an invalid schema version %d", s->db_path, v);
    return 0;
}

/* One migration step in one transaction; re-reads the version under the
 * write lock, so concurrent openers migrate once. */
static int migrate_step(struct bt_store *s)
{
    int v = 0, rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = user_version(s, &v);
    if (rc == 0)
        rc = check_version(s, v);
    if (rc == 0 && v < N_MIGRATIONS) {
        char *what = bt_xasprintf("migrate schema %d to %d", v, v + 1);
        char *sql = bt_xasprintf("%s; PRAGMA user_version = %d;", migrations[v], v + 1);
        rc = exec(s, sql, what);
        free(sql);
        free(what);
    }
    return bt_st_tx_end(s, rc);
}

static int migrate(struct bt_store *s)
{
    for (;;) {
        int v = 0, rc = user_version(s, &v);
        if (rc == 0)
            rc = check_version(s, v);
        if (rc || v == N_MIGRATIONS)
            return rc;
        rc = migrate_step(s);
        if (rc)
            return rc;
    }
}

int bt_store_open(const char *home, struct bt_store **out, char **errmsg)
{
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    struct bt_store *s = bt_xcalloc(1, sizeof *s);
    bt_buf_init(&s->err);
    int rc = -EINVAL;
    if (!home || !*home)
        bt_st_fail(s, rc, "no store directory given");
    else {
        s->home = bt_xstrdup(home);
        s->db_path = bt_xasprintf("%s/baton.db", home);
        rc = bt_st_prepare_home(s);
    }
    if (rc == 0 && (rc = open_db(s)) != 0)
        bt_st_open_explain(s);
    if (rc == 0)
        rc = migrate(s);
    /* only a store that opened gets its modes fixed: SQLite made its -wal
     * and -shm with the db's mode, so they are fixed together */
    if (rc == 0)
        rc = bt_st_fix_modes(s);
    if (rc == 0) {
        *out = s;
        return 0;
    }
    if (errmsg)
        *errmsg = bt_xstrdup(s->err.data);
    char *made = s->created_db ? bt_xstrdup(s->db_path) : NULL;
    bt_store_close(s);
    bt_st_unprepare(made); /* once SQLite let go of it */
    free(made);
    return rc;
}

/* Copy the WAL into the db and empty it, unless another connection is in
 * the way (then it waits for a later close: never for the busy timeout).
 * Emptied, not only copied: the next process to open the store finds no
 * other connection and rebuilds the WAL index, which forgets what was
 * copied, so a WAL only ever copied would grow without end. */
static void checkpoint_on_close(struct bt_store *s)
{
    sqlite3_busy_timeout(s->db, 0);
    if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

void bt_store_close(struct bt_store *s)
{
    if (!s)
        return;
    if (s->db)
        bt_store_flush(s);
    if (s->db && s->wal_pages >= WAL_CHECKPOINT_PAGES)
        checkpoint_on_close(s);
    for (int i = 0; i < ST__COUNT; i++)
        sqlite3_finalize(s->stmts[i]);
    for (size_t i = 0; i < BT_ARRAY_SIZE(s->cache); i++)
        sqlite3_finalize(s->cache[i].q);
    sqlite3_close_v2(s->db);
    bt_buf_release(&s->err);
    free(s->db_path);
    free(s->home);
    free(s);
}

char *bt_store_run_file(const struct bt_store *s, const char *run, const char *suffix)
{
    if (!bt_id_valid(run) || !suffix || strchr(suffix, '/'))
        return NULL;
    return bt_xasprintf("%s/runs/%s%s", s->home, run, suffix);
}

/* --- titles ------------------------------------------------------------- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

char *bt_store_make_title(const char *text)
{
    if (!text)
        return bt_xstrdup("");
    while (is_blank(*text))
        text++;
    size_t n = strcspn(text, "\n");
    char *clean = bt_utf8_sanitize(text, n, NULL);
    n = bt_utf8_cut(clean, strlen(clean), BT_STORE_TITLE_MAX);
    while (n > 0 && is_blank(clean[n - 1]))
        n--;
    clean[n] = '\0';
    return clean;
}

/* --- conversations ------------------------------------------------------ */

void bt_store_conversation_release(struct bt_store_conversation *c)
{
    if (!c)
        return;
    free(c->title);
    free(c->coder);
    free(c->model);
    free(c->cwd);
    free(c->native_session_id);
    free(c->native_session_path);
    memset(c, 0, sizeof *c);
}

void bt_st_read_conversation(sqlite3_stmt *q, struct bt_store_conversation *c)
{
    bt_st_col_id(q, 0, c->id);
    c->title = bt_st_col_str0(q, 1);
    c->coder = bt_st_col_str0(q, 2);
    c->model = bt_st_col_str(q, 3);
    c->cwd = bt_st_col_str0(q, 4);
    c->native_session_id = bt_st_col_str(q, 5);
    c->native_session_path = bt_st_col_str(q, 6);
    c->status = (enum bt_store_conv_status)COL_ENUM(q, 7, conv_status_names);
    c->created_ms = sqlite3_column_int64(q, 8);
    c->updated_ms = sqlite3_column_int64(q, 9);
    bt_st_col_id(q, 10, c->last_run);
    c->last_run_state = (enum bt_store_run_state)COL_ENUM(q, 11, run_state_names);
}

int bt_store_conversation_create(struct bt_store *s, const struct bt_store_conversation_new *o,
                                 char id[BT_ID_SIZE])
{
    id[0] = '\0';
    if (!o || !o->coder || !o->cwd)
        return bt_st_fail(s, -EINVAL, "a conversation needs a coder and a directory");
    char new_id[BT_ID_SIZE];
    int rc = bt_id_new(new_id);
    if (rc)
        return bt_st_fail(s, rc, "cannot make an id: %s", strerror(-rc));
    sqlite3_stmt *q = write_stmt(s, ST_CONV_INSERT);
    if (!q)
        return BT_ESTORE;
    char *title = bt_store_make_title(o->title);
    bt_st_bind_text(q, 1, new_id);
    bt_st_bind_text(q, 2, title);
    bt_st_bind_text(q, 3, o->coder);
    bt_st_bind_text(q, 4, o->model);
    bt_st_bind_text(q, 5, o->cwd);
    sqlite3_bind_int64(q, 6, bt_now_ms());
    rc = bt_st_run(s, q, "create conversation");
    free(title);
    if (rc == 0)
        memcpy(id, new_id, BT_ID_SIZE);
    return rc;
}

int bt_store_conversation_get(struct bt_store *s, const char *id, struct bt_store_conversation *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = id ? stmt(s, ST_CONV_GET) : NULL;
    if (!q)
        return id ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "get conversation");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation '%s'", id);
    bt_st_read_conversation(q, out);
    return bt_st_done(q, 0);
}

/* Lower-case text into buf if it can be a prefix of an id; else 0. */
static int prefix_of_id(const char *text, char buf[BT_ID_SIZE])
{
    size_t n = text ? strlen(text) : 0;
    if (n == 0 || n > BT_ID_LEN)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'z')))
            return 0;
    }
    buf[n] = '\0';
    return 1;
}

int bt_store_conversation_resolve(struct bt_store *s, const char *text, char id[BT_ID_SIZE])
{
    char prefix[BT_ID_SIZE];
    id[0] = '\0';
    if (!prefix_of_id(text, prefix))
        return bt_st_fail(s, BT_ENOTFOUND, "not a conversation id");
    sqlite3_stmt *q = stmt(s, ST_CONV_RESOLVE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, prefix);
    int rc = bt_st_step(s, q, "resolve conversation");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation matches '%s'", prefix);
    bt_st_col_id(q, 0, id);
    rc = bt_st_step(s, q, "resolve conversation");
    if (rc == 1) {
        id[0] = '\0';
        return bt_st_done(
            q, bt_st_fail(s, BT_EAMBIGUOUS, "'%s' matches several conversations", prefix));
    }
    if (rc)
        id[0] = '\0';
    return rc;
}

/* 0 if one row changed, else BT_ENOTFOUND naming what. */
static int changed_one(struct bt_store *s, const char *what, const char *id)
{
    return sqlite3_changes(s->db) > 0 ? 0 : bt_st_fail(s, BT_ENOTFOUND, "no %s '%s'", what, id);
}

int bt_store_conversation_set_native(struct bt_store *s, const char *id, const char *session_id,
                                     const char *session_path)
{
    if (!id)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    sqlite3_stmt *q = write_stmt(s, ST_CONV_SET_NATIVE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, session_id);
    bt_st_bind_text(q, 3, session_path);
    int rc = bt_st_run(s, q, "set native session");
    return rc ? rc : changed_one(s, "conversation", id);
}

int bt_store_conversation_set_status(struct bt_store *s, const char *id,
                                     enum bt_store_conv_status status)
{
    if (!id || !VALID(conv_status_names, status))
        return bt_st_fail(s, -EINVAL, "no conversation id or an invalid status");
    sqlite3_stmt *q = write_stmt(s, ST_CONV_SET_STATUS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, conv_status_names[status]);
    int rc = bt_st_run(s, q, "set conversation status");
    return rc ? rc : changed_one(s, "conversation", id);
}

void bt_store_conversation_list_free(struct bt_store_conversation *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bt_store_conversation_release(&v[i]);
    free(v);
}

int bt_store_conversation_list(struct bt_store *s, size_t limit, struct bt_store_conversation **out,
                               size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    sqlite3_stmt *q = stmt(s, ST_CONV_LIST);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, limit == 0 || limit > INT64_MAX ? -1 : (int64_t)limit);
    int rc;
    while ((rc = bt_st_step(s, q, "list conversations")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        bt_st_read_conversation(q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_conversation_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* --- messages ----------------------------------------------------------- */

void bt_store_message_release(struct bt_store_message *m)
{
    if (!m)
        return;
    free(m->text);
    free(m->error_kind);
    free(m->error_text);
    memset(m, 0, sizeof *m);
}

void bt_store_message_list_free(struct bt_store_message *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        bt_store_message_release(&v[i]);
    free(v);
}

/* Set the conversation's updated_ms; BT_ENOTFOUND if there is none. */
static int touch_conversation(struct bt_store *s, const char *conv, int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_CONV_TOUCH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, now);
    int rc = bt_st_run(s, q, "update conversation");
    return rc ? rc : changed_one(s, "conversation", conv);
}

/* Insert a message at the end of its conversation (inside a transaction);
 * a queued one gets its queue number (*queue_no, may be NULL). */
static int insert_message(struct bt_store *s, const struct bt_store_message_new *o, int64_t now,
                          int64_t *id, int64_t *queue_no)
{
    sqlite3_stmt *q = stmt(s, ST_MSG_INSERT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    bt_st_bind_text(q, 2, role_names[o->role]);
    bt_st_bind_text(q, 3, msg_state_names[o->state]);
    bt_st_bind_text(q, 4, o->text ? o->text : "");
    bt_st_bind_text(q, 5, o->run);
    sqlite3_bind_int64(q, 6, now);
    int rc = bt_st_run(s, q, "add message");
    int64_t msg = sqlite3_last_insert_rowid(s->db);
    if (rc == 0 && id)
        *id = msg;
    if (rc == 0 && o->state == BT_STORE_MSG_QUEUED)
        rc = bt_st_queue_number(s, o->conversation, msg, queue_no);
    return rc;
}

int bt_store_message_add(struct bt_store *s, const struct bt_store_message_new *o, int64_t *id)
{
    if (id)
        *id = 0;
    if (!o || !o->conversation || !VALID(role_names, o->role) || !VALID(msg_state_names, o->state))
        return bt_st_fail(s, -EINVAL, "a message needs a conversation, a role and a state");
    int64_t now = bt_now_ms();
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = touch_conversation(s, o->conversation, now);
    if (rc == 0)
        rc = insert_message(s, o, now, id, NULL);
    rc = bt_st_tx_end(s, rc);
    if (rc && id)
        *id = 0;
    return rc;
}

int bt_store_message_update(struct bt_store *s, int64_t id, const struct bt_store_message_update *u)
{
    if (!u || (u->state && !VALID(msg_state_names, u->state)))
        return bt_st_fail(s, -EINVAL, "invalid message update");
    sqlite3_stmt *q = write_stmt(s, ST_MSG_UPDATE);
    if (!q)
        return BT_ESTORE;
    sqlite3_bind_int64(q, 1, id);
    bt_st_bind_text(q, 2, u->state ? msg_state_names[u->state] : NULL);
    bt_st_bind_text(q, 3, u->text);
    bt_st_bind_text(q, 4, u->append);
    bt_st_bind_text(q, 5, u->error_kind);
    bt_st_bind_text(q, 6, u->error_text);
    bt_st_bind_text(q, 7, u->run);
    sqlite3_bind_int64(q, 8, bt_now_ms());
    int rc = bt_st_run(s, q, "update message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "no message %lld", (long long)id);
    return rc;
}

static void read_message(sqlite3_stmt *q, struct bt_store_message *m)
{
    m->id = sqlite3_column_int64(q, 0);
    bt_st_col_id(q, 1, m->conversation);
    m->seq = sqlite3_column_int64(q, 2);
    m->role = (enum bt_store_role)COL_ENUM(q, 3, role_names);
    m->state = (enum bt_store_msg_state)COL_ENUM(q, 4, msg_state_names);
    m->text = bt_st_col_str0(q, 5);
    m->error_kind = bt_st_col_str(q, 6);
    m->error_text = bt_st_col_str(q, 7);
    bt_st_col_id(q, 8, m->run);
    m->created_ms = sqlite3_column_int64(q, 9);
    m->updated_ms = sqlite3_column_int64(q, 10);
    m->queue_no = bt_st_col_i64(q, 11, 0);
}

/* 0 if the conversation exists, BT_ENOTFOUND or BT_ESTORE. */
static int conversation_exists(struct bt_store *s, const char *id)
{
    sqlite3_stmt *q = stmt(s, ST_CONV_EXISTS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "find conversation");
    if (rc == 1)
        return bt_st_done(q, 0);
    return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no conversation '%s'", id);
}

int bt_store_message_list(struct bt_store *s, const char *conversation,
                          struct bt_store_message **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (!conversation)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = conversation_exists(s, conversation);
    sqlite3_stmt *q = rc == 0 ? stmt(s, ST_MSG_LIST) : NULL;
    if (!q)
        return rc ? rc : BT_ESTORE;
    bt_st_bind_text(q, 1, conversation);
    while ((rc = bt_st_step(s, q, "list messages")) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        read_message(q, &(*out)[(*n)++]);
    }
    if (rc) {
        bt_store_message_list_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* --- runs --------------------------------------------------------------- */

void bt_store_run_release(struct bt_store_run *r)
{
    if (!r)
        return;
    free(r->coder);
    free(r->coder_version);
    free(r->model);
    free(r->error_kind);
    free(r->error_text);
    free(r->stderr_tail);
    free(r->native_session_id);
    free(r->prompt);
    memset(r, 0, sizeof *r);
}

int bt_st_query_int(struct bt_store *s, sqlite3_stmt *q, const char *what, int64_t *v)
{
    int rc = bt_st_step(s, q, what);
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ESTORE, "%s: no result", what);
    *v = sqlite3_column_int64(q, 0);
    return bt_st_done(q, 0);
}

int bt_st_check_not_running(struct bt_store *s, const char *conv)
{
    sqlite3_stmt *q = stmt(s, ST_RUN_BUSY);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc = bt_st_step(s, q, "find running run");
    if (rc != 1)
        return rc;
    rc = bt_st_fail(s, BT_EBUSY, "conversation '%s' already has a running run '%s'", conv,
                    (const char *)sqlite3_column_text(q, 0));
    return bt_st_done(q, rc);
}

static int insert_run(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                      const char *prompt, int64_t now)
{
    int64_t turn = o->turn;
    uint64_t start = 0;
    sqlite3_stmt *q = stmt(s, ST_RUN_NEXT_TURN);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    int rc = turn > 0 ? bt_st_done(q, 0) : bt_st_query_int(s, q, "next turn", &turn);
    q = rc == 0 ? stmt(s, ST_RUN_INSERT) : NULL;
    if (!q)
        return rc ? rc : BT_ESTORE;
    bt_store_pid_start((int)getpid(), &start);
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, o->conversation);
    sqlite3_bind_int64(q, 3, turn);
    bt_st_bind_text(q, 4, o->coder);
    bt_st_bind_text(q, 5, o->model);
    sqlite3_bind_int64(q, 6, (int64_t)getpid());
    sqlite3_bind_int64(q, 7, (int64_t)start);
    sqlite3_bind_int64(q, 8, now);
    bt_st_bind_text(q, 9, prompt);
    return bt_st_run(s, q, "create run");
}

/* Link the user message to the run; a queued one becomes complete. */
static int link_user_message(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                             int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_MSG_LINK_USER);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, o->conversation);
    bt_st_bind_text(q, 2, id);
    sqlite3_bind_int64(q, 3, now);
    sqlite3_bind_int64(q, 4, o->user_message);
    int rc = bt_st_run(s, q, "link user message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = bt_st_fail(s, BT_ENOTFOUND, "no user message %lld in conversation '%s'",
                        (long long)o->user_message, o->conversation);
    return rc;
}

/* BT_EBUSY unless run is the conversation's newest run. */
static int check_last_run(struct bt_store *s, const char *conv, const char *run)
{
    sqlite3_stmt *q = stmt(s, ST_RUN_LAST_ID);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc = bt_st_step(s, q, "find last run");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "conversation '%s' has no run", conv);
    int same = strcmp((const char *)sqlite3_column_text(q, 0), run) == 0;
    return bt_st_done(q, same ? 0 : bt_st_fail(s, BT_EBUSY, "a newer turn started meanwhile"));
}

/* The conversation's queued user messages joined in order, each followed
 * by a blank line (so the next part starts a paragraph). */
static int queued_text(struct bt_store *s, const char *conv, struct bt_buf *b, int *n,
                       struct bt_strv *options)
{
    sqlite3_stmt *q = stmt(s, ST_QUEUED_LIST);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    int rc;
    *n = 0;
    while ((rc = bt_st_step(s, q, "list queued messages")) == 1) {
        bt_buf_add(b, sqlite3_column_text(q, 0), (size_t)sqlite3_column_bytes(q, 0));
        bt_buf_adds(b, BT_STORE_QUEUE_JOIN);
        if (options) {
            const unsigned char *opt = sqlite3_column_text(q, 1);
            bt_strv_push(options, opt ? (const char *)opt : "");
        }
        (*n)++;
    }
    return rc;
}

/* The prompt of the new run into b: queued messages, then user_text, or
 * o->prompt. BT_ENOTFOUND when there is nothing to send. */
static int build_prompt(struct bt_store *s, const struct bt_store_run_new *o, struct bt_buf *b,
                        int *n_queued, struct bt_strv *options)
{
    *n_queued = 0;
    int rc = o->take_queued ? queued_text(s, o->conversation, b, n_queued, options) : 0;
    if (rc)
        return rc;
    if (o->user_text)
        bt_buf_adds(b, o->user_text);
    else if (*n_queued)
        b->data[b->len -= strlen(BT_STORE_QUEUE_JOIN)] = '\0';
    else if (o->prompt)
        bt_buf_adds(b, o->prompt);
    else if (o->take_queued && !o->user_message)
        return bt_st_fail(s, BT_ENOTFOUND, "nothing is queued in conversation '%s'",
                          o->conversation);
    if (o->max_prompt && b->len > o->max_prompt)
        return bt_st_fail(s, BT_ETOOBIG, "the prompt would be %zu bytes, more than %zu", b->len,
                          o->max_prompt);
    return 0;
}

/* Queue o->user_text (inside the transaction) when o asks for it. */
static int queue_prompt(struct bt_store *s, const struct bt_store_run_new *o, int64_t now,
                        struct bt_store_submitted *out)
{
    struct bt_buf b = BT_BUF_INIT;
    int n = 0, rc = o->max_prompt ? queued_text(s, o->conversation, &b, &n, NULL) : 0;
    if (rc == 0 && o->max_prompt && b.len + strlen(o->user_text) > o->max_prompt)
        rc =
            bt_st_fail(s, BT_ETOOBIG, "what is queued would be more than %zu bytes", o->max_prompt);
    bt_buf_release(&b);
    struct bt_store_message_new u = {.conversation = o->conversation,
                                     .role = BT_STORE_ROLE_USER,
                                     .state = BT_STORE_MSG_QUEUED,
                                     .text = o->user_text};
    rc = rc ? rc : insert_message(s, &u, now, &out->queued, &out->queue_no);
    if (rc || !o->options)
        return rc;
    sqlite3_stmt *q = stmt(s, ST_MSG_SET_OPTIONS);
    if (!q) {
        rc = BT_ESTORE;
    } else {
        sqlite3_bind_int64(q, 1, out->queued);
        bt_st_bind_text(q, 2, o->options);
        rc = bt_st_run(s, q, "store the message's settings");
    }
    return rc;
}

/* Link every queued user message of the conversation to run id. */
static int take_queued(struct bt_store *s, const char *conv, const char *id, int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_QUEUED_LINK);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    bt_st_bind_text(q, 2, id);
    sqlite3_bind_int64(q, 3, now);
    return bt_st_run(s, q, "take queued messages");
}

/* Insert the run, its new user message and its assistant message. */
static int insert_turn(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                       int64_t now, struct bt_store_submitted *out)
{
    int n_queued = 0;
    struct bt_buf prompt = BT_BUF_INIT;
    int rc = build_prompt(s, o, &prompt, &n_queued, &out->options);
    if (rc == 0)
        rc = insert_run(s, o, id, prompt.len ? prompt.data : NULL, now);
    if (rc == 0 && n_queued)
        rc = take_queued(s, o->conversation, id, now);
    if (rc == 0 && o->user_text) {
        struct bt_store_message_new u = {.conversation = o->conversation,
                                         .role = BT_STORE_ROLE_USER,
                                         .state = BT_STORE_MSG_COMPLETE,
                                         .text = o->user_text,
                                         .run = id};
        rc = insert_message(s, &u, now, NULL, NULL);
    }
    if (rc == 0) {
        struct bt_store_message_new m = {.conversation = o->conversation,
                                         .role = BT_STORE_ROLE_ASSISTANT,
                                         .state = BT_STORE_MSG_STREAMING,
                                         .run = id};
        rc = insert_message(s, &m, now, &out->message, NULL);
    }
    if (rc == 0 && o->user_message > 0)
        rc = link_user_message(s, o, id, now);
    if (rc == 0 && prompt.len)
        out->prompt = bt_buf_detach(&prompt, NULL);
    bt_buf_release(&prompt);
    return rc;
}

/* The body of bt_store_run_submit, inside its transaction. */
static int submit(struct bt_store *s, const struct bt_store_run_new *o, const char *id,
                  struct bt_store_submitted *out)
{
    int64_t now = bt_now_ms();
    int rc = touch_conversation(s, o->conversation, now);
    if (rc == 0)
        rc = bt_st_check_owner(s, o->conversation, o->force);
    if (rc == 0)
        rc = bt_st_check_not_running(s, o->conversation);
    out->busy = rc == BT_EBUSY;
    if (rc == 0 && o->after_run)
        rc = check_last_run(s, o->conversation, o->after_run);
    if ((out->busy && o->queue != BT_STORE_QUEUE_NEVER) ||
        (rc == 0 && o->queue == BT_STORE_QUEUE_ALWAYS))
        return queue_prompt(s, o, now, out);
    return rc ? rc : insert_turn(s, o, id, now, out);
}

void bt_store_submitted_release(struct bt_store_submitted *out)
{
    if (!out)
        return;
    free(out->prompt);
    bt_strv_release(&out->options);
    memset(out, 0, sizeof *out);
}

int bt_store_run_submit(struct bt_store *s, const struct bt_store_run_new *o,
                        struct bt_store_submitted *out)
{
    char new_id[BT_ID_SIZE];
    memset(out, 0, sizeof *out);
    bt_strv_init(&out->options);
    if (!o || !o->conversation || !o->coder || o->turn < 0 || (o->user_text && o->user_message) ||
        (o->queue && !o->user_text))
        return bt_st_fail(s, -EINVAL, "a run needs a conversation, a coder and at most one prompt");
    int rc = bt_id_new(new_id);
    if (rc)
        return bt_st_fail(s, rc, "cannot make an id: %s", strerror(-rc));
    rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = bt_st_tx_end(s, submit(s, o, new_id, out));
    if (rc == 0 && !out->queued)
        memcpy(out->run, new_id, BT_ID_SIZE);
    if (rc) {
        int busy = out->busy;
        bt_store_submitted_release(out);
        out->busy = busy;
    }
    return rc;
}

int bt_store_run_create(struct bt_store *s, const struct bt_store_run_new *o, char id[BT_ID_SIZE],
                        int64_t *message)
{
    struct bt_store_submitted out;
    id[0] = '\0';
    if (message)
        *message = 0;
    int rc = bt_store_run_submit(s, o, &out);
    if (rc == 0) {
        memcpy(id, out.run, BT_ID_SIZE);
        if (message)
            *message = out.message;
    }
    bt_store_submitted_release(&out);
    return rc;
}

int bt_store_run_cancel(struct bt_store *s, const char *conversation, struct bt_store_run *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = conversation ? write_stmt(s, ST_RUN_CANCEL) : NULL;
    if (!q)
        return conversation ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, conversation);
    sqlite3_bind_int64(q, 2, bt_now_ms());
    int rc = bt_st_run(s, q, "request cancel");
    if (rc)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return bt_st_fail(s, BT_ENOTFOUND, "no turn is running in conversation '%s'", conversation);
    rc = bt_store_run_last(s, conversation, out);
    if (rc == 0 && out->state != BT_STORE_RUN_RUNNING) { /* it ended meanwhile */
        bt_store_run_release(out);
        rc = bt_st_fail(s, BT_ENOTFOUND, "the turn ended meanwhile");
    }
    return rc;
}

int bt_store_run_cancel_requested(struct bt_store *s, const char *run, int *requested)
{
    *requested = 0;
    sqlite3_stmt *q = run ? stmt(s, ST_RUN_CANCELLED) : NULL;
    if (!q)
        return run ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no run id");
    bt_st_bind_text(q, 1, run);
    int rc = bt_st_step(s, q, "read cancel request");
    if (rc != 1)
        return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", run);
    *requested = sqlite3_column_int(q, 0) != 0;
    return bt_st_done(q, 0);
}

int bt_store_queued_count(struct bt_store *s, const char *conversation, int64_t *n)
{
    sqlite3_stmt *q = conversation ? stmt(s, ST_QUEUED_COUNT) : NULL;
    *n = 0;
    if (!q)
        return conversation ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, conversation);
    return bt_st_query_int(s, q, "count queued messages", n);
}

/* Why a discard removed nothing: BT_ENOTFOUND or -EALREADY. */
static int discard_miss(struct bt_store *s, const char *conv, int64_t msg)
{
    sqlite3_stmt *q = stmt(s, ST_MSG_STATE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, conv);
    sqlite3_bind_int64(q, 2, msg);
    int rc = bt_st_step(s, q, "find message");
    if (rc != 1)
        return rc ? rc
                  : bt_st_fail(s, BT_ENOTFOUND, "the conversation has no user message %lld",
                               (long long)msg);
    const char *run = (const char *)sqlite3_column_text(q, 1);
    rc = bt_st_fail(s, -EALREADY, "message %lld is not queued: it was sent%s%s", (long long)msg,
                    run ? " in run " : "", run ? run : "");
    return bt_st_done(q, rc);
}

int bt_store_message_discard(struct bt_store *s, const char *conversation, int64_t msg)
{
    sqlite3_stmt *q = conversation ? write_stmt(s, ST_MSG_DISCARD) : NULL;
    if (!q)
        return conversation ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no conversation id");
    bt_st_bind_text(q, 1, conversation);
    sqlite3_bind_int64(q, 2, msg);
    int rc = bt_st_run(s, q, "discard message");
    if (rc == 0 && sqlite3_changes(s->db) == 0)
        rc = discard_miss(s, conversation, msg);
    return rc;
}

int bt_store_run_started(struct bt_store *s, const char *id, int pid, int pgid,
                         const char *coder_version)
{
    uint64_t start = 0;
    if (!id || pid <= 0 || pgid <= 0)
        return bt_st_fail(s, -EINVAL, "a started run needs an id, a pid and a process group");
    /* inside an open event batch, so the first events and the process group
     * commit together: a crash can never leave stored events of a run whose
     * group nobody can find */
    sqlite3_stmt *q = s->batch ? stmt(s, ST_RUN_STARTED) : write_stmt(s, ST_RUN_STARTED);
    if (!q)
        return BT_ESTORE;
    bt_store_pid_start(pid, &start);
    bt_st_bind_text(q, 1, id);
    sqlite3_bind_int64(q, 2, pid);
    sqlite3_bind_int64(q, 3, pgid);
    bind_known(q, 4, start ? (int64_t)start : -1);
    bt_st_bind_text(q, 5, coder_version);
    int rc = bt_st_run(s, q, "record run process");
    return rc ? rc : changed_one(s, "run", id);
}

/* Bind the usage columns ?9..?15 of RUN_FINISH. */
static void bind_usage(sqlite3_stmt *q, const struct bt_usage *u)
{
    struct bt_usage none;
    bt_usage_init(&none);
    if (!u)
        u = &none;
    bind_known(q, 9, u->input_tokens);
    bind_known(q, 10, u->cached_input_tokens);
    bind_known(q, 11, u->output_tokens);
    bind_known(q, 12, u->reasoning_tokens);
    bind_known(q, 13, u->context_tokens);
    bind_known(q, 14, u->context_window);
    if (u->cost_usd >= 0)
        sqlite3_bind_double(q, 15, u->cost_usd);
}

/* Bind the last BT_STORE_STDERR_TAIL_MAX bytes of the tail, or NULL. */
static void bind_tail(sqlite3_stmt *q, int i, const char *tail, size_t len)
{
    if (!tail)
        return;
    if (len > BT_STORE_STDERR_TAIL_MAX) {
        tail += len - BT_STORE_STDERR_TAIL_MAX;
        len = BT_STORE_STDERR_TAIL_MAX;
    }
    sqlite3_bind_blob(q, i, tail, (int)len, SQLITE_STATIC);
}

/* Why nothing changed: BT_ENOTFOUND or -EALREADY. */
static int finish_miss(struct bt_store *s, const char *id)
{
    sqlite3_stmt *q = stmt(s, ST_RUN_STATE);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    int rc = bt_st_step(s, q, "find run");
    if (rc == 1)
        return bt_st_done(q, bt_st_fail(s, -EALREADY, "run '%s' has already finished (%s)", id,
                                        (const char *)sqlite3_column_text(q, 0)));
    return rc ? rc : bt_st_fail(s, BT_ENOTFOUND, "no run '%s'", id);
}

static int update_run_end(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                          int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_RUN_FINISH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, run_state_names[e->state]);
    bind_known(q, 3, e->exit_code == BT_UNKNOWN ? -1 : e->exit_code);
    sqlite3_bind_int64(q, 4, e->exit_signal);
    bt_st_bind_text(q, 5, e->error_kind);
    bt_st_bind_text(q, 6, e->error_text);
    bind_tail(q, 7, e->stderr_tail, e->stderr_tail_len);
    bt_st_bind_text(q, 8, e->native_session_id);
    bind_usage(q, e->usage);
    sqlite3_bind_int64(q, 16, now);
    sqlite3_bind_int(q, 17, e->stop_stage);
    int rc = bt_st_run(s, q, "finish run");
    return rc || sqlite3_changes(s->db) > 0 ? rc : finish_miss(s, id);
}

/* The message state for a run's end state. */
static enum bt_store_msg_state message_state_for(enum bt_store_run_state st)
{
    switch (st) {
    case BT_STORE_RUN_COMPLETED: return BT_STORE_MSG_COMPLETE;
    case BT_STORE_RUN_FAILED: return BT_STORE_MSG_FAILED;
    case BT_STORE_RUN_CANCELLED: return BT_STORE_MSG_CANCELLED;
    default: return BT_STORE_MSG_INTERRUPTED;
    }
}

static int finish_message(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                          int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_MSG_FINISH);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    bt_st_bind_text(q, 2, msg_state_names[message_state_for(e->state)]);
    bt_st_bind_text(q, 3, e->final_text);
    bt_st_bind_text(q, 4, e->error_kind);
    bt_st_bind_text(q, 5, e->error_text);
    sqlite3_bind_int64(q, 6, now);
    return bt_st_run(s, q, "finish message");
}

static int touch_run_conversation(struct bt_store *s, const char *id, int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_RUN_TOUCH_CONV);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    sqlite3_bind_int64(q, 2, now);
    return bt_st_run(s, q, "update conversation");
}

int bt_st_finish_run(struct bt_store *s, const char *id, const struct bt_store_run_end *e,
                     int64_t now)
{
    int rc = update_run_end(s, id, e, now);
    if (rc == 0)
        rc = finish_message(s, id, e, now);
    return rc ? rc : touch_run_conversation(s, id, now);
}

int bt_store_run_finish(struct bt_store *s, const char *id, const struct bt_store_run_end *e)
{
    if (!id || !e || !VALID(run_state_names, e->state) || e->state == BT_STORE_RUN_RUNNING)
        return bt_st_fail(s, -EINVAL, "a finished run needs an id and an end state");
    int rc = bt_st_tx_begin(s);
    return rc ? rc : bt_st_tx_end(s, bt_st_finish_run(s, id, e, bt_now_ms()));
}

/* Copy a blob column into *p (+ NUL) and its length into *len. */
static void col_blob(sqlite3_stmt *q, int i, char **p, size_t *len)
{
    const void *b = sqlite3_column_blob(q, i);
    *len = (size_t)sqlite3_column_bytes(q, i);
    *p = NULL;
    if (sqlite3_column_type(q, i) == SQLITE_NULL)
        return;
    *p = bt_xmalloc(*len + 1);
    if (*len)
        memcpy(*p, b, *len);
    (*p)[*len] = '\0';
}

static void read_run_usage(sqlite3_stmt *q, struct bt_usage *u)
{
    u->input_tokens = bt_st_col_i64(q, 18, BT_UNKNOWN);
    u->cached_input_tokens = bt_st_col_i64(q, 19, BT_UNKNOWN);
    u->output_tokens = bt_st_col_i64(q, 20, BT_UNKNOWN);
    u->reasoning_tokens = bt_st_col_i64(q, 21, BT_UNKNOWN);
    u->context_tokens = bt_st_col_i64(q, 22, BT_UNKNOWN);
    u->context_window = bt_st_col_i64(q, 23, BT_UNKNOWN);
    u->cost_usd = sqlite3_column_type(q, 24) == SQLITE_NULL ? -1.0 : sqlite3_column_double(q, 24);
}

/* Fill r from a RUN_SELECT row. */
static void read_run(sqlite3_stmt *q, struct bt_store_run *r)
{
    bt_st_col_id(q, 0, r->id);
    bt_st_col_id(q, 1, r->conversation);
    r->turn = sqlite3_column_int64(q, 2);
    r->coder = bt_st_col_str0(q, 3);
    r->coder_version = bt_st_col_str(q, 4);
    r->model = bt_st_col_str(q, 5);
    r->state = (enum bt_store_run_state)COL_ENUM(q, 6, run_state_names);
    r->pid = (int)bt_st_col_i64(q, 7, 0);
    r->pgid = (int)bt_st_col_i64(q, 8, 0);
    r->child_start = (uint64_t)bt_st_col_i64(q, 9, 0);
    r->owner_pid = (int)bt_st_col_i64(q, 10, 0);
    r->owner_start = (uint64_t)bt_st_col_i64(q, 11, 0);
    r->exit_code = bt_st_col_i64(q, 12, BT_UNKNOWN);
    r->exit_signal = (int)bt_st_col_i64(q, 13, 0);
    r->error_kind = bt_st_col_str(q, 14);
    r->error_text = bt_st_col_str(q, 15);
    col_blob(q, 16, &r->stderr_tail, &r->stderr_tail_len);
    r->native_session_id = bt_st_col_str(q, 17);
    read_run_usage(q, &r->usage);
    r->message = bt_st_col_i64(q, 25, 0);
    r->started_ms = sqlite3_column_int64(q, 26);
    r->ended_ms = bt_st_col_i64(q, 27, 0);
    r->prompt = bt_st_col_str(q, 28);
    r->cancel_ms = bt_st_col_i64(q, 29, 0);
    r->stop_stage = (int)bt_st_col_i64(q, 30, -1);
}

/* Run a RUN_SELECT statement with ?1 = key and read its row. */
static int get_run(struct bt_store *s, enum stmt_id which, const char *key,
                   struct bt_store_run *out)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *q = key ? stmt(s, which) : NULL;
    if (!q)
        return key ? BT_ESTORE : bt_st_fail(s, -EINVAL, "no id given");
    bt_st_bind_text(q, 1, key);
    int rc = bt_st_step(s, q, "get run");
    if (rc != 1)
        return rc ? rc
                  : bt_st_fail(s, BT_ENOTFOUND,
                               which == ST_RUN_GET ? "no run '%s'" : "conversation '%s' has no run",
                               key);
    read_run(q, out);
    return bt_st_done(q, 0);
}

int bt_store_run_get(struct bt_store *s, const char *id, struct bt_store_run *out)
{
    return get_run(s, ST_RUN_GET, id, out);
}

int bt_store_run_last(struct bt_store *s, const char *conversation, struct bt_store_run *out)
{
    return get_run(s, ST_RUN_LAST, conversation, out);
}

/* --- events ------------------------------------------------------------- */

int bt_st_insert_event(struct bt_store *s, const struct bt_store_event *ev)
{
    size_t len = ev->len;
    if (len > 0 && ev->data[len - 1] == '\n')
        len--;
    if (len > INT32_MAX)
        return bt_st_fail(s, BT_ETOOBIG, "event %lld of run '%s' is too large", (long long)ev->seq,
                          ev->run);
    sqlite3_stmt *q = stmt(s, ST_EVENT_INSERT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, ev->run);
    sqlite3_bind_int64(q, 2, ev->seq);
    bt_st_bind_text(q, 3, ev->type);
    sqlite3_bind_int64(q, 4, ev->ts_ms);
    sqlite3_bind_text(q, 5, len ? ev->data : "", (int)len, SQLITE_STATIC);
    return bt_st_run(s, q, "append event");
}

int bt_store_event_append(struct bt_store *s, const struct bt_store_event *ev)
{
    if (!ev || !ev->run || !ev->type || (!ev->data && ev->len) || ev->seq < 1)
        return bt_st_fail(s, -EINVAL, "an event needs a run, a seq >= 1, a type and data");
    if (!s->batch) {
        sqlite3_stmt *q = stmt(s, ST_BEGIN);
        int rc = q ? bt_st_run(s, q, "begin events") : BT_ESTORE;
        if (rc)
            return rc;
        s->batch = 1;
    }
    int rc = bt_st_insert_event(s, ev);
    if (rc && sqlite3_get_autocommit(s->db)) {
        s->batch = 0; /* SQLite rolled the whole batch back */
        bt_buf_adds(&s->err, " (the batch of events was lost)");
    }
    return rc;
}

static void read_event(sqlite3_stmt *q, struct bt_store_event *ev)
{
    ev->run = (const char *)sqlite3_column_text(q, 0);
    ev->seq = sqlite3_column_int64(q, 1);
    ev->type = (const char *)sqlite3_column_text(q, 2);
    ev->ts_ms = sqlite3_column_int64(q, 3);
    ev->data = (const char *)sqlite3_column_text(q, 4);
    ev->len = (size_t)sqlite3_column_bytes(q, 4);
    if (!ev->data)
        ev->data = "";
}

int bt_store_event_each(struct bt_store *s, const char *run, int64_t from_seq, bt_store_event_fn fn,
                        void *data)
{
    sqlite3_stmt *q = NULL;
    if (!run || !fn)
        return bt_st_fail(s, -EINVAL, "no run or callback");
    if (sqlite3_prepare_v2(s->db, EVENT_SELECT, -1, &q, NULL) != SQLITE_OK)
        return bt_st_db_fail(s, "prepare");
    bt_st_bind_text(q, 1, run);
    sqlite3_bind_int64(q, 2, from_seq);
    int rc, stop = 0;
    while (stop == 0 && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct bt_store_event ev;
        read_event(q, &ev);
        stop = fn(data, &ev);
    }
    if (stop == 0 && rc != SQLITE_DONE)
        stop = bt_st_db_fail(s, "read events");
    sqlite3_finalize(q);
    return stop;
}

/* --- recovery ----------------------------------------------------------- */

/* A running run found by bt_store_recover. */
struct candidate {
    char run[BT_ID_SIZE];          /* the run */
    char conversation[BT_ID_SIZE]; /* its conversation */
    int pgid;                      /* its coder's group, 0 if never started */
    uint64_t child_start;          /* leader's start time, 0 unknown */
    int64_t started_ms;            /* for the turn's duration */
    int cancelled;                 /* a cancel was requested: it ends cancelled */
};

/* Collect the running runs whose owner is dead. */
static int dead_runs(struct bt_store *s, struct candidate **out, size_t *n)
{
    size_t cap = 0;
    sqlite3_stmt *q = stmt(s, ST_RECOVER_LIST);
    if (!q)
        return BT_ESTORE;
    int rc;
    while ((rc = bt_st_step(s, q, "find running runs")) == 1) {
        if (!bt_store_owner_gone((int)bt_st_col_i64(q, 2, 0), (uint64_t)bt_st_col_i64(q, 3, 0)))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        struct candidate *c = &(*out)[(*n)++];
        bt_st_col_id(q, 0, c->run);
        bt_st_col_id(q, 1, c->conversation);
        c->pgid = (int)bt_st_col_i64(q, 4, 0);
        c->child_start = (uint64_t)bt_st_col_i64(q, 5, 0);
        c->started_ms = sqlite3_column_int64(q, 6);
        c->cancelled = sqlite3_column_int(q, 7) != 0;
    }
    return rc;
}

/* The last event's seq (0 if none) and whether it is turn.completed. */
static int last_event(struct bt_store *s, const char *run, int64_t *seq, int *completed)
{
    sqlite3_stmt *q = stmt(s, ST_EVENT_LAST);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    *seq = 0;
    *completed = 0;
    int rc = bt_st_step(s, q, "find last event");
    if (rc != 1)
        return rc;
    *seq = sqlite3_column_int64(q, 0);
    const char *type = (const char *)sqlite3_column_text(q, 1);
    *completed = type && strcmp(type, bt_event_type_name(BT_EVENT_TURN_COMPLETED)) == 0;
    return bt_st_done(q, 0);
}

/* The run's assistant text so far (caller frees). */
static int streamed_text(struct bt_store *s, const char *run, char **text)
{
    *text = NULL;
    sqlite3_stmt *q = stmt(s, ST_MSG_RUN_TEXT);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, run);
    int rc = bt_st_step(s, q, "read message");
    if (rc == 1)
        *text = bt_st_col_str(q, 0);
    return rc == 1 ? bt_st_done(q, 0) : rc;
}

/* Append turn.completed {status: interrupted} unless the run has one last. */
static int append_interrupted(struct bt_store *s, const struct candidate *c, int64_t now)
{
    int64_t seq;
    int completed;
    char *text = NULL;
    int rc = last_event(s, c->run, &seq, &completed);
    if (rc || completed)
        return rc;
    rc = streamed_text(s, c->run, &text);
    struct bt_event ev;
    bt_event_init(&ev, BT_EVENT_TURN_COMPLETED);
    ev.seq = seq + 1;
    ev.run = c->run;
    ev.conversation = c->conversation;
    ev.ts_ms = now;
    ev.status = c->cancelled ? BT_TURN_CANCELLED : BT_TURN_INTERRUPTED;
    ev.message = c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT;
    ev.final_text = text;
    ev.duration_ms = now - c->started_ms;
    ev.exit_code = BT_UNKNOWN;
    ev.exit_signal = 0;
    struct bt_buf json = BT_BUF_INIT;
    bt_event_to_json(&ev, &json);
    struct bt_store_event row = {.run = c->run,
                                 .seq = ev.seq,
                                 .type = bt_event_type_name(ev.type),
                                 .ts_ms = now,
                                 .data = json.data,
                                 .len = json.len};
    if (rc == 0)
        rc = bt_st_insert_event(s, &row);
    bt_buf_release(&json);
    free(text);
    return rc;
}

/* Mark c's run interrupted (cancelled if a cancel was requested). */
static int recover_run(struct bt_store *s, const struct candidate *c, int64_t now)
{
    sqlite3_stmt *q = stmt(s, ST_RECOVER_RUN);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, c->run);
    sqlite3_bind_int64(q, 2, now);
    bt_st_bind_text(q, 3, c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT);
    bt_st_bind_text(q, 4, c->cancelled ? "cancelled" : "interrupted");
    return bt_st_run(s, q, "mark run interrupted");
}

static int add_to_answer(void *data, const struct bt_store_event *ev)
{
    if (strcmp(ev->type, "item.delta") == 0 || strcmp(ev->type, "item.completed") == 0)
        bt_answer_add_json(data, ev->data, ev->len);
    return 0;
}

/* Mark the run's streaming answer interrupted, with the text rebuilt from
 * its stored events (the message itself is only written at the end). */
static int interrupt_message(struct bt_store *s, const struct candidate *c, int64_t now)
{
    const char *run = c->run;
    struct bt_answer a;
    bt_answer_init(&a);
    int rc = bt_store_event_each(s, run, 1, add_to_answer, &a);
    char *text = bt_answer_text(&a);
    bt_answer_release(&a);
    sqlite3_stmt *q = rc ? NULL : stmt(s, ST_RECOVER_MSG);
    if (q) {
        bt_st_bind_text(q, 1, run);
        sqlite3_bind_int64(q, 2, now);
        bt_st_bind_text(q, 3, c->cancelled ? RECOVER_CANCEL_TEXT : RECOVER_TEXT);
        bt_st_bind_text(q, 4, text);
        bt_st_bind_text(q, 5, c->cancelled ? "cancelled" : "interrupted");
        rc = bt_st_run(s, q, "mark message interrupted");
    } else if (!rc) {
        rc = BT_ESTORE;
    }
    free(text);
    return rc;
}

/* Mark one run interrupted; *marked is 0 if someone finished it first. */
static int interrupt_run(struct bt_store *s, const struct candidate *c, int64_t now, int *marked)
{
    int rc = recover_run(s, c, now);
    *marked = rc == 0 && sqlite3_changes(s->db) > 0;
    if (rc || !*marked)
        return rc;
    rc = interrupt_message(s, c, now);
    return rc ? rc : append_interrupted(s, c, now);
}

/* Mark the candidates and collect orphans, inside a transaction. */
static int interrupt_all(struct bt_store *s, const struct candidate *c, size_t n, int *count,
                         struct bt_store_orphan *orphans, size_t *n_orphans)
{
    int64_t now = bt_now_ms();
    for (size_t i = 0; i < n; i++) {
        int marked = 0, rc = interrupt_run(s, &c[i], now, &marked);
        if (rc)
            return rc;
        *count += marked;
        /* a run whose group was never recorded (killed between the coder's
         * fork and the first commit) is returned with pgid 0: its
         * processes are found by the tag in their environment */
        if (!marked || (c[i].pgid > 0 && !group_may_live(c[i].pgid)))
            continue;
        struct bt_store_orphan *o = &orphans[(*n_orphans)++];
        memcpy(o->run, c[i].run, BT_ID_SIZE);
        o->pgid = c[i].pgid;
        o->child_start = c[i].child_start;
    }
    return 0;
}

int bt_store_recover(struct bt_store *s, int *count, struct bt_store_orphan **orphans,
                     size_t *n_orphans)
{
    struct candidate *c = NULL;
    size_t n = 0;
    int marked = 0;
    *orphans = NULL;
    *n_orphans = 0;
    if (count)
        *count = 0;
    int rc = bt_store_flush(s);
    if (rc == 0)
        rc = dead_runs(s, &c, &n);
    if (rc || n == 0) {
        free(c);
        return rc;
    }
    *orphans = bt_xcalloc(n, sizeof **orphans);
    rc = bt_st_tx_begin(s);
    if (rc == 0)
        rc = bt_st_tx_end(s, interrupt_all(s, c, n, &marked, *orphans, n_orphans));
    free(c);
    if (rc || *n_orphans == 0) {
        free(*orphans);
        *orphans = NULL;
        *n_orphans = 0;
    }
    if (count && rc == 0)
        *count = marked;
    return rc;
}
