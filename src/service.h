/* SPDX-License-Identifier: MIT */
/*
 * service: the conversation service. Starts a conversation or its next turn:
 * stores the user's message before the coder starts, creates the run, runs
 * the turn engine with every event stored as it arrives (committed after
 * each read from the coder), keeps the raw stdout/stderr in
 * $BATON_HOME/runs/<run>.{out,err}, then records the run's end, the answer
 * and the native session id in one transaction.
 */
#ifndef BT_SERVICE_H
#define BT_SERVICE_H

#include "coder.h"
#include "event.h"
#include "store.h"

struct bt_service_turn {
    const char *prompt;        /* required */
    const char *coder;         /* run: coder name; send: ignored (taken from CONV) */
    const char *model;         /* run: NULL = coder default; send: ignored */
    const char *cwd;           /* run: project dir; send: ignored */
    enum bt_approval approval; /* approval policy */
    int no_retry;              /* ask the coder not to retry failed requests */
    uint64_t timeout_ms;       /* 0 = none */
    uint64_t idle_timeout_ms;  /* 0 = none */

    /* Live subscription: every event as it is stored. */
    void (*on_event)(void *data, const struct bt_event *ev, const char *json, size_t len);
    void (*on_tick)(void *data); /* every 100 ms while the turn runs */
    void *data;
};

struct bt_service_outcome {
    char conversation[BT_ID_SIZE];
    char run[BT_ID_SIZE];
    int exit_code; /* the CLI exit code (cmd.h) */
    char *message; /* a sentence for stderr when nothing ran; else NULL */
};

/* Start a new conversation with one turn. Returns 0 once a turn ran (its own
 * result is in out->exit_code), or a negative error before anything was
 * stored, with out->exit_code and out->message set (e.g. coder unknown or
 * not installed: exit 3). Free out->message. */
int bt_service_run(struct bt_store *s, const struct bt_service_turn *t,
                   struct bt_service_outcome *out);

/* The next turn of conversation conv (full id), resuming its native session
 * in the conversation's own working directory. Same returns as
 * bt_service_run. */
int bt_service_send(struct bt_store *s, const char *conv, const struct bt_service_turn *t,
                    struct bt_service_outcome *out);

#endif
