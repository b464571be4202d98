#define _GNU_SOURCE
#include "cposix.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <grp.h>
#include <unistd.h>

extern char **environ;

static int fill_address(struct sockaddr_un *address, const char *path) {
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address->sun_path) return -ENAMETOOLONG;
    strcpy(address->sun_path, path);
    return 0;
}

int announce_unix_listen(const char *path, int backlog, mode_t mode) {
    struct sockaddr_un address;
    int status = fill_address(&address, path);
    if (status < 0) return status;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    // Only those the mode names may connect, whatever the directory's mode. Set before
    // listen(): until then a connect is refused, whatever mode bind gave. Not by the umask:
    // it is the whole process's, and another thread's files would get this mode meanwhile.
    if (chmod(path, mode) < 0 || listen(fd, backlog) < 0) {
        int error = errno;
        close(fd);
        unlink(path);
        return -error;
    }
    return fd;
}

int announce_peer_pid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    return credentials.pid;
}

int announce_peer_ids(int fd, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

#define MAX_SENT_DESCRIPTORS 250
#define MAX_RECEIVED_DESCRIPTORS 253  /* SCM_MAX_FD */

// A message of one part, with room for the control data of as many descriptors as one can carry.
struct descriptor_message {
    struct iovec part;
    struct msghdr header;
    union {
        char buffer[CMSG_SPACE(sizeof(int) * MAX_RECEIVED_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
};

static void start_message(struct descriptor_message *message, void *bytes, size_t length) {
    memset(message, 0, sizeof *message);
    message->part.iov_base = bytes;
    message->part.iov_len = length;
    message->header.msg_iov = &message->part;
    message->header.msg_iovlen = 1;
}

ssize_t announce_send_descriptors(int fd, const void *bytes, size_t length, const int *descriptors, int count) {
    if (count < 0 || count > MAX_SENT_DESCRIPTORS) return -EINVAL;
    struct descriptor_message message;
    start_message(&message, (void *)bytes, length);
    if (count > 0) {
        message.header.msg_control = message.control.buffer;
        message.header.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message.header);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(header), descriptors, sizeof(int) * count);
    }
    ssize_t sent;
    while ((sent = sendmsg(fd, &message.header, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    return sent < 0 ? -errno : sent;
}

ssize_t announce_receive_descriptors(int fd, void *buffer, size_t length, int *descriptors, int capacity, int *received) {
    struct descriptor_message message;
    start_message(&message, buffer, length);
    message.header.msg_control = message.control.buffer;
    message.header.msg_controllen = sizeof message.control.buffer;
    *received = 0;
    ssize_t got = recvmsg(fd, &message.header, MSG_CMSG_CLOEXEC);
    if (got < 0) return -errno;
    int dropped = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message.header); header; header = CMSG_NXTHDR(&message.header, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int count = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *given = (int *)CMSG_DATA(header);
        for (int index = 0; index < count; index++) {
            if (*received < capacity) descriptors[(*received)++] = given[index];
            else { close(given[index]); dropped = 1; }
        }
    }
    if (dropped || (message.header.msg_flags & MSG_CTRUNC)) {
        for (int index = 0; index < *received; index++) close(descriptors[index]);
        *received = 0;
        return -EMSGSIZE;
    }
    return got;
}

int announce_drop_privileges(uid_t uid, gid_t gid, const gid_t *groups, int count) {
    if (setgroups((size_t)count, groups) != 0) return -errno;
    if (setresgid(gid, gid, gid) != 0) return -errno;
    if (setresuid(uid, uid, uid) != 0) return -errno;
    if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) return -EPERM;
    uid_t real, effective, saved;
    if (getresuid(&real, &effective, &saved) != 0 || real != uid || effective != uid || saved != uid) return -EPERM;
    return 0;
}

long long announce_filesystem_type(int fd) {
    struct statfs filesystem;
    if (fstatfs(fd, &filesystem) != 0) return -errno;
    return (long long)(unsigned long)filesystem.f_type;
}

int announce_unix_connect(const char *path, int timeout_ms) {
    struct sockaddr_un address;
    int status = fill_address(&address, path);
    if (status < 0) return status;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (timeout_ms > 0) {
        // A Unix connect waits on a full backlog for as long as the send timeout.
        struct timeval limit = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    }
    while ((status = connect(fd, (struct sockaddr *)&address, sizeof address)) < 0 && errno == EINTR) {}
    if (status < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int announce_unix_accept(int listener) {
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/// The signals that end announce: SIGINT, SIGTERM and SIGHUP.
static void termination_signals(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

/// `handler` for each termination signal, every signal blocked while it runs.
static void handle_termination(void (*handler)(int)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigfillset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
}

int announce_termination_signalfd(void) {
    sigset_t set;
    termination_signals(&set);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return -EINVAL;
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int announce_read_signal(int fd) {
    struct signalfd_siginfo info;
    return read(fd, &info, sizeof info) == sizeof info ? (int)info.ssi_signo : 0;
}

int announce_eventfd(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int announce_dup_cloexec(int old_fd, int new_fd) {
    return dup3(old_fd, new_fd, O_CLOEXEC) < 0 ? -errno : 0;
}

int announce_cloexec_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -errno;
}

/// Spawns `path` with `actions` (destroyed here): its pid, or -errno. The child starts with no
/// signal blocked and every signal at its default (the daemon blocks and ignores some), plus
/// `flags` (a session, or a process group of its own).
static pid_t spawn(const char *path, char *const argv[], posix_spawn_file_actions_t *actions, short flags) {
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    if (flags & POSIX_SPAWN_SETPGROUP) posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    int status = posix_spawn(&pid, path, actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(actions);
    posix_spawnattr_destroy(&attributes);
    return status == 0 ? pid : -status;
}

pid_t announce_spawn_detached(const char *path, char *const argv[], const char *log_path, int ready_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_adddup2(&actions, ready_fd, 3);
    // Nothing else leaks in: a cron job's output pipe must not stay open in the daemon.
    posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    return spawn(path, argv, &actions, POSIX_SPAWN_SETSID);
}

int announce_memory_file(const char *name) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

pid_t announce_spawn_piped(const char *path, char *const argv[], int in_fd, int out_fd, int err_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    // A speech engine gets its three streams and nothing of the daemon's: no socket, no device.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    return spawn(path, argv, &actions, POSIX_SPAWN_SETPGROUP);
}

int announce_wait_exit(pid_t pid, int timeout_ms) {
    int fd = pidfd_open(pid, 0);
    if (fd < 0) return -errno;
    struct pollfd poller = { .fd = fd, .events = POLLIN };
    int ready;
    while ((ready = poll(&poller, 1, timeout_ms)) < 0 && errno == EINTR) {}
    int error = errno;
    close(fd);
    return ready < 0 ? -error : ready;
}

static char cancel_path[108];
static char *cancel_request;
static size_t cancel_length;

static volatile sig_atomic_t terminal_line_open;

void announce_set_terminal_line_open(int open) { terminal_line_open = open; }

static void cancel_and_exit(int signo) {
    // Only async-signal-safe calls: socket, connect, write, poll, read, _exit.
    if (terminal_line_open) (void)!write(STDERR_FILENO, "\n", 1);
    int fd = announce_unix_connect(cancel_path, 1000);
    if (fd >= 0) {
        size_t sent = 0;
        while (sent < cancel_length) {
            ssize_t n = write(fd, cancel_request + sent, cancel_length - sent);
            if (n <= 0) break;
            sent += (size_t)n;
        }
        struct pollfd reply = {fd, POLLIN, 0};
        char byte;
        while (poll(&reply, 1, 1000) > 0 && read(fd, &byte, 1) == 1 && byte != '\n') {}
        close(fd);
    }
    _exit(128 + signo);
}

int announce_cancel_on_signal(const char *path, const char *request, size_t length) {
    if (strlen(path) >= sizeof cancel_path) return -ENAMETOOLONG;
    char *copy = malloc(length);
    if (!copy) return -ENOMEM;
    memcpy(copy, request, length);
    sigset_t set, old;
    termination_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &old);
    free(cancel_request);
    cancel_request = copy;
    cancel_length = length;
    strcpy(cancel_path, path);
    sigprocmask(SIG_SETMASK, &old, NULL);
    handle_termination(cancel_and_exit);
    return 0;
}

static sem_t *interrupt_wake;
static volatile sig_atomic_t interrupt_signal;

static void record_interrupt(int signo) {
    if (!interrupt_signal) interrupt_signal = signo;
    if (interrupt_wake) sem_post(interrupt_wake);
}

void announce_interrupt_posting(sem_t *wake) {
    interrupt_wake = wake;
    handle_termination(record_interrupt);
}

int announce_interrupted(void) { return interrupt_signal; }

int announce_usable_processors(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        return online > 0 ? (int)online : 1;
    }
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

void announce_name_this_thread(const char *name) {
    char cut[16];
    strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = 0;
    pthread_setname_np(pthread_self(), cut);
}

void announce_set_environ(char **array) {
    extern char **environ;
    __atomic_store_n(&environ, array, __ATOMIC_RELEASE);
}
