/* SPDX-License-Identifier: MIT */
/*
 * slot: a bound on the turns that run at once, across every process of one
 * $BATON_HOME. Each coder is a process (a Node coder takes 150-200 MB), and
 * `baton serve` starts a detached worker per request, so 300 requests would
 * otherwise start 300 coders at once. A detached worker (cmd-worker.c: the
 * turns of serve, --detach and fan-out) takes a slot before its coder
 * starts and waits, in the order the workers asked, while none is free;
 * its run meanwhile reads as `waiting` (store.h). A foreground turn (`baton
 * run` without --detach, `baton acp`) takes none: its user is watching it.
 *
 * In $BATON_HOME/turns (0700):
 *   slot.N                   N = 0 .. limit-1: held (flock) by a worker
 *                            while its turn runs
 *   wait/TICKET-PID-RUN      a worker waiting, held (flock) by it; TICKET
 *                            (20 digits, the realtime clock in ns) orders
 *                            the waiters: first come, first served
 * Locks go with their process: a worker that dies, however it dies, frees
 * its slot, and its wait entry is stale (removed by the next waiter that
 * meets it).
 */
#ifndef BT_SLOT_H
#define BT_SLOT_H

#define BT_SLOT_DIR "turns"   /* under $BATON_HOME */
#define BT_SLOT_MAX 4096      /* the largest limit taken */
#define BT_SLOT_POLL_MS 100   /* the first waiter's look for a free slot */
#define BT_SLOT_POLL_MAX 1000 /* the slowest look, far back in the line */

struct bt_slot {
    int fd;          /* the held slot.N, or -1 */
    int wait_fd;     /* the held wait entry while waiting, or -1 */
    char *wait_path; /* its path, or NULL (owned) */
};

#define BT_SLOT_INIT                                                                               \
    {                                                                                              \
        .fd = -1, .wait_fd = -1, .wait_path = NULL                                                 \
    }

/* The default limit: max(2, min(2 * online cores, physical memory / 256
 * MiB)). A coder mostly waits for its model, so two turns per core leave
 * the machine responsive when they run tools; 256 MiB a turn covers a Node
 * coder (150-200 MB, codex 0.171.0, claude 2.x) with its tools. */
int bt_slot_default(void);

/* The limit: $BATON_MAX_TURNS when it is a number 1..BT_SLOT_MAX, else
 * bt_slot_default(). *bad (may be NULL) is set to the text of a value
 * that is not such a number (borrowed from the environment), else NULL. */
int bt_slot_limit(const char **bad);

/* Parse a limit (--max-turns): 0 and *n, or -EINVAL. */
int bt_slot_parse(const char *text, int *n);

/* Take one of limit slots of home for run, waiting behind every live
 * waiter that asked first. stop(data) is asked before each look; nonzero
 * gives up. on_wait(data, ahead) (may be NULL) is called once, when the
 * first look finds no slot for it: ahead waiters and every slot taken.
 * Returns 0 with slot held, 1 when stop gave up (nothing held), or a
 * negative errno when turns/ cannot be used (nothing held: the caller
 * decides whether to go on unbounded). */
int bt_slot_take(const char *home, const char *run, int limit, int (*stop)(void *data),
                 void (*on_wait)(void *data, int ahead), void *data, struct bt_slot *slot);

/* Release whatever slot holds (idempotent). */
void bt_slot_release(struct bt_slot *slot);

/* 1 when a live worker waits for a slot for run, else 0 (errors too). */
int bt_slot_waiting(const char *home, const char *run);

#endif
