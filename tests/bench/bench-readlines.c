/* SPDX-License-Identifier: MIT */
/*
 * bench-readlines: the reference reader for the throughput benchmark: read
 * a JSON-lines file in 64 KiB reads, split it on LF and parse every line
 * with cJSON (then free it), as the simplest C client of a coder's stream
 * would. Timed as a whole process by bench-time beside `baton run` on the
 * same recorded stream (bench.sh). Prints the count of lines and of lines
 * that did not parse on stderr; exit status 1 if the file cannot be read.
 *
 * usage: bench-readlines FILE
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 65536

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench-readlines FILE\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror("bench-readlines");
        return 1;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    long lines = 0, bad = 0;
    for (;;) {
        if (cap - len < CHUNK) {
            char *grown = realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        size_t off = 0;
        char *nl;
        while ((nl = memchr(buf + off, '\n', len - off)) != NULL) {
            cJSON *j = cJSON_ParseWithLength(buf + off, (size_t)(nl - (buf + off)));
            bad += j == NULL;
            lines++;
            cJSON_Delete(j);
            off = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + off, len - off);
        len -= off;
    }
    close(fd);
    free(buf);
    fprintf(stderr, "bench-readlines: %ld lines, %ld not JSON\n", lines, bad);
    return 0;
}
