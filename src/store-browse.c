/* SPDX-License-Identifier: MIT */
/*
 * store-browse: full-text search over conversations and the removal of a
 * conversation (store.h, "search and removal"; docs/store.md, "Search" and
 * "Removal"). The search reads the FTS5 tables messages_fts and titles_fts
 * that schema 2 keeps in step with messages and conversations by triggers;
 * the text a person typed is turned into FTS5 strings here and nowhere else,
 * so no user text is ever parsed as query syntax.
 */
#include "store.h"
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* --- SQL ---------------------------------------------------------------- */

/* The conversations that match ?1 (an FTS5 query), each with its
 * best-ranked matching message (0 when only the title matched: its score
 * 1e308 is above any bm25 rank, which FTS5 keeps negative), newest activity
 * first, at most ?2 (-1 = all). The columns are those of store-conv.c's
 * BT_ST_CONV_SELECT, then the message id. min() picks the bare column id from the
 * row with the smallest score (SQLite's documented min/max rule). */
static const char SQL_SEARCH[] =
    "WITH hit(conv, msg, score) AS ("
    " SELECT m.conversation, m.id, messages_fts.rank FROM messages_fts"
    " JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?1"
    " UNION ALL SELECT c.id, 0, 1e308 FROM titles_fts"
    " JOIN conversations c ON c.rowid = titles_fts.rowid WHERE titles_fts MATCH ?1),"
    " best(conv, msg, score) AS (SELECT conv, msg, min(score) FROM hit GROUP BY conv),"
    " top(conv, msg, updated) AS (SELECT b.conv, b.msg, c.updated_ms FROM best b"
    " JOIN conversations c ON c.id = b.conv ORDER BY c.updated_ms DESC, c.id DESC LIMIT ?2)"
    " SELECT c.id, c.title, c.coder, c.model, c.cwd, c.native_session_id,"
    " c.native_session_path, c.status, c.created_ms, c.updated_ms, r.id, "
    "r.state, " BT_ST_WORKTREE_COLUMNS ", t.msg"
    " FROM top t JOIN conversations c ON c.id = t.conv LEFT JOIN runs r ON r.rowid ="
    " (SELECT r2.rowid FROM runs r2 WHERE r2.conversation = c.id"
    " ORDER BY r2.started_ms DESC, r2.rowid DESC LIMIT 1)"
    " ORDER BY c.updated_ms DESC, c.id DESC";

/* The excerpt of message ?2 around the matches of ?1 (16 tokens at most). */
static const char SQL_SNIPPET[] = "SELECT snippet(messages_fts, 0, '', '', '…', 16)"
                                  " FROM messages_fts WHERE messages_fts MATCH ?1 AND rowid = ?2";

static const char SQL_RUN_IDS[] = "SELECT id FROM runs WHERE conversation = ?1"
                                  " ORDER BY started_ms, rowid";
static const char SQL_COUNT_MESSAGES[] = "SELECT count(*) FROM messages WHERE conversation = ?1";
static const char SQL_COUNT_EVENTS[] = "SELECT count(*) FROM events WHERE run IN"
                                       " (SELECT id FROM runs WHERE conversation = ?1)";
/* messages and runs go by ON DELETE CASCADE, events with their runs; the
 * FTS triggers drop the title and the messages from the indexes. */
static const char SQL_DELETE[] = "DELETE FROM conversations WHERE id = ?1";

/* --- search ------------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* 1 if the word w[0..n) can hold a token: an ASCII letter or digit, or a
 * byte of a non-ASCII character (which the unicode61 tokenizer may take as
 * a letter). A word of ASCII punctuation only would be an empty FTS5
 * phrase, which matches nothing and would make the whole AND fail. */
static int has_token(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        if (c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
            return 1;
    }
    return 0;
}

/* The FTS5 query for text: each white-space separated word that can hold a
 * token as an FTS5 string ("..." with '"' doubled), joined by AND. "" when
 * no word is left. Caller frees. */
static char *fts_query(const char *text)
{
    struct bt_buf q = BT_BUF_INIT;
    const char *p = text;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        size_t n = 0;
        while (p[n] && !is_space(p[n]))
            n++;
        if (has_token(p, n)) {
            bt_buf_adds(&q, q.len ? " AND \"" : "\"");
            for (size_t i = 0; i < n; i++) {
                if (p[i] == '"')
                    bt_buf_addc(&q, '"');
                bt_buf_addc(&q, p[i]);
            }
            bt_buf_addc(&q, '"');
        }
        p += n;
    }
    return bt_buf_detach(&q, NULL);
}

/* text with every run of white space made one space, trimmed; in place. */
static void squeeze_space(char *text)
{
    char *w = text;
    for (const char *r = text; *r; r++) {
        if (!is_space(*r))
            *w++ = *r;
        else if (w > text && !is_space(r[1]) && r[1])
            *w++ = ' ';
    }
    *w = '\0';
}

/* Set h->snippet to the excerpt of message h->message for query (left NULL
 * if the message is gone). Returns 0 or BT_ESTORE. */
