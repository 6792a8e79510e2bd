/* SPDX-License-Identifier: MIT */
/*
 * rig: one coder's parser and runner wired as the turn engine wires them,
 * for unit tests: lines go to the parser, its requests and responses to
 * the runner, whose writes are kept; events and the turn's end are
 * recorded for the test to check.
 */
#ifndef BT_TEST_RIG_H
#define BT_TEST_RIG_H

#include "coder.h"

struct bt_test_rig {
    const struct bt_coder *coder;  /* whose parser and runner */
    struct bt_runner_config cfg;   /* prompt "hi", cwd "/tmp" */
    void *parser, *runner;         /* their states */
    struct bt_parser_sink sink;    /* the events and signals below */
    struct bt_buf events;          /* per event: type[:warning or error kind]
                                      [:approval kind:decision][/item kind[:status]]| */
    struct bt_buf writes;          /* lines for the coder's stdin */
    struct bt_buf text;            /* the deltas of message items */
    int ended;                     /* how many TURN_END signals */
    int drain;                     /* the last TURN_END drains (turn_end.drain) */
    enum bt_turn_status status;    /* the last TURN_END's */
    char error_kind[64];           /* its error kind's name, "" for none */
    char message[256];             /* its message, "" for none */
    struct bt_usage usage;         /* the last usage event */
    int steer_signals;             /* BT_SIGNAL_STEER from the runner: how many */
    int64_t steer_key;             /* the last one's key */
    int steer_taken;               /* the last one's taken */
    int user_texts;                /* BT_SIGNAL_USER_TEXT from the parser: how many */
    char user_text[256];           /* the last one's text */
    int stopping;                  /* set by the test: every request is marked as the
                                      engine marks one after the stop began */
    int hold;                      /* set by the test: a request with an approval kind
                                      is kept for bt_test_rig_answer, as the engine
                                      keeps one under --approval ask */
    struct bt_signal_request held; /* the last one kept; strings owned */
};

/* Wire coder (by name; the test fails if it is unknown) with approval and
 * the session to resume (NULL: a new one). Nothing is written yet. */
void bt_test_rig_init(struct bt_test_rig *r, const char *coder, enum bt_approval approval,
                      const char *resume);
/* The runner's start lines, appended to r->writes. */
void bt_test_rig_start(struct bt_test_rig *r);
/* Feed one line (copied: the parser may write into it) to the parser. */
void bt_test_rig_line(struct bt_test_rig *r, const char *line);
/* The parser's finish op, as the engine calls it when a drained end
 * becomes the end or the stream ends. */
void bt_test_rig_finish(struct bt_test_rig *r);
void bt_test_rig_release(struct bt_test_rig *r);
/* Answer the kept request as a person decided: the runner's answer op,
 * its lines appended to r->writes. */
void bt_test_rig_answer(struct bt_test_rig *r, const struct bt_runner_decision *d);

#endif
