/* SPDX-License-Identifier: MIT */
/* main: the baton command line; dispatches to cmd-*.c. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "baton: not yet\n");
    return 2;
}
