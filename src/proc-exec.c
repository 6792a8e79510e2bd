/* SPDX-License-Identifier: MIT */
/*
 * proc-exec: programs baton starts outside a libuv loop (contract in
 * proc.h): a detached worker (double fork, a new session), the coder's
 * own terminal UI replacing baton (exec), and a program run to its end.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- detached workers ------------------------------------------------ */

/* In the grandchild, before exec: only async-signal-safe calls. */
static void worker_exec(char *const argv[], int err_fd, int notify_w, int fail_w)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
        dup2(err_fd >= 0 ? err_fd : null_fd, 2) < 0)
        goto fail;
    /* dup2 onto itself keeps close-on-exec: clear it explicitly */
    if (notify_w >= 0 && (notify_w == 3 ? fcntl(3, F_SETFD, 0) : dup2(notify_w, 3)) < 0)
        goto fail;
    execv(argv[0], argv);
fail:;
    int e = errno;
    if (write(fail_w, &e, sizeof e) < 0)
        _exit(127);
    _exit(127);
}

/* The first child: a new session, fork the worker, leave at once. */
static void worker_fork(char *const argv[], int err_fd, int notify_w, int fail_w)
{
    if (setsid() < 0) {
        int e = errno;
        if (write(fail_w, &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    pid_t pid = fork();
    if (pid == 0)
        worker_exec(argv, err_fd, notify_w, fail_w);
    if (pid < 0) {
        int e = errno;
        if (write(fail_w, &e, sizeof e) < 0)
            _exit(127);
    }
    _exit(0);
}

/* pipe(2) with both ends close-on-exec (pipe2 is not POSIX 2008). */
static int cloexec_pipe(int p[2])
{
    if (pipe(p) < 0)
        return -errno;
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

/* Wait for the first child and read the exec result from fail_r. */
static int worker_started(pid_t child, int fail_r)
{
    int status, e = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    ssize_t n;
    while ((n = read(fail_r, &e, sizeof e)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof e ? -e : 0;
}

int bt_proc_spawn_worker(char *const argv[], const char *err_path, int *notify_fd)
{
    int fail_p[2], notify_p[2] = {-1, -1}, err_fd = -1;
    if (!argv || !argv[0] || argv[0][0] != '/')
        return -EINVAL;
    int rc = cloexec_pipe(fail_p);
    if (rc)
        return rc;
    if (notify_fd && (rc = cloexec_pipe(notify_p)) != 0) {
        close(fail_p[0]);
        close(fail_p[1]);
        return rc;
    }
    if (err_path)
        err_fd = open(err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    pid_t child = fork();
    if (child == 0)
        worker_fork(argv, err_fd, notify_p[1], fail_p[1]);
    rc = child < 0 ? -errno : 0;
    close(fail_p[1]);
    if (notify_p[1] >= 0)
        close(notify_p[1]);
    if (err_fd >= 0)
        close(err_fd);
    if (rc == 0)
        rc = worker_started(child, fail_p[0]);
    close(fail_p[0]);
    if (rc == 0 && notify_fd)
        *notify_fd = notify_p[0];
    else if (notify_p[0] >= 0)
        close(notify_p[0]);
    return rc;
}

/* ---- handing the terminal over --------------------------------------- */

extern char **environ;

int bt_proc_exec(const char *dir, char *const argv[], char *const env[])
{
    if (!dir || !argv || !argv[0] || argv[0][0] != '/')
        return -EINVAL;
    if (chdir(dir) < 0)
        return -errno;
    execve(argv[0], argv, env ? env : environ);
    return -errno;
}

int bt_proc_run(char *const argv[], int quiet)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;
    if (!argv || !argv[0])
        return -EINVAL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -rc;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
