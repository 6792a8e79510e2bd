/* SPDX-License-Identifier: MIT */
/*
 * input: the checks of a turn's settings (input.h).
 */
#include "input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "service.h"
#include "util.h"

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return 0;
    return 1;
}

char *bt_input_prompt_problem(const char *s, size_t n)
{
    if (n > BT_SERVICE_PROMPT_MAX)
        return bt_xasprintf("the prompt is larger than %zu MiB", BT_SERVICE_PROMPT_MAX >> 20);
    if (memchr(s, '\0', n))
        return bt_xstrdup("the prompt contains a NUL byte");
    size_t bad = bt_utf8_invalid_at(s, n);
    if (bad < n)
        return bt_xasprintf("the prompt is not valid UTF-8 (byte %zu)", bad);
    if (is_blank(s, n))
        return bt_xstrdup("the prompt is empty");
    return NULL;
}

const char *bt_input_model_problem(const char *m)
{
    size_t n = strlen(m);
    if (n == 0)
        return "a model name is not empty (without one the coder uses its own)";
    if (n > 256 || bt_utf8_invalid_at(m, n) != n)
        return "a model name is up to 256 bytes of UTF-8 text";
    for (const unsigned char *p = (const unsigned char *)m; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return "a model name has no control characters";
    /* runners put it in argv (claude --model, pi, handoff) and refuse one
     * that could be read as an option, later and less clearly */
    if (m[0] == '-')
        return "a model name does not start with '-'";
    return NULL;
}

char *bt_input_cwd(const char *dir, char **abs)
{
    struct stat st;
    *abs = realpath(dir, NULL);
    const char *why = NULL;
    if (!*abs || stat(*abs, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (bt_utf8_invalid_at(*abs, strlen(*abs)) < strlen(*abs))
        why = "its name is not valid UTF-8";
    if (!why)
        return NULL;
    char *msg = bt_xasprintf("cannot use '%s' as the working directory: %s", dir, why);
    free(*abs);
    *abs = NULL;
    return msg;
}
