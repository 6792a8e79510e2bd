/* SPDX-License-Identifier: MIT */
/* runfile: compressed run files (see runfile.h). */
#include "runfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "error.h"

#define LEVEL 1       /* fast: the stream is very redundant, not worth more */
#define WINDOW_LOG 20 /* 1 MiB: reaches the previous pi line, 0.6 MB back */

struct bt_runfile {
    int fd;
    int err;      /* first write error (negative), then nothing more */
    uint64_t max; /* input bytes kept */
    uint64_t in;  /* bytes given */
    ZSTD_CCtx *cctx;
    char *buf; /* compressed output, ZSTD_CStreamOutSize() bytes */
    size_t cap;
};

int bt_runfile_create(const char *path, uint64_t max, struct bt_runfile **out)
{
    *out = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    struct bt_runfile *f = bt_xcalloc(1, sizeof *f);
    f->fd = fd;
    f->max = max;
    f->cctx = ZSTD_createCCtx();
    f->cap = ZSTD_CStreamOutSize();
    f->buf = bt_xmalloc(f->cap);
    if (!f->cctx)
        abort(); /* out of memory, as bt_xmalloc would */
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_compressionLevel, LEVEL);
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_windowLog, WINDOW_LOG);
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_checksumFlag, 1); /* damage is told */
    *out = f;
    return 0;
}

static int write_all(struct bt_runfile *f, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Feed n bytes with mode (continue, flush or end) until zstd has taken
 * them and, for flush/end, has nothing left to give. */
static int feed(struct bt_runfile *f, const void *src, size_t n, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {src, n, 0};
    for (;;) {
        ZSTD_outBuffer o = {f->buf, f->cap, 0};
        size_t left = ZSTD_compressStream2(f->cctx, &o, &in, mode);
        if (ZSTD_isError(left))
            return BT_EPROTO;
        int rc = write_all(f, f->buf, o.pos);
        if (rc)
            return rc;
        if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
            return 0;
    }
}

static int put(struct bt_runfile *f, const void *buf, size_t n)
{
    int rc = feed(f, buf, n, ZSTD_e_flush);
    if (rc)
        f->err = rc;
    return rc;
}

int bt_runfile_write(struct bt_runfile *f, const void *buf, size_t n)
{
    if (!f || f->err || f->in > f->max || n == 0)
        return f ? f->err : 0;
    if (f->in + n > f->max) { /* a coder writing without end must not fill the disk */
        size_t keep = (size_t)(f->max - f->in);
        f->in = f->max + 1;
        int rc = feed(f, buf, keep, ZSTD_e_continue);
        if (rc)
            f->err = rc;
        else
            put(f, BT_RUNFILE_NOTE, sizeof(BT_RUNFILE_NOTE) - 1);
        return f->err;
    }
    f->in += n;
    return put(f, buf, n);
}

int bt_runfile_close(struct bt_runfile *f)
{
    if (!f)
        return 0;
    if (!f->err)
        f->err = feed(f, NULL, 0, ZSTD_e_end);
    if (close(f->fd) != 0 && !f->err)
        f->err = -errno;
    int rc = f->err;
    ZSTD_freeCCtx(f->cctx);
    free(f->buf);
    free(f);
    return rc;
}

/* --- reading ------------------------------------------------------------ */

/* The whole of a regular file, never following a link and never waiting
 * on a FIFO or device. */
static int read_all(const char *path, struct bt_buf *raw)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ELOOP ? -EINVAL : -errno;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
    char chunk[65536];
    while (rc == 0) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        if (raw->len + (size_t)n > BT_RUNFILE_READ_MAX) {
            rc = BT_ETOOBIG;
            break;
        }
        bt_buf_add(raw, chunk, (size_t)n);
    }
    close(fd);
    return rc;
}

#define READ_STEP                                                                                  \
    4096 /* input bytes per decoding call: damage costs at most                                    \
            the block it is in, not what came before it */

/* Decompress the frame in src into out. */
static int inflate_all(const struct bt_buf *src, struct bt_buf *out, int *truncated)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        abort();
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
    size_t cap = ZSTD_DStreamOutSize(), last = 1, at = 0;
    char *chunk = bt_xmalloc(cap);
    int rc = 0;
    while (rc == 0) {
        size_t step = src->len - at < READ_STEP ? src->len - at : READ_STEP;
        ZSTD_inBuffer in = {src->data + at, step, 0};
        ZSTD_outBuffer o;
        do { /* everything this input gives */
            o = (ZSTD_outBuffer){chunk, cap, 0};
            last = ZSTD_decompressStream(d, &o, &in);
            if (ZSTD_isError(last))
                rc = BT_ECORRUPT;
            else if (out->len + o.pos > BT_RUNFILE_READ_MAX)
                rc = BT_ETOOBIG;
            else
                bt_buf_add(out, chunk, o.pos);
        } while (rc == 0 && (in.pos < in.size || o.pos == o.size));
        at += step;
        if (at == src->len || last == 0)
            break;
    }
    if (rc == 0 && at < src->len)
        rc = BT_ECORRUPT; /* bytes after the frame's end */
    /* last != 0: the frame's end was never written (a killed baton) */
    if (rc == 0 && truncated)
        *truncated = last != 0;
    free(chunk);
    ZSTD_freeDCtx(d);
    return rc;
}

int bt_runfile_read(const char *path, struct bt_buf *out, int *truncated)
{
    struct bt_buf raw = BT_BUF_INIT;
    if (truncated)
        *truncated = 0;
    size_t n = strlen(path), sn = strlen(BT_RUNFILE_SUFFIX);
    int zst = n >= sn && strcmp(path + n - sn, BT_RUNFILE_SUFFIX) == 0;
    int rc = read_all(path, &raw);
    if (rc == 0 && zst)
        rc = inflate_all(&raw, out, truncated); /* empty: created, nothing flushed */
    else if (rc == 0)
        bt_buf_add(out, raw.data, raw.len);
    bt_buf_release(&raw);
    return rc;
}
