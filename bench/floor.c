/* The floor under fence's mechanisms: runs a command under the kernel features `fence run`
 * relies on and nothing else, so that `bench/run` can show, in the same run, how much of a
 * workload's ratio to bare the kernel takes before any check is made.
 *
 *   floor [--landlock] [--notify=writes|exec|none] -- COMMAND [ARGS...]
 *
 * --landlock      a Landlock domain handling the write rights only (what `fence run`
 *                 builds with a mount view), every one of them granted beneath the current
 *                 directory, /tmp, /var/tmp and /dev (so that no workload is refused).
 * --notify=writes a seccomp filter sending to a user-space listener the calls `fence run`
 *                 has notified while writes are watched (exec, opens with a write flag, the
 *                 calls that make, remove, rename or change names and their metadata,
 *                 chdir), each answered `CONTINUE` at once by one thread, with the
 *                 synchronous wake-up (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP): the round trip
 *                 alone, without reading the path or looking at anything.
 * --notify=exec   the same for exec alone (`fence run --no-write-watch`).
 *
 * Written by hand in C: it must cost nothing of its own, and no crate does this (the
 * launcher is the measurement). Exit status: the command's (128+N for a signal), 125 for
 * the launcher's own failures. Not a sandbox: nothing here refuses anything.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Older headers lack these (kernel UAPI values). */
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

/* The write rights of Landlock's ABIs 1-3 (truncate from 3: `fence run` with a mount view
 * leaves truncation to seccomp, so it is not handled here either). */
#define LL_WRITE_RIGHTS                                                                     \
    ((1ULL << 1) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) | (1ULL << 8) |   \
     (1ULL << 9) | (1ULL << 10) | (1ULL << 11) | (1ULL << 12) | (1ULL << 13))
#define LL_REFER (1ULL << 13)

static void die(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
    exit(125);
}

static void landlock(void) {
    int abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* VERSION */);
    if (abi < 1) die("Landlock");
    uint64_t rights = LL_WRITE_RIGHTS;
    if (abi < 2) rights &= ~LL_REFER;
    struct ruleset_attr attr = {.handled_access_fs = rights};
    int rs = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr.handled_access_fs, 0);
    if (rs < 0) die("landlock_create_ruleset");
    const char *beneath[] = {".", "/tmp", "/var/tmp", "/dev"};
    for (size_t i = 0; i < sizeof beneath / sizeof beneath[0]; i++) {
        int fd = open(beneath[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct path_beneath_attr rule = {.allowed_access = rights, .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, rs, 1 /* PATH_BENEATH */, &rule, 0)) die("landlock_add_rule");
        close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0)) die("landlock_restrict_self");
    close(rs);
}

#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define NOTIFY_IF(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), \
                     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
/* Call n: notified when its open flags (argument `arg`) ask to write, else allowed. */
#define NOTIFY_IF_WRITING(n, arg)                                                          \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 4),                                        \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[arg])),      \
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 1),                           \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF), ALLOW

