/* SPDX-License-Identifier: MIT */
/*
 * pi runner: the write side of `pi --mode rpc` (pi 0.73.1 and 1.x, the
 * same commands; in the package's docs/rpc.md, observations in
 * docs/pi.md). pi 1.x needs Node 22.19 or newer: baton runs whatever `pi`
 * it finds (its `#!/usr/bin/env node` picks the node on PATH; `env`
 * replaces itself, so no launcher stays), nothing pi-specific.
 *
 * argv: --mode rpc [--provider P] [--model M] --session <session file>.
 * The native session is pi's session *file*: baton chooses its path on the
 * first turn, in pi's own sessions directory for the conversation's cwd
 * ($PI_CODING_AGENT_DIR or ~/.pi/agent, then sessions/--<cwd>--/), so
 * `pi --session <file>` in a terminal finds it. A later turn passes the same
 * path, never a bare id: a bare id from another directory makes pi ask a
 * question on stdin and exit.
 *
 * Commands, with fixed string ids so recordings replay by id:
 *   "1" get_state (session id and file, model context window)
 *   "2" set_auto_retry {enabled:false}, only with --no-retry: pi (0.73.1
 *       and 1.6.0) saves this in its settings.json, so baton leaves it
 *       alone otherwise
 *   "3" prompt {message}
 *   "4" abort
 *   "100"+n steer {message}: the turn's nth steer. pi answers success at
 *       once (it queues the text for its agent loop, which takes it in
 *       before its next model request, with a message_end of role user);
 *       a steer queued as the loop ends is never taken in, so only that
 *       message_end (BT_SIGNAL_USER_TEXT) makes it part of the turn
 * Extension UI dialogs are answered by the approval policy.
 *
 * Listing the models, in a process of its own (--mode rpc --no-session):
 *   "models" get_available_models -> data.models [{id, name, provider}]
 *   "state"  get_state             -> data.model, what pi runs given none
 * A model's value is "provider/id", as -m takes it.
 */
#ifndef BT_RUNNER_PI_H
#define BT_RUNNER_PI_H

#include "runner.h"

enum {
    BT_PI_ID_STATE = 1,
    BT_PI_ID_RETRY = 2,
    BT_PI_ID_PROMPT = 3,
    BT_PI_ID_ABORT = 4,
    BT_PI_ID_STEER = 100, /* + the steer's index in the turn */
};

/* Steers one turn takes, at most (the rest are queued as the next turn's). */
#define BT_PI_STEERS_MAX 64

extern const struct bt_runner_ops bt_runner_pi;

#endif
