/* SPDX-License-Identifier: MIT */
/*
 * id: identifiers for conversations and runs.
 *
 * An id is BT_ID_LEN characters of [0-9a-z]: 9 characters of the creation
 * time (milliseconds since the Unix epoch in base 36, zero-padded, so ids sort
 * by creation time to the millisecond until the year 5188) followed by 13
 * random base-36 characters (about 67 bits from getrandom(2)), so ids made in
 * different processes in the same millisecond do not collide. Ids made in the
 * same millisecond sort in random order.
 */
#ifndef BT_ID_H
#define BT_ID_H

#include <stdint.h>

#define BT_ID_TIME_LEN 9                            /* base-36 time digits */
#define BT_ID_RAND_LEN 13                           /* base-36 random digits */
#define BT_ID_LEN (BT_ID_TIME_LEN + BT_ID_RAND_LEN) /* 22 characters */
#define BT_ID_SIZE (BT_ID_LEN + 1)                  /* with the NUL */

/* Write a new NUL-terminated id into out. Returns 0, or a negated errno if
 * the kernel's random source fails (out is then ""). */
int bt_id_new(char out[BT_ID_SIZE]);

/* The same with a given time (ms since the epoch, >= 0); for tests. */
int bt_id_new_at(char out[BT_ID_SIZE], int64_t ms);

/* 1 if s is exactly BT_ID_LEN characters of [0-9a-z], else 0. NULL is not. */
int bt_id_valid(const char *s);

#endif
