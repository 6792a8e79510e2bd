/* SPDX-License-Identifier: MIT */
/*
 * input: what a turn's settings must be, wherever they come from (the
 * CLI's arguments, baton serve's JSON bodies), so both refuse the same
 * things with the same words. Each check returns NULL when the value is
 * fine, else a sentence (static, or owned where said) naming the problem.
 */
#ifndef BT_INPUT_H
#define BT_INPUT_H

#include <stddef.h>

/* A prompt a coder's JSON protocol can carry: valid UTF-8, no NUL, not
 * blank, at most BT_SERVICE_PROMPT_MAX bytes. Owned sentence (free it). */
char *bt_input_prompt_problem(const char *s, size_t n);

/* A model name travels in the coder's JSON protocol or its argv: text of
 * one line, not empty (no model means the coder's own default), up to 256
 * bytes, not like an option. Static sentence. */
const char *bt_input_model_problem(const char *m);

/* The working directory dir as an absolute, resolved path (*abs, owned), or
 * an owned sentence saying why it cannot be one (*abs NULL). */
char *bt_input_cwd(const char *dir, char **abs);

#endif
