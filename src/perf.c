/* SPDX-License-Identifier: MIT */
/* perf: BATON_TRACE_PERF step marks (see perf.h). */
#include "perf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int state; /* 0 unknown, 1 off, 2 on */
static struct timespec first;

static double ms_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

void bt_perf_mark(const char *step)
{
    if (state == 0) {
        const char *v = getenv("BATON_TRACE_PERF");
        state =
            v && (strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0) ? 2 : 1;
        clock_gettime(CLOCK_MONOTONIC, &first);
    }
    if (state != 2)
        return;
    struct timespec now, wall;
    clock_gettime(CLOCK_MONOTONIC, &now);
    clock_gettime(CLOCK_REALTIME, &wall);
    fprintf(stderr, "baton perf: %lld %.3f %s\n",
            (long long)wall.tv_sec * 1000000 + wall.tv_nsec / 1000, ms_between(&first, &now), step);
}
