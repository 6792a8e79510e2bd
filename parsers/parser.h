/* SPDX-License-Identifier: MIT */
/*
 * parser: the read side of a coder's protocol. One output line in, normalized
 * events (and protocol signals for the runner) out. A parser does no I/O and
 * knows nothing of libuv, SQLite or the terminal; its cJSON trees never leave
 * it. Each coder's parser is one const struct bt_parser_ops, which its
 * coder's struct bt_coder names (src/coder.h).
 *
 * Everything a parser passes to the sink is borrowed and valid only during
 * the callback.
 */
#ifndef BT_PARSER_H
#define BT_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "error-kind.h"
#include "event.h"
#include "parser-signal.h"

/* Progress, for the idle watchdog (src/progress.h): the engine counts item,
 * approval and session events, usage that changed, RESPONSE and REQUEST
 * signals, and PROGRESS. A parser sends PROGRESS for a line that shows the
 * turn moving on but maps to no event (a tool call's arguments streaming, a
 * tool's progress report); never for retries, warnings, keep-alives or
 * noise, which is what lets the watchdog end a coder that retries forever.
 * A parser sends RETRY with each retry notice, with the reason the turn
 * ends with if the watchdog fires before the next progress. The signals
 * and their fields: parser-signal.h. */

struct bt_parser_sink {
    void (*event)(void *data, const struct bt_event *ev);
    void (*signal)(void *data, const struct bt_signal *sig);
    void *data;
};

struct bt_parser_ops {
    /* New parser state; never NULL. */
    void *(*create)(void);
    void (*destroy)(void *st);
    /* One line of the coder's stdout, as the engine passes it (src/turn.c,
     * src/framer.h): without its LF and without one CR before it, from at
     * most BT_FRAMER_MAX_LINE_DEFAULT bytes of stdout (a longer line is
     * dropped), NUL-terminated at line[len] and writable. It is text:
     * valid UTF-8 with no NUL byte, because the engine replaces each NUL
     * byte and each invalid sequence with U+FFFD first (so len may exceed
     * the bytes read) and emits an invalid_text warning; it rewrites each
     * JSON escape \u0000 as \ufffd too (json.h, bt_json_nul_replace), so a
     * decoded string (cJSON's, jscan's) never ends early at a NUL. Never fails, and
     * must not crash on other bytes either (the fuzz targets feed them):
     * what it cannot use becomes a warning event carrying the raw text. */
    void (*line)(void *st, char *line, size_t len, const struct bt_parser_sink *sink);
    /* Optional: end of stream. */
    void (*finish)(void *st, const struct bt_parser_sink *sink);
    /* Curated reason for a run that ended without a TURN_END: sets *kind
     * (the engine sets it to BT_ERROR_KIND_CODER_CRASHED before the call)
     * and appends one user-facing sentence (no argv, no raw stderr dump) to
     * msg. stderr_tail (NUL-terminated, may be NULL) may be used to
     * classify. */
    void (*diagnose)(void *st, const char *stderr_tail, size_t stderr_len, int64_t exit_code,
                     int signal, enum bt_error_kind *kind, struct bt_buf *msg);
    /* Optional: the reason for a turn the coder ended as failed without
     * one (turn_end.unexplained), read from its stderr_tail after it
     * exited (NUL-terminated, may be NULL). When the tail tells, sets
     * *kind (the end's kind on entry) and appends one sentence to msg
     * (empty on entry), e.g. the coder's last error line; else leaves
     * both. */
    void (*explain)(void *st, const char *stderr_tail, size_t stderr_len, enum bt_error_kind *kind,
                    struct bt_buf *msg);
};

/* Shared helpers for parsers (parsers/parser-util.c). */

/* Emit a warning event of the given kind with message and raw line (cut to
 * 4 KiB on a character boundary). */
void bt_parser_warn(const struct bt_parser_sink *sink, const char *kind, const char *message,
                    const char *raw, size_t raw_len);

/* Where the JSON object of a line starts: skips leading whitespace and ANSI
 * escape sequences (CSI/OSC). Returns NULL when what follows is not '{'. */
const char *bt_parser_json_start(const char *line, size_t len);

struct cJSON;
/* The JSON object of a line (after bt_parser_json_start), owned by the
 * caller; NULL when there is none, after a warning naming who wrote it
 * ("codex"): `noise` for a line that is not JSON (an empty line: no
 * warning), `invalid_json` for one that does not parse to an object. */
struct cJSON *bt_parser_json_line(const char *line, size_t len, const char *who,
                                  const struct bt_parser_sink *sink);

/* The members keys[0..n) of o that are there and not null, copied into
 * one JSON object's text (owned, cJSON_free), for an item's detail; NULL
 * when none is. */
char *bt_parser_detail(const struct cJSON *o, const char *const *keys, size_t n);

/* A file_change item's changes (event.h changes_json, docs/events.md):
 * bt_parser_change appends one to *changes (an array made on first use;
 * NULL strings are left out, kind is add, update, delete or write);
 * bt_parser_changes_text turns the array into its text (owned,
 * cJSON_free) and frees it, NULL when there is none. */
void bt_parser_change(struct cJSON **changes, const char *path, const char *kind,
                      const char *move_to, const char *diff, const char *old_text,
                      const char *new_text);
char *bt_parser_changes_text(struct cJSON *changes);

/* A question the coder asks the user (a user_input request; event.h
 * questions_json, docs/events.md): bt_parser_question appends one to
 * *questions (an array made on first use): its text (NULL: the question
 * is left out), and when given its id, header, options and whether
 * several may be chosen (multiple). options is the coder's array: a
 * string entry is a label (pi select), an object gives `label` (or
 * `title`, MCP) and `description`; other entries are left out. The array
 * becomes text with bt_parser_changes_text. */
void bt_parser_question(struct cJSON **questions, const char *id, const char *header,
                        const char *text, const struct cJSON *options, int multiple);

/* Emit approval.requested (decision NULL) or approval.resolved (decided
 * by `by`: "policy", the default for NULL, "user" or "cancel") for a REQUEST
 * signal: its approval kind, summary, item id and, for requested, its
 * request id and questions. */
void bt_parser_approval(const struct bt_parser_sink *sink, const struct bt_signal_request *rq,
                        const char *decision, const char *by);

#endif
