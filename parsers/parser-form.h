/* SPDX-License-Identifier: MIT */
/*
 * parser-form: an elicitation form (a coder asks the user to fill in a
 * flat form) as questions a person answers, and those answers as the
 * form's typed content again. Used for ACP `elicitation/create`
 * (@agentclientprotocol/sdk 2.4.0, ElicitationSchema) and codex
 * `mcpServer/elicitation/request` (codex-cli 0.171.0, McpElicitationSchema,
 * generate-json-schema); both carry MCP's `requestedSchema`:
 *
 *   {type: "object", properties: {NAME: PROP, ...}, required?: [NAME, ...]}
 *   PROP: {type: "string" | "number" | "integer" | "boolean" | "array",
 *          title?, description?,
 *          enum?: [value], enumNames?: [label]      (string, a choice)
 *          oneOf?: [{const, title}]                 (string, a choice)
 *          items?: {enum} | {anyOf: [{const, title}]} (array: several choices)
 *          minimum?, maximum?                        (number, integer)
 *          minLength?, maxLength?                    (string)
 *          minItems?, maxItems?}                     (array)
 *
 * The question of property i is question i (the schema's order); the
 * schema itself travels as the request's params_json (parser-signal.h),
 * which the engine keeps with the request: the event shows questions
 * only.
 */
#ifndef BT_PARSER_FORM_H
#define BT_PARSER_FORM_H

struct cJSON;

/* 1 if schema (a requestedSchema object, or NULL) is a form baton can
 * fill: an object whose properties all have one of the types above. */
int bt_form_fillable(const struct cJSON *schema);

/* Append one question per property of schema (a requestedSchema object)
 * to *questions (made on first use), as bt_parser_question does: id the
 * property's name, header its title, text its description (or, for a
 * one-property form, message; else its title or name), options its
 * choices (boolean: "true" and "false"), multiple for an array. Returns 1
 * when schema is a form baton can fill (an object whose properties are
 * all of the types above); 0, with nothing appended, when not. */
int bt_form_questions(struct cJSON **questions, const struct cJSON *schema, const char *message);

/* The content object of an accepted form: answers_json (one element per
 * question, each an array of strings, as bt_runner_decision's; fewer
 * elements than questions leave the rest unanswered) converted to each
 * property's type: a choice's label becomes its value, a number or
 * integer is parsed, a boolean is true/false (yes/no). Returns 0 with
 * *content (owned, cJSON_Delete); -EINVAL with *why (owned, free) saying
 * which answer does not fit and why (a number that does not parse, a
 * value not among the choices, a required property unanswered, a bound
 * broken, several answers to a single one), *content NULL. */
int bt_form_content(const char *schema_json, const char *answers_json, struct cJSON **content,
                    char **why);

#endif
