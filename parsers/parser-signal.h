/* SPDX-License-Identifier: MIT */
/*
 * parser-signal: the protocol facts a parser tells the engine and the runner (the
 * write side), beside the events it emits. A struct bt_signal is a tagged
 * union: `type` says which one member is set; the members of other types are
 * not to be read. A new coder fills the members it has facts for and leaves
 * the rest zero (NULL strings, 0 numbers, BT_ERROR_KIND_NONE).
 *
 * Strings are borrowed and valid only during the sink's signal callback.
 * Which coder line gives each field is named below: codex app-server
 * JSON-RPC over stdio (docs/codex.md), pi's RPC mode (`pi --mode rpc`,
 * docs/pi.md), ACP agents (docs/acp.md).
 */
#ifndef BT_PARSER_SIGNAL_H
#define BT_PARSER_SIGNAL_H

#include <stdint.h>

#include "error-kind.h"
#include "event.h"

enum bt_signal_type {
    BT_SIGNAL_RESPONSE,      /* a response to one of the runner's requests */
    BT_SIGNAL_REQUEST,       /* a coder->client request that needs an answer */
    BT_SIGNAL_TURN_END,      /* the coder's terminal event for the turn */
    BT_SIGNAL_TURN_RESUMED,  /* a tentative end was not the end (a retry began); no fields */
    BT_SIGNAL_CODER_VERSION, /* the coder named its own version */
    BT_SIGNAL_RETRY,         /* the coder is retrying a failed request */
    BT_SIGNAL_PROGRESS,      /* the coder got on with the turn, in a line that makes no
                                event (progress.h, parser.h); no fields */
    BT_SIGNAL_USER_TEXT,     /* the coder took a user message into the turn */
    BT_SIGNAL_STEER,         /* a runner's word on a steer it wrote (runner.h steer) */
};

/* RESPONSE: the answer to a request the runner wrote. codex: a JSON-RPC
 * response {id, result | error}; pi: {"type":"response", id, command,
 * success, error, data}. */
struct bt_signal_response {
    int64_t id;                /* the runner's request id (codex `id`, pi `id` as digits);
                                  BT_UNKNOWN when it is not an id the runner can have sent */
    const char *method;        /* the request answered, when the response names it
                                  (pi `command`); NULL otherwise (codex) */
    int is_error;              /* 1: the request failed (codex `error` present; pi
                                  `success` not true) */
    int64_t error_code;        /* codex `error.code`; 0 if none (pi has none) */
    const char *error_message; /* codex `error.message`, pi `error`; NULL if none */
    const char *session_id;    /* the native session: codex `result.thread.id`, pi
                                  get_state `data.sessionId`; NULL if not named */
    const char *session_path;  /* the native session file: pi get_state
                                  `data.sessionFile`; NULL if not named (codex) */
    const char *turn_id;       /* codex `result.turn.id` (turn/start); NULL if none */
    const char *result_json;   /* the whole `result` as JSON text, for a runner that
                                  needs more of it than the fields above (ACP: the
                                  initialize answer's agentCapabilities); NULL when
                                  the parser does not pass it (codex, pi) */
};

/* REQUEST: the coder asks the client something and waits for the answer.
 * codex: a JSON-RPC request {id, method, params}; pi: an
 * {"type":"extension_ui_request", id, method, title, options} dialog. */
