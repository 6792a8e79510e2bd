/* SPDX-License-Identifier: MIT */
/*
 * serve-token: the bearer token of baton serve, kept in
 * $BATON_HOME/serve.token so a restarted server (and a page that kept it)
 * goes on with the same one. Made whole aside and linked into place, mode
 * 0600 (two servers starting at once get the same one); a file anyone else
 * could read is refused rather than trusted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static int make_token(const char *path, char token[BT_SERVE_TOKEN_HEX + 1], char **why)
{
    unsigned char raw[BT_SERVE_TOKEN_HEX / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *why = bt_xasprintf("cannot read random bytes: %s", strerror(errno));
            return -errno;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(token + 2 * i, 3, "%02x", raw[i]);
    /* written whole aside, then linked into place: a server starting at
     * the same moment never reads a file half written, and link() fails
     * with EEXIST for the one that comes second, which reads the other's */
    char *tmp = bt_xasprintf("%s.XXXXXX", path);
    int fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0) {
        int e = errno;
        *why = bt_xasprintf("cannot create %s: %s", path, strerror(e));
        free(tmp);
        return -e;
    }
    char line[BT_SERVE_TOKEN_HEX + 1];
    memcpy(line, token, BT_SERVE_TOKEN_HEX);
    line[BT_SERVE_TOKEN_HEX] = '\n';
    ssize_t w = write(fd, line, sizeof line);
    int e = w == (ssize_t)sizeof line ? 0 : (w < 0 ? errno : EIO);
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && link(tmp, path) != 0)
        e = errno;
    unlink(tmp);
    free(tmp);
    if (e == EEXIST)
        return -EEXIST;
    if (e) {
        *why = bt_xasprintf("cannot write %s: %s", path, strerror(e));
        return -e;
    }
    return 0;
}

static int read_token(const char *path, int fd, char token[BT_SERVE_TOKEN_HEX + 1], char **why)
{
    struct stat st;
    char buf[BT_SERVE_TOKEN_HEX + 2];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = bt_xasprintf("%s is not a regular file", path);
        return -EINVAL;
    }
    if (st.st_mode & 077) {
        *why = bt_xasprintf("%s can be read by others (mode %03o): remove it, or chmod 600 it",
                            path, (unsigned)(st.st_mode & 0777));
        return -EPERM;
    }
    if (st.st_uid != geteuid()) {
        *why = bt_xasprintf("%s belongs to another user", path);
        return -EPERM;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n != BT_SERVE_TOKEN_HEX || !is_hex(buf, BT_SERVE_TOKEN_HEX)) {
        *why =
            bt_xasprintf("%s does not hold a token (64 hex digits): remove it to make one", path);
        return -EINVAL;
    }
    memcpy(token, buf, BT_SERVE_TOKEN_HEX);
    token[BT_SERVE_TOKEN_HEX] = '\0';
    return 0;
}

int bt_serve_token(const char *home, char token[BT_SERVE_TOKEN_HEX + 1], char **why)
{
    char *path = bt_xasprintf("%s/serve.token", home);
    int rc = -EEXIST;
    for (int tries = 0; rc == -EEXIST && tries < 2; tries++) {
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            rc = read_token(path, fd, token, why);
            close(fd);
        } else if (errno == ENOENT) {
            rc = make_token(path, token, why); /* -EEXIST: another made it first */
        } else {
            rc = -errno;
            *why = bt_xasprintf("cannot open %s: %s", path, strerror(errno));
        }
    }
    if (rc == -EEXIST)
        *why = bt_xasprintf("cannot make %s: it came and went meanwhile", path);
    free(path);
    return rc;
}

int bt_serve_token_equal(const char *a, const char *ours)
{
    if (!a || strlen(a) != BT_SERVE_TOKEN_HEX)
        return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < BT_SERVE_TOKEN_HEX; i++)
        d |= (unsigned char)(a[i] ^ ours[i]);
    return d == 0;
}