static int add_snippet(struct bt_store *s, const char *query, struct bt_store_search_hit *h)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_SNIPPET);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, query);
    sqlite3_bind_int64(q, 2, h->message);
    int rc = bt_st_step(s, q, "search snippet");
    if (rc != 1)
        return rc; /* the message went away meanwhile: no snippet */
    h->snippet = bt_st_col_str0(q, 0);
    squeeze_space(h->snippet);
    return bt_st_done(q, 0);
}

void bt_store_search_free(struct bt_store_search_hit *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        bt_store_conversation_release(&v[i].conv);
        free(v[i].snippet);
    }
    free(v);
}

int bt_store_search(struct bt_store *s, const char *text, size_t limit,
                    struct bt_store_search_hit **out, size_t *n, int *more)
{
    *out = NULL;
    *n = 0;
    if (more)
        *more = 0;
    if (!text)
        return bt_st_fail(s, -EINVAL, "no search text");
    size_t len = strlen(text);
    if (bt_utf8_invalid_at(text, len) != len)
        return bt_st_fail(s, -EINVAL, "the search text is not valid UTF-8");
    const char *p = text;
    while (is_space(*p))
        p++;
    if (!*p)
        return bt_st_fail(s, -EINVAL, "nothing to search for");
    char *query = fts_query(text);
    if (!*query) {
        free(query);
        return 0;
    }
    sqlite3_stmt *q = bt_st_sql(s, SQL_SEARCH);
    if (!q) {
        free(query);
        return BT_ESTORE;
    }
    bt_st_bind_text(q, 1, query);
    /* one more than asked, to tell whether there are more */
    sqlite3_bind_int64(q, 2, limit == 0 || limit >= INT64_MAX ? -1 : (int64_t)limit + 1);
    size_t cap = 0;
    int rc;
    while ((rc = bt_st_step(s, q, "search")) == 1) {
        if (limit && *n == limit) {
            if (more)
                *more = 1;
            rc = bt_st_done(q, 0);
            break;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = bt_xrealloc(*out, cap * sizeof **out);
        }
        struct bt_store_search_hit *h = &(*out)[(*n)++];
        memset(h, 0, sizeof *h);
        bt_st_read_conversation(s, q, &h->conv); /* its first 18 columns */
        h->message = bt_st_col_i64(q, 18, 0);
    }
    for (size_t i = 0; rc == 0 && i < *n; i++)
        if ((*out)[i].message)
            rc = add_snippet(s, query, &(*out)[i]);
    free(query);
    if (rc) {
        bt_store_search_free(*out, *n);
        *out = NULL;
        *n = 0;
        if (more)
            *more = 0;
    }
    return rc;
}

/* --- removal ------------------------------------------------------------ */

void bt_store_removal_release(struct bt_store_removal *r)
{
    if (!r)
        return;
    bt_store_conversation_release(&r->conv);
    free(r->runs);
    memset(r, 0, sizeof *r);
}

/* The one integer the query sql gives for conversation id. */
static int count_of(struct bt_store *s, const char *sql, const char *id, int64_t *v)
{
    sqlite3_stmt *q = bt_st_sql(s, sql);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    return bt_st_query_int(s, q, "count what a conversation holds", v);
}

/* The conversation's run ids into r. */
static int list_runs(struct bt_store *s, const char *id, struct bt_store_removal *r)
{
    sqlite3_stmt *q = bt_st_sql(s, SQL_RUN_IDS);
    if (!q)
        return BT_ESTORE;
    bt_st_bind_text(q, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = bt_st_step(s, q, "list runs")) == 1) {
        if (r->n_runs == cap) {
            cap = cap ? cap * 2 : 8;
            r->runs = bt_xrealloc(r->runs, cap * sizeof *r->runs);
        }
        bt_st_col_id(q, 0, r->runs[r->n_runs++]);
    }
    return rc;
}

/* bt_store_conversation_delete, or its survey when !remove. */
static int delete_or_survey(struct bt_store *s, const char *id, struct bt_store_removal *out,
                            int remove)
{
    memset(out, 0, sizeof *out);
    if (!id)
        return bt_st_fail(s, -EINVAL, "no conversation id");
    int rc = bt_st_tx_begin(s);
    if (rc)
        return rc;
    rc = bt_store_conversation_get(s, id, &out->conv);
    if (rc == 0)
        rc = bt_st_check_not_running(s, id);
    if (rc == 0)
        rc = list_runs(s, id, out);
    if (rc == 0)
        rc = count_of(s, SQL_COUNT_MESSAGES, id, &out->messages);
    if (rc == 0)
        rc = count_of(s, SQL_COUNT_EVENTS, id, &out->events);
    if (rc == 0 && remove) {
        sqlite3_stmt *q = bt_st_sql(s, SQL_DELETE);
        if (!q)
            rc = BT_ESTORE;
        else {
            bt_st_bind_text(q, 1, id);
            rc = bt_st_run(s, q, "delete conversation");
        }
    }
    rc = bt_st_tx_end(s, rc);
    if (rc)
        bt_store_removal_release(out);
    return rc;
}

int bt_store_conversation_delete(struct bt_store *s, const char *id, struct bt_store_removal *out)
{
    return delete_or_survey(s, id, out, 1);
}

int bt_store_conversation_survey(struct bt_store *s, const char *id, struct bt_store_removal *out)
{
    return delete_or_survey(s, id, out, 0);
}
