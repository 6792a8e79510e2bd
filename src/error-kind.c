/* SPDX-License-Identifier: MIT */
/* error-kind: the names of the error kinds (see error-kind.h). */
#include "error-kind.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util.h"

static const char *const names[BT_ERROR_KIND__COUNT] = {
#define BT_ERROR_KIND_NAME(name, str, meaning) [BT_ERROR_KIND_##name] = (str),
    BT_ERROR_KINDS(BT_ERROR_KIND_NAME)
#undef BT_ERROR_KIND_NAME
};

const char *bt_error_kind_name(enum bt_error_kind k)
{
    return (unsigned)k < BT_ERROR_KIND__COUNT ? names[k] : NULL;
}

enum bt_error_kind bt_error_kind_parse(const char *name)
{
    if (!name)
        return BT_ERROR_KIND_NONE;
    for (int k = BT_ERROR_KIND_NONE + 1; k < BT_ERROR_KIND__COUNT; k++)
        if (strcmp(names[k], name) == 0)
            return (enum bt_error_kind)k;
    return BT_ERROR_KIND_MODEL_ERROR;
}

/* Words of a rate or usage limit or a quota, lower case: each coder's own
 * wording and the model APIs' behind them (see error-kind.h). */
static const char *const rate_words[] = {
    "rate limit",
    "rate-limit",
    "rate_limit",
    "ratelimit",
    "usage limit",
    "usage_limit",
    "usagelimit",
    "too many requests",
    "resource_exhausted",
    "resource exhausted",
    "exhausted your capacity",
    "hit your limit",
    "sessionbudgetexceeded",
};

/* A limit that names when it resets ("Weekly limit reached ∙ resets Oct
 * 9, 5pm", "limit will reset after 2h"): a limit of use, not of tokens. */
static const char *const reset_words[] = {"resets", "reset at", "reset in", "reset after",
                                          "will reset"};

/* Where word (lower case) is in text, ASCII case ignored; NULL if not. */
static const char *find(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *t = text; *t; t++) {
        size_t i = 0;
        while (i < n && t[i] && tolower((unsigned char)t[i]) == word[i])
            i++;
        if (i == n)
            return t;
    }
    return NULL;
}

/* 1 if text holds the number code on its own, not inside a longer number
 * (a port, a token count). */
static int has_status(const char *text, const char *code)
{
    size_t n = strlen(code);
    for (const char *at = strstr(text, code); at; at = strstr(at + 1, code))
        if ((at == text || !isdigit((unsigned char)at[-1])) && !isdigit((unsigned char)at[n]))
            return 1;
    return 0;
}

/* 1 if text speaks of a quota that is not a disk's ("Disk quota exceeded
 * (os error 122)", EDQUOT, is a full file system, not a limit that
 * resets). */
static int api_quota(const char *text)
{
    for (const char *at = find(text, "quota"); at; at = find(at + 1, "quota"))
        if (at - text < 5 || strncasecmp(at - 5, "disk ", 5) != 0)
            return 1;
    return 0;
}

int bt_error_text_rate_limited(const char *text)
{
    if (!text)
        return 0;
    for (size_t i = 0; i < BT_ARRAY_SIZE(rate_words); i++)
        if (find(text, rate_words[i]))
            return 1;
    if (api_quota(text))
        return 1;
    if (has_status(text, "429"))
        return 1;
    if (!find(text, "limit"))
        return 0;
    for (size_t i = 0; i < BT_ARRAY_SIZE(reset_words); i++)
        if (find(text, reset_words[i]))
            return 1;
    return 0;
}

char *bt_error_text_readable(const char *text)
{
    const char *bar = text ? strrchr(text, '|') : NULL;
    if (!bar || bar == text)
        return NULL;
    size_t digits = strspn(bar + 1, "0123456789");
    if (digits < 9 || digits > 13 || bar[1 + digits] != '\0')
        return NULL;
    int64_t at = 0;
    for (size_t i = 1; i <= digits; i++)
        at = at * 10 + (bar[i] - '0');
    if (digits > 11)
        at /= 1000; /* milliseconds */
    time_t tt = (time_t)at;
    struct tm tm;
    char when[32];
    if (!gmtime_r(&tt, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm))
        return NULL;
    return bt_xasprintf("%.*s (resets %s)", (int)(bar - text), text, when);
}
