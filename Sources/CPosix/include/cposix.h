#ifndef ANNOUNCE_CPOSIX_H
#define ANNOUNCE_CPOSIX_H

// The few POSIX/Linux calls Swift's Glibc module does not give a usable
// signature for (sockaddr_un, signalfd, posix_spawn with setsid/closefrom).
// Each returns a descriptor or pid, or -errno.

#include <semaphore.h>
#include <sys/types.h>

/// A non-blocking, close-on-exec listening Unix stream socket at path, with the given mode
/// (0600: the owner only; 0660: the group too, the system queue's).
int announce_unix_listen(const char *path, int backlog, mode_t mode);
/// A blocking, close-on-exec connection to the socket at path. With timeout_ms > 0,
/// connecting (on a full backlog) and each send give up after that long (-EAGAIN).
int announce_unix_connect(const char *path, int timeout_ms);
/// The pid of the process at the other end of a connected Unix socket (SO_PEERCRED), or -errno.
int announce_peer_pid(int fd);
/// The uid and gid of the process at the other end (SO_PEERCRED, as it was at connect); 0 or -errno.
int announce_peer_ids(int fd, uid_t *uid, gid_t *gid);
/// sendmsg: up to length bytes, and the descriptors (at most 250) as SCM_RIGHTS with them.
/// The bytes sent, or -errno.
ssize_t announce_send_descriptors(int fd, const void *bytes, size_t length, const int *descriptors, int count);
/// recvmsg (MSG_CMSG_CLOEXEC): up to length bytes into buffer; descriptors that came with them
/// go to descriptors (room for capacity, at least 253) and their number to *received. Returns
/// the bytes read, 0 at the end, -errno; -EMSGSIZE when descriptors were cut off (those that
/// came are closed).
ssize_t announce_receive_descriptors(int fd, void *buffer, size_t length, int *descriptors, int capacity, int *received);
/// Becomes uid with gid as its group and groups as its supplementary ones, for good: the real,
/// effective and saved ids all change, then regaining root is checked to fail. 0 or -errno.
int announce_drop_privileges(uid_t uid, gid_t gid, const gid_t *groups, int count);
/// The filesystem magic of the file open at fd (fstatfs f_type), or -errno.
long long announce_filesystem_type(int fd);
/// Accepts one connection, non-blocking and close-on-exec; -EAGAIN when none waits.
int announce_unix_accept(int listener);
/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (threads started later
/// inherit it), ignores SIGPIPE, and returns a non-blocking signalfd for the three.
int announce_termination_signalfd(void);
/// The next pending signal number from announce_termination_signalfd, or 0.
int announce_read_signal(int fd);
/// A non-blocking, close-on-exec eventfd.
int announce_eventfd(void);
/// pipe2(fds, O_CLOEXEC); 0 or -errno.
int announce_cloexec_pipe(int fds[2]);
/// dup3(old_fd, new_fd, O_CLOEXEC): new_fd becomes old_fd's file, closed on exec; 0 or -errno.
int announce_dup_cloexec(int old_fd, int new_fd);
/// Starts argv[0]=path in a new session: stdin from /dev/null, stdout and stderr
/// appended to log_path, ready_fd as descriptor 3, every other descriptor closed.
pid_t announce_spawn_detached(const char *path, char *const argv[], const char *log_path, int ready_fd);

/// A close-on-exec anonymous memory file (memfd_create); the descriptor or -errno.
int announce_memory_file(const char *name);
/// Starts argv[0]=path with stdin, stdout and stderr on the given descriptors, in a process
/// group of its own, every other descriptor closed and every signal at its default.
pid_t announce_spawn_piped(const char *path, char *const argv[], int in_fd, int out_fd, int err_fd);
/// Waits up to timeout_ms for the process pid (a child or not) to end, every thread of it,
/// without reaping it (a pidfd polled): 1 when it has ended, 0 at the timeout, -errno.
int announce_wait_exit(pid_t pid, int timeout_ms);

/// From now on SIGINT, SIGTERM and SIGHUP send `request` (one line) over a new
/// connection to the socket at path, wait up to a second for the reply line, and
/// end the process with 128 + the signal. Copies both; call again to replace.
/// What a waiting `announce play` does when the user presses Ctrl-C.
int announce_cancel_on_signal(const char *path, const char *request, size_t length);

/// From now on SIGINT, SIGTERM and SIGHUP do not end the process: the signal is recorded
/// (`announce_interrupted`) and `wake` is posted (sem_post is async-signal-safe), so that a
/// thread waiting on it can undo what it started (a zone play's cancel) and then exit.
void announce_interrupt_posting(sem_t *wake);
/// The signal recorded since `announce_interrupt_posting`, or 0.
int announce_interrupted(void);
/// While set, those signals first end the progress line on stderr with a newline.
void announce_set_terminal_line_open(int open);
/// Names the calling thread (at most 15 bytes, longer is cut) for top -H and /proc/.../comm.
void announce_name_this_thread(const char *name);

/// Processors this process may run on (its affinity mask), at least 1.
int announce_usable_processors(void);
/// Points the process environment (environ) at `array`, which the caller keeps alive for good.
void announce_set_environ(char **array);
/// The first line of debian/changelog as it was when this was compiled, NUL-terminated:
/// `announce (VERSION) DIST; urgency=U`. The changelog is the version's one place.
const char *announce_changelog_head(void);

#endif
