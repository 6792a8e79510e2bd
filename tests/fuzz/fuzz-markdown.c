/* SPDX-License-Identifier: MIT */
/*
 * fuzz-markdown: libFuzzer target for the page's markdown (src/serve/markdown.c).
 * Whatever a model writes, the HTML out may hold only the tags cmark-gfm
 * makes for markdown, no event-handler attribute, and no link or image
 * target with a scheme that runs script.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "markdown.h"

static const char *const TAGS[] = {
    "a",  "blockquote", "br", "code",  "del",   "em", "h1", "h2",  "h3",      "h4",
    "h5", "h6",         "hr", "img",   "input", "li", "ol", "p",   "pre",     "strong",
    "ul", "table",      "tr", "thead", "tbody", "th", "td", "sup", "section",
};

static int known_tag(const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof TAGS / sizeof TAGS[0]; i++)
        if (strlen(TAGS[i]) == n && strncmp(TAGS[i], p, n) == 0)
            return 1;
    return 0;
}

/* The attributes of the tag at p (after its name), up to its '>'. */
static void check_attributes(const char *p)
{
    const char *end = strchr(p, '>');
    if (!end)
        abort();
    for (const char *q = p; q < end; q++) {
        if (*q == '"') { /* a value: skip it whole */
            const char *close = memchr(q + 1, '"', (size_t)(end - q - 1));
            if (!close)
                abort();
            const char *v = q + 1;
            while (v < close && isspace((unsigned char)*v))
                v++;
            if (strncasecmp(v, "javascript:", 11) == 0 || strncasecmp(v, "vbscript:", 9) == 0)
                abort();
            q = close;
        } else if (isspace((unsigned char)q[0]) && (q[1] == 'o' || q[1] == 'O') &&
                   (q[2] == 'n' || q[2] == 'N')) {
            abort(); /* onload=, onerror=, ... */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_buf b = BT_BUF_INIT;
    bt_markdown_html(&b, (const char *)data, size);
    bt_buf_addc(&b, '\0');
    for (const char *p = b.data; (p = strchr(p, '<')) != NULL; p++) {
        const char *name = p + 1 + (p[1] == '/');
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789");
        if (!known_tag(name, n))
            abort();
        check_attributes(name + n);
    }
    bt_buf_release(&b);
    return 0;
}
