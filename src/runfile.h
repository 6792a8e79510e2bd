/* SPDX-License-Identifier: MIT */
/*
 * runfile: a run's raw coder output on disk ($BATON_HOME/runs/<run>.out.zst
 * and .err.zst), zstd-compressed as it streams, so old conversations can be
 * re-parsed after a parser fix without keeping gigabytes: pi 0.73.1 repeats
 * the whole partial message on every update, and a 200 KB answer is 42 MB
 * of stdout, about 79 KB here.
 *
 * Crash safety: every bt_runfile_write ends in a zstd flush (the end of a
 * block) written to the file, so what a killed baton leaves is a readable
 * prefix of the stream: a zstd frame without its end, which
 * bt_runfile_read (and `zstdcat`, which then says the frame is truncated)
 * decompresses up to the last write.
 *
 * Format: one zstd frame (level 1, window 1 MiB: a pi line repeats the one
 * before it, up to 0.6 MB back) with its content checksum. Files of runs
 * from before schema 4 are plain (<run>.out); bt_runfile_read reads both.
 */
#ifndef BT_RUNFILE_H
#define BT_RUNFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define BT_RUNFILE_SUFFIX ".zst"              /* after ".out" / ".err" */
#define BT_RUNFILE_READ_MAX ((size_t)2 << 30) /* bytes bt_runfile_read gives at most */
#define BT_RUNFILE_NOTE "\n[baton: the rest of this stream was not kept]\n"

struct bt_runfile;

/* Create path, a new file of mode 0600, for a stream of which the first
 * max bytes are kept; the rest is replaced by BT_RUNFILE_NOTE. Whatever is
 * at path already (a file, a link, a FIFO, a directory: never a new run's)
 * is not touched: -EEXIST. Returns 0 and *out, or the negated errno of
 * open. */
int bt_runfile_create(const char *path, uint64_t max, struct bt_runfile **out);

/* Compress and write n bytes (borrowed), then flush them to the file.
 * Returns 0, or the negated errno of the first failed write: the file then
 * stops growing (what it holds stays readable) and later calls do nothing. */
int bt_runfile_write(struct bt_runfile *f, const void *buf, size_t n);

/* End the frame, close and free f (NULL is allowed). Returns 0 or the first
 * error the file had. */
int bt_runfile_close(struct bt_runfile *f);

/* The stream a run file holds, appended to out: a path ending in
 * BT_RUNFILE_SUFFIX is decompressed (a frame without its end, or an empty
 * file, gives what it holds, with *truncated set to 1 when truncated is not
 * NULL), any other is copied as it is. Only a regular file is read: never
 * through a symbolic link, never waiting on a FIFO. At most
 * BT_RUNFILE_READ_MAX bytes. Returns 0; the negated errno of open/read
 * (-EINVAL for a link or anything but a regular file); BT_ECORRUPT for a
 * damaged frame (out holds what the blocks before the damage gave);
 * BT_ETOOBIG past the bound. */
int bt_runfile_read(const char *path, struct bt_buf *out, int *truncated);

#endif
