/* SPDX-License-Identifier: MIT */
/*
 * codex parser: the read side of `codex app-server --listen stdio://`
 * (codex-cli 0.171.0; protocol from `codex app-server generate-json-schema`,
 * files ServerNotification.json, ServerRequest.json and
 * codex_app_server_protocol.v2.schemas.json; observations in docs/codex.md).
 *
 * Lines are JSON-RPC 2.0 messages without the "jsonrpc" member. A line with
 * "method" and "id" is a server->client request; "method" alone is a
 * notification; "id" alone is a response to the client. Incoming lines are
 * routed by "method", never by id: the server's request ids start at 0 and
 * can equal the client's own.
 */
#ifndef BT_PARSER_CODEX_H
#define BT_PARSER_CODEX_H

#include "parser.h"

extern const struct bt_parser_ops bt_parser_codex;

#endif
