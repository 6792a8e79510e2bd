/* SPDX-License-Identifier: MIT */
/*
 * error: baton's error codes. Functions return 0 on success or a negative
 * code: either a negated errno value (-ENOENT, -EINVAL, ...) or one of the
 * BT_E* codes below, which live outside the errno range.
 */
#ifndef BT_ERROR_H
#define BT_ERROR_H

#include <errno.h>

/* X(name, value, message) */
#define BT_ERROR_MAP(X)                                                                            \
    X(TOOBIG, -10001, "input exceeds its size limit")                                              \
    X(PROTO, -10002, "coder protocol error")                                                       \
    X(NOTFOUND, -10003, "not found")                                                               \
    X(AMBIGUOUS, -10004, "ambiguous prefix")                                                       \
    X(NOTINSTALLED, -10005, "coder not installed")                                                 \
    X(STORE, -10006, "store error")                                                                \
    X(BUSY, -10007, "busy")                                                                        \
    X(USAGE, -10008, "usage error")                                                                \
    X(SCHEMA, -10009, "store schema is newer than this baton")                                     \
    X(CORRUPT, -10010, "the data is damaged")                                                      \
    X(CONFLICT, -10011, "conflicting changes")

enum bt_error {
#define BT_ERROR_ENUM(name, value, msg) BT_E##name = (value),
    BT_ERROR_MAP(BT_ERROR_ENUM)
#undef BT_ERROR_ENUM
};

/* A static, lower-case message for any code returned by baton functions
 * (BT_E* or negated errno). Never NULL. */
const char *bt_strerror(int code);
/* The symbolic name ("BT_EPROTO", "ENOENT", ...). Never NULL. */
const char *bt_err_name(int code);

#endif
