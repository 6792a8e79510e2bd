/* SPDX-License-Identifier: MIT */
/* error: messages and names for baton's error codes. */
#include "error.h"

#include <string.h>

const char *bt_strerror(int code)
{
    switch (code) {
#define BT_ERROR_MSG(name, value, msg)                                                             \
    case value: return msg;
        BT_ERROR_MAP(BT_ERROR_MSG)
#undef BT_ERROR_MSG
    default: break;
    }
    if (code < 0 && code > -4096)
        return strerror(-code);
    return code == 0 ? "success" : "unknown error";
}

const char *bt_err_name(int code)
{
    switch (code) {
#define BT_ERROR_NAME(name, value, msg)                                                            \
    case value: return "BT_E" #name;
        BT_ERROR_MAP(BT_ERROR_NAME)
#undef BT_ERROR_NAME
    case -ENOENT: return "ENOENT";
    case -EINVAL: return "EINVAL";
    case -ENOMEM: return "ENOMEM";
    case -EEXIST: return "EEXIST";
    case -EACCES: return "EACCES";
    case -EPIPE: return "EPIPE";
    case -ETIMEDOUT: return "ETIMEDOUT";
    case -ECANCELED: return "ECANCELED";
    case -ENOTSUP: return "ENOTSUP";
    default: return code == 0 ? "OK" : "EUNKNOWN";
    }
}