struct bt_signal_request {
    const char *request_id;     /* the coder's `id` as JSON text, echoed in the answer */
    const char *method;         /* codex `method`; pi `method` (select, confirm, input, editor) */
    const char *approval_kind;  /* what an approval is about (command, file_change,
                                   permissions, user_input); NULL: not an approval */
    const char *summary;        /* one line for the approval events (codex params.command,
                                   reason or message, pi `title`; else the method) */
    const char *item_id;        /* codex `params.itemId`; NULL if none (pi) */
    const char *params_json;    /* what an accepting answer needs: codex
                                   `params.permissions` as JSON text for
                                   item/permissions/requestApproval; claude's
                                   can_use_tool `input`; ACP's `options`; NULL
                                   otherwise */
    const char *questions_json; /* user_input: the questions as the event's
                                   `questions` array (docs/events.md), JSON text;
                                   codex requestUserInput `params.questions` ids
                                   as `id`; NULL when the coder gave none */
    int stopping;               /* set by the turn engine, never by a parser: 1
                                   once baton began stopping the turn (the
                                   interrupt is written or about to be), so the
                                   request is declined as cancelled whatever the
                                   policy (bt_runner_accepts) */
};

/* TURN_END: the turn is over as far as the coder is concerned. codex:
 * `turn/completed` with turn.status; pi: `agent_end` (with the stop reason
 * of the last assistant message), a failed `auto_retry_end`, a compaction
 * that failed without retry. A runner ends a turn too (bt_runner_fail), e.g.
 * on a refused handshake. */
struct bt_signal_turn_end {
    enum bt_turn_status status;    /* how it ended; an unknown status is FAILED */
    enum bt_error_kind error_kind; /* why it failed (FAILED only); NONE: not said, which
                                      the engine takes as model_error */
    const char *message;           /* the coder's reason (FAILED only); NULL if none */
    int tentative;                 /* 1: final unless TURN_RESUMED follows within
                                      BT_TURN_SETTLE_MS (pi may retry after agent_end) */
    int unexplained;               /* 1 (FAILED only): the protocol said the turn failed but
                                      not why (an ACP end_turn with no output at all): the
                                      engine asks the parser's explain op to read stderr */
    int drain;                     /* 1: final once the coder has said nothing for
                                      BT_TURN_DRAIN_MS (at most BT_TURN_DRAIN_MAX_MS after
                                      it): what it still says belongs to the turn (ACP:
                                      session/update notifications written after the
                                      session/prompt answer); then the parser's finish op
                                      closes what is open, so it must be idempotent */
};

/* RETRY: the coder is retrying a failed model request (codex `error` with
 * willRetry true; pi `auto_retry_start`). Not progress: the turn ends with
 * this kind and reason if the idle watchdog fires before the next progress
 * (progress.h). */
struct bt_signal_retry {
    enum bt_error_kind error_kind; /* the failure retried; NONE is taken as model_error */
    const char *message;           /* the coder's reason (codex error.message with
                                      additionalDetails, pi errorMessage); NULL if none */
};

/* CODER_VERSION: the coder named its own version in its protocol (codex:
 * the userAgent of the initialize response). */
struct bt_signal_coder_version {
    const char *version; /* "0.171.0" */
};

/* USER_TEXT: the coder took a user message into its context during the
 * turn (pi: message_end of role "user", pi 0.73.1 and 1.6.0, for the prompt
 * and for every steer its agent loop takes in before the next model
 * request). The engine matches it against the steers it wrote: a steer pi
 * queued but never took in is not in the turn (runner.h steer). */
struct bt_signal_user_text {
    const char *text; /* the message's text parts, joined */
};

/* STEER: sent by a runner, never by a parser, through the sink it is
 * given: what the coder said of steer `key` (codex: the turn/steer
 * response, codex-cli 0.171.0: a turnId when taken, an error such as "no
 * active turn" when refused). */
struct bt_signal_steer {
    int64_t key;         /* the key bt_turn_steer gave the runner */
    int taken;           /* 1: it is part of the running turn; 0: refused */
    const char *message; /* refused: the coder's reason; NULL if none */
};

struct bt_signal {
    enum bt_signal_type type;
    union { /* the member that type names */
        struct bt_signal_response response;
        struct bt_signal_request request;
        struct bt_signal_turn_end turn_end;
        struct bt_signal_retry retry;
        struct bt_signal_coder_version coder_version;
        struct bt_signal_user_text user_text;
        struct bt_signal_steer steer;
    };
};

#endif
