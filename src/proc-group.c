/* SPDX-License-Identifier: MIT */
/*
 * proc-group: processes and groups seen from outside, through kill(2) and
 * /proc (contract in proc.h): whether a pid is the process it was (its
 * start time), whether a group may still live, stopping a group nobody
 * owns any more, and finding a run's processes by the tag in their
 * environment. Blocking calls, for recovery and commands; the libuv child
 * of proc.c uses only bt_proc_group_alive.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ---- a process's identity -------------------------------------------- */

/* Parse /proc/<pid>/stat: state letter and start time (field 22). */
static int read_proc_stat(int pid, char *state, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return n < 0 && errno != ESRCH ? -EIO : -ESRCH;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'), *save = NULL, *tok;
    if (!p || p[1] != ' ')
        return -EIO;
    *state = p[2];
    tok = strtok_r(p + 1, " ", &save); /* field 3 */
    for (int field = 3; tok && field < 22; field++)
        tok = strtok_r(NULL, " ", &save);
    if (!tok)
        return -EIO;
    *start = strtoull(tok, NULL, 10);
    return 0;
}

int bt_proc_pid_start(int pid, uint64_t *start)
{
    char state = 0;
    *start = 0;
    if (pid <= 0)
        return -ESRCH;
    int rc = read_proc_stat(pid, &state, start);
    if (rc == 0 && (state == 'Z' || state == 'X')) {
        *start = 0;
        return -ESRCH;
    }
    return rc;
}

int bt_proc_pid_gone(int pid, uint64_t start)
{
    uint64_t now = 0;
    if (pid <= 0)
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    int rc = bt_proc_pid_start(pid, &now);
    if (rc == -ESRCH)
        return 1;
    return rc == 0 && start != 0 && now != start;
}

/* ---- process groups -------------------------------------------------- */

int bt_proc_group_alive(int pgid)
{
    /* kill(0) and kill(-1) would mean our group, or everyone; and our own
     * group is never a run's (a coder leads its own) */
    if (pgid <= 1 || pgid == (int)getpgrp())
        return 0;
    return kill(-pgid, 0) == 0 || errno == EPERM;
}

int bt_proc_group_kill(int pgid, unsigned grace_ms)
{
    if (pgid == (int)getpgrp())
        return 0; /* refused: it is alive, we are in it */
    if (pgid <= 1)
        return 1;
    kill(-pgid, SIGTERM);
    kill(-pgid, SIGCONT); /* a stopped process cannot act on SIGTERM */
    for (unsigned waited = 0; waited < grace_ms && bt_proc_group_alive(pgid); waited += 20)
        usleep(20000);
    if (bt_proc_group_alive(pgid))
        kill(-pgid, SIGKILL);
    /* members are reparented to init, which reaps them in its own time */
    for (unsigned waited = 0; waited < BT_PROC_REAP_WAIT_MS && bt_proc_group_alive(pgid);
         waited += 20)
        usleep(20000);
    return !bt_proc_group_alive(pgid);
}

/* ---- a run's processes by their tag ---------------------------------- */

/* 1 if process pid's environment holds exactly the entry tag. */
static int has_tag(long pid, const char *tag)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    size_t len;
    char *env = bt_read_file(path, &len);
    if (!env) /* gone, or not ours to read */
        return 0;
    int found = 0;
    for (size_t i = 0; i < len && !found; i += strlen(env + i) + 1)
        found = strcmp(env + i, tag) == 0;
    free(env);
    return found;
}

/* SIGKILL the tagged processes; their pids into pids (at most cap). */
static size_t kill_tagged_once(const char *tag, pid_t *pids, size_t cap)
{
    DIR *d = opendir("/proc");
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid() || !has_tag(pid, tag))
            continue;
        if (kill((pid_t)pid, SIGKILL) == 0 && n < cap)
            pids[n++] = (pid_t)pid;
    }
    if (d)
        closedir(d);
    return n;
}

int bt_proc_kill_tagged(const char *run)
{
    if (!run || !*run)
        return 0;
    char *tag = bt_xasprintf("%s=%s", BT_PROC_RUN_TAG, run);
    pid_t pids[256];
    /* twice: a process may fork while the first pass runs */
    size_t n = kill_tagged_once(tag, pids, 256);
    n += kill_tagged_once(tag, pids + n, 256 - n);
    for (size_t i = 0; i < n; i++)
        for (unsigned waited = 0; waited < BT_PROC_REAP_WAIT_MS && kill(pids[i], 0) == 0;
             waited += 20)
            usleep(20000);
    free(tag);
    return (int)n;
}

int bt_proc_stop_orphan(int pgid, uint64_t child_start, const char *run)
{
    uint64_t start = 0;
    int rc = pgid > 0 ? bt_proc_pid_start(pgid, &start) : -ESRCH;
    int n = 0;
    /* Linux does not reuse a pid while a group of that id lives: a leader
     * that is gone leaves the group safe to signal; a live leader must have
     * the start time recorded for the run (unknown: leave it alone) */
    if (pgid > 0 && !(rc == 0 && (!child_start || start != child_start)))
        n += bt_proc_group_kill(pgid, 1000) ? 1 : 0;
    /* whatever of the run is left: its group was never recorded, or a
     * process left the group (both carry the run's tag) */
    return n + bt_proc_kill_tagged(run);
}
