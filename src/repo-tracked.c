/* SPDX-License-Identifier: MIT */
/*
 * repo-tracked: the paths a git index holds, read straight from its file
 * (repo-int.h, bt_repo_tracked_read). A snapshot asks the user's index
 * whether each file is tracked; libgit2's git_index_open of a 20,000-file
 * index costs about 20 ms (every entry allocated, the SHA-1 checked),
 * twice a turn, where only the names are wanted. Format: git's
 * Documentation/gitformat-index.txt, versions 2 to 4 (4: paths
 * prefix-compressed); the checksum is not verified (the file is only
 * read, and a torn one fails the parse: then the caller asks libgit2).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "repo-int.h"

#define ENTRY_FIXED 62       /* times, dev, ino, mode, uid, gid, size, id, flags */
#define FLAG_EXTENDED 0x4000 /* v3+: two more bytes of flags */
#define NAME_MASK 0x0fff

static uint32_t be32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return ntohl(v);
}

static uint16_t be16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return ntohs(v);
}

/* v4's varint (gitformat-index: "offset" encoding of the bytes to strip). */
static int varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
    const unsigned char *q = *p;
    if (q >= end)
        return -1;
    size_t v = *q & 0x7f;
    while (*q++ & 0x80) {
        if (q >= end || v > (SIZE_MAX >> 8))
            return -1;
        v = ((v + 1) << 7) | (*q & 0x7f);
    }
    *p = q;
    *out = v;
    return 0;
}

/* Entry e's path (v4: made from the previous one, prev) into t; *next
 * past the entry. 0, or -1 when the file is not what it says. */
static int entry(const unsigned char *e, const unsigned char *end, uint32_t version,
                 const char *prev, struct bt_repo_tracked *t, const unsigned char **next)
{
    if (end - e < ENTRY_FIXED)
        return -1;
    uint16_t flags = be16(e + ENTRY_FIXED - 2);
    const unsigned char *name = e + ENTRY_FIXED + ((flags & FLAG_EXTENDED) && version >= 3 ? 2 : 0);
    if (name > end)
        return -1;
    if (version < 4) {
        const unsigned char *nul = memchr(name, '\0', (size_t)(end - name));
        if (!nul)
            return -1;
        size_t len = (size_t)(nul - e);       /* the fixed part, the flags, the name */
        *next = e + ((len + 8) & ~(size_t)7); /* 1 to 8 NULs: a multiple of 8 */
        if (*next > end)
            return -1;
        bt_strv_push_take(&t->paths, bt_xstrndup((const char *)name, (size_t)(nul - name)));
        return 0;
    }
    size_t strip, keep = prev ? strlen(prev) : 0;
    const unsigned char *p = name;
    if (varint(&p, end, &strip) != 0 || strip > keep)
        return -1;
    const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
    if (!nul)
        return -1;
    struct bt_buf b = BT_BUF_INIT;
    bt_buf_add(&b, prev ? prev : "", keep - strip);
    bt_buf_add(&b, (const char *)p, (size_t)(nul - p));
    bt_strv_push_take(&t->paths, bt_buf_detach(&b, NULL));
    *next = nul + 1;
    return 0;
}

int bt_repo_tracked_read(const char *path, struct bt_repo_tracked *t)
{
    bt_strv_init(&t->paths);
    size_t len = 0;
    errno = 0;
    unsigned char *bytes = (unsigned char *)bt_read_file(path, &len);
    if (!bytes && errno == ENOENT)
        return 0; /* no index yet: nothing tracked */
    if (!bytes) {
        bt_strv_release(&t->paths);
        return -EIO;
    }
    const unsigned char *end = bytes + len, *e = bytes + 12;
    uint32_t version = len >= 12 ? be32(bytes + 4) : 0;
    int rc = len < 12 || memcmp(bytes, "DIRC", 4) != 0 || version < 2 || version > 4 ? -1 : 0;
    for (uint32_t i = 0, n = rc ? 0 : be32(bytes + 8); rc == 0 && i < n; i++)
        rc = entry(e, end, version, i ? t->paths.v[t->paths.n - 1] : NULL, t, &e);
    free(bytes);
    if (rc)
        bt_strv_release(&t->paths);
    return rc ? -EINVAL : 0;
}

int bt_repo_tracked_has(const struct bt_repo_tracked *t, const char *path)
{
    size_t lo = 0, hi = t->paths.n; /* sorted by name, as git sorts them */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->paths.v[mid], path);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}
