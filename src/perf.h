/* SPDX-License-Identifier: MIT */
/*
 * perf: where a command's time goes, for docs/performance.md. With
 * BATON_TRACE_PERF=1 (or yes, true), bt_perf_mark writes one line per step
 * to stderr (a detached worker's stderr is $BATON_HOME/worker.log):
 *   baton perf: <unix time, us> <ms since the first mark> <step>
 * so a benchmark can line baton's steps up with its own clock (the time
 * from its fork to baton's first mark is the loader's). Unset, a mark costs
 * one branch after the first getenv.
 */
#ifndef BT_PERF_H
#define BT_PERF_H

/* Mark the end of step (a static string, e.g. "store opened"). */
void bt_perf_mark(const char *step);

#endif
