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

#include "event.h"

enum bt_signal_type {
    BT_SIGNAL_RESPONSE,      /* a response to one of the runner's requests */
    BT_SIGNAL_REQUEST,       /* a coder->client request that needs an answer */
    BT_SIGNAL_TURN_END,      /* the coder's terminal event for the turn */
    BT_SIGNAL_TURN_RESUMED,  /* a tentative end was not the end (a retry began) */
    BT_SIGNAL_CODER_VERSION, /* the coder named its own version */
    BT_SIGNAL_RETRY,         /* the coder is retrying a failed request */
    BT_SIGNAL_PROGRESS,      /* the coder got on with the turn, in a line
                                that makes no event (see below) */
};

/* Progress, for the idle watchdog (src/progress.h): the engine counts item,
 * approval and session events, usage that changed, RESPONSE and REQUEST
 * signals, and PROGRESS. A parser sends PROGRESS for a line that shows the
 * turn moving on but maps to no event (a tool call's arguments streaming, a
 * tool's progress report); never for retries, warnings, keep-alives or
 * noise, which is what lets the watchdog end a coder that retries forever.
 * A parser sends RETRY with each retry notice, with the reason the turn
 * ends with if the watchdog fires before the next progress. */

/* A protocol fact the write side (runner) needs. Strings borrowed. */
struct bt_signal {
    enum bt_signal_type type;
    /* RESPONSE */
    int64_t id;                /* the runner's request id */
    int is_error;              /* 1 for an error response */
    int64_t error_code;        /* JSON-RPC error code, 0 if none */
    const char *error_message; /* error text, NULL if none */
    const char *session_id;    /* native session id named by the response */
    const char *session_path;  /* native session file named by the response */
    const char *turn_id;       /* turn id named by the response */
    /* REQUEST */
    const char *request_id; /* the coder's id as JSON text, echoed back */
    const char *method;     /* request method */
    const char *approval_kind;
    const char *summary; /* one line, for approval events */
    const char *item_id;
    const char *params_json; /* request params as JSON text, when needed */
    /* TURN_END; RETRY: error_kind and message say why it retries */
    enum bt_turn_status status;
    const char *error_kind; /* DESIGN.md error kind, NULL on success */
    const char *message;    /* the coder's reason, NULL on success */
    int tentative;          /* 1: final unless TURN_RESUMED follows soon (a
                               coder that may retry after this end) */
    /* CODER_VERSION */
    const char *coder_version; /* "0.171.0" */
};

struct bt_parser_sink {
    void (*event)(void *data, const struct bt_event *ev);
    void (*signal)(void *data, const struct bt_signal *sig);
    void *data;
};

struct bt_parser_ops {
    /* New parser state; never NULL. */
    void *(*create)(void);
    void (*destroy)(void *st);
    /* One line without its terminator, NUL at line[len], writable; may
     * contain NUL bytes and invalid UTF-8. Never fails: what it cannot use
     * becomes a warning event carrying the raw text. */
    void (*line)(void *st, char *line, size_t len, const struct bt_parser_sink *sink);
    /* Optional: end of stream. */
    void (*finish)(void *st, const struct bt_parser_sink *sink);
    /* Curated reason for a run that ended without a TURN_END: sets *kind to a
     * static DESIGN.md error kind and appends one user-facing sentence (no
     * argv, no raw stderr dump) to msg. stderr_tail may be used to classify. */
    void (*diagnose)(void *st, const char *stderr_tail, size_t stderr_len, int64_t exit_code,
                     int signal, const char **kind, struct bt_buf *msg);
};

/* Shared helpers for parsers (parsers/parser-util.c). */

/* Emit a warning event of the given kind with message and raw line (cut to
 * 4 KiB on a character boundary). */
void bt_parser_warn(const struct bt_parser_sink *sink, const char *kind, const char *message,
                    const char *raw, size_t raw_len);

/* Where the JSON object of a line starts: skips leading whitespace and ANSI
 * escape sequences (CSI/OSC). Returns NULL when what follows is not '{'. */
const char *bt_parser_json_start(const char *line, size_t len);

#endif