static int install_filter(int writes) {
    struct sock_filter writes_filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        ALLOW,
        LOAD_NR,
        /* openat/open: only with a write flag (reads are never notified). */
        NOTIFY_IF_WRITING(__NR_openat, 2),
        NOTIFY_IF_WRITING(__NR_open, 1),
        NOTIFY_IF(__NR_execve), NOTIFY_IF(__NR_execveat), NOTIFY_IF(__NR_chdir),
        NOTIFY_IF(__NR_fchdir), NOTIFY_IF(__NR_creat), NOTIFY_IF(__NR_link),
        NOTIFY_IF(__NR_linkat), NOTIFY_IF(__NR_unlink), NOTIFY_IF(__NR_unlinkat),
        NOTIFY_IF(__NR_rmdir), NOTIFY_IF(__NR_mkdir), NOTIFY_IF(__NR_mkdirat),
        NOTIFY_IF(__NR_rename), NOTIFY_IF(__NR_renameat), NOTIFY_IF(__NR_renameat2),
        NOTIFY_IF(__NR_symlink), NOTIFY_IF(__NR_symlinkat), NOTIFY_IF(__NR_mknod),
        NOTIFY_IF(__NR_mknodat), NOTIFY_IF(__NR_truncate), NOTIFY_IF(__NR_ftruncate),
        NOTIFY_IF(__NR_fallocate), NOTIFY_IF(__NR_chmod), NOTIFY_IF(__NR_fchmod),
        NOTIFY_IF(__NR_fchmodat), NOTIFY_IF(__NR_chown), NOTIFY_IF(__NR_fchown),
        NOTIFY_IF(__NR_lchown), NOTIFY_IF(__NR_fchownat), NOTIFY_IF(__NR_utime),
        NOTIFY_IF(__NR_utimes), NOTIFY_IF(__NR_utimensat), NOTIFY_IF(__NR_futimesat),
        NOTIFY_IF(__NR_setxattr), NOTIFY_IF(__NR_lsetxattr), NOTIFY_IF(__NR_fsetxattr),
        NOTIFY_IF(__NR_removexattr), NOTIFY_IF(__NR_lremovexattr),
        NOTIFY_IF(__NR_fremovexattr), NOTIFY_IF(__NR_connect),
        ALLOW,
    };
    struct sock_filter exec_filter[] = {
        LOAD_NR,
        NOTIFY_IF(__NR_execve),
        NOTIFY_IF(__NR_execveat),
        ALLOW,
    };
    struct sock_fprog prog = writes
        ? (struct sock_fprog){sizeof writes_filter / sizeof writes_filter[0], writes_filter}
        : (struct sock_fprog){sizeof exec_filter / sizeof exec_filter[0], exec_filter};
    int fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0) die("seccomp");
    return fd;
}

static void send_fd(int sock, int fd) {
    char byte = 0, control[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(sock, &msg, 0) != 1) die("sendmsg");
}

static int receive_fd(int sock) {
    char byte, control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    if (recvmsg(sock, &msg, 0) != 1) return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

int main(int argc, char **argv) {
    int use_landlock = 0, notify = 0; /* 0 none, 1 exec, 2 writes */
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "--landlock")) use_landlock = 1;
        else if (!strcmp(argv[i], "--notify=writes")) notify = 2;
        else if (!strcmp(argv[i], "--notify=exec")) notify = 1;
        else if (!strcmp(argv[i], "--notify=none")) notify = 0;
        else { fprintf(stderr, "floor: unknown option %s\n", argv[i]); return 125; }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: floor [--landlock] [--notify=writes|exec|none] -- COMMAND [ARGS...]\n");
        return 125;
    }
    char **command = argv + i + 1;
    int sv[2];
    if (notify && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) die("socketpair");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
        if (use_landlock) landlock();
        if (notify) {
            int listener = install_filter(notify == 2);
            send_fd(sv[0], listener);
            close(listener);
        }
        execvp(command[0], command);
        fprintf(stderr, "floor: %s: %s\n", command[0], strerror(errno));
        _exit(127);
    }
    if (notify) {
        close(sv[0]);
        int listener = receive_fd(sv[1]);
        if (listener < 0) {
            fprintf(stderr, "floor: no listener from the command\n");
            kill(child, SIGKILL);
            return 125;
        }
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0))
            fprintf(stderr, "floor: no synchronous wake-up here (%s)\n", strerror(errno));
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        for (;;) {
            memset(&req, 0, sizeof req);
            if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
                /* A caller gone before its call was received, or the end of the command:
                 * the listener reports POLLHUP once no process uses the filter. */
                struct pollfd p = {listener, POLLIN, 0};
                if (poll(&p, 1, 0) >= 0 && (p.revents & POLLHUP)) break;
                continue;
            }
            memset(&resp, 0, sizeof resp);
            resp.id = req.id;
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
    }
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) die("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
