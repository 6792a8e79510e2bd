/* SPDX-License-Identifier: MIT */
/*
 * id: time-sortable random identifiers (see id.h for the format).
 *
 * The random digits use rejection sampling (bytes >= 252 are dropped) so each
 * digit is uniform over the 36 symbols.
 */
#include "id.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "util.h"

static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* Fill buf with n random bytes; returns 0 or a negated errno. */
static int random_bytes(unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        got += (size_t)r;
    }
    return 0;
}

/* Write BT_ID_RAND_LEN uniform base-36 digits to out. */
static int random_digits(char *out)
{
    unsigned char pool[32];
    size_t used = sizeof pool, k = 0;
    while (k < BT_ID_RAND_LEN) {
        if (used == sizeof pool) {
            int rc = random_bytes(pool, sizeof pool);
            if (rc < 0)
                return rc;
            used = 0;
        }
        unsigned char b = pool[used++];
        if (b < 252)
            out[k++] = digits[b % 36];
    }
    return 0;
}

int bt_id_new_at(char out[BT_ID_SIZE], int64_t ms)
{
    uint64_t t = ms < 0 ? 0 : (uint64_t)ms;
    for (int i = BT_ID_TIME_LEN - 1; i >= 0; i--) {
        out[i] = digits[t % 36];
        t /= 36;
    }
    int rc = random_digits(out + BT_ID_TIME_LEN);
    out[rc < 0 ? 0 : BT_ID_LEN] = '\0';
    return rc;
}

int bt_id_new(char out[BT_ID_SIZE])
{
    return bt_id_new_at(out, bt_now_ms());
}

int bt_id_valid(const char *s)
{
    if (!s)
        return 0;
    size_t n = strspn(s, digits);
    return n == BT_ID_LEN && s[n] == '\0';
}
