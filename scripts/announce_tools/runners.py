"""Timed runs of a player: a reference player (mpg123, aplay, sox) on its own, announce as its
client plus the daemon's share (Counted), and rounds of both interleaved."""
import ctypes
import os
import shlex
import signal
import tempfile
import time

from .daemons import Daemon
from .proc import proc_cpu_ns, reset_hwm, status_kib, switches, switches_since

REFERENCE = {"mp3": ["mpg123", "-q", "-o", "alsa", "-a", "null"], "wav": ["aplay", "-q", "-D", "null"]}
SOX = ["sox", "-q", "{}", "-t", "alsa", "null"]

# A player run: fork, exec under ptrace to read VmHWM at the exit stop (wait4's ru_maxrss would
# count the forking Python's RSS), rusage from wait4.
_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_TRACEME, PTRACE_CONT, PTRACE_SETOPTIONS = 0, 7, 0x4200
PTRACE_O_TRACEEXIT, PTRACE_O_EXITKILL, PTRACE_EVENT_EXIT = 0x40, 0x100000, 6


def _ptrace(request, pid, data=0):
    return _libc.ptrace(request, pid, None, ctypes.c_void_p(data))


def run_once(argv, env=None):
    """{exit, cpu, wall, rss_kib, ctxsw, stderr} of one run of argv, stdin/stdout on /dev/null."""
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err.fileno(), 2)
            if _ptrace(PTRACE_TRACEME, 0) == 0:
                os.execvpe(argv[0], argv, env if env is not None else os.environ)
        finally:
            os._exit(127)
    mem, traced = {}, False
    while True:
        _, status, ru = os.wait4(pid, 0)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            wall = time.perf_counter() - t0
            break
        sig, event = os.WSTOPSIG(status), status >> 16
        if not traced and sig == signal.SIGTRAP and event == 0:  # the stop after exec
            _ptrace(PTRACE_SETOPTIONS, pid, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
            traced = True
            _ptrace(PTRACE_CONT, pid)
        elif sig == signal.SIGTRAP and event == PTRACE_EVENT_EXIT:
            mem = status_kib(pid)
            _ptrace(PTRACE_CONT, pid)
        else:
            _ptrace(PTRACE_CONT, pid, sig)
    err.seek(0)
    return {"exit": os.waitstatus_to_exitcode(status), "cpu": ru.ru_utime + ru.ru_stime, "wall": wall,
            "rss_kib": mem.get("VmHWM", 0), "ctxsw": ru.ru_nvcsw + ru.ru_nivcsw,
            "stderr": err.read().decode(errors="replace")[-1000:]}


class Counted:
    """A daemon whose CPU, VmHWM and context switches around each client run are added to
    the client's: from just before the client starts until the daemon has closed the
    device again after the item (it closes an idle device after 100 ms)."""

    def __init__(self, bench, warm_clip):
        self.d = Daemon(bench, "players")
        self.env = self.d.env
        run_once([bench.bin, "play", "-q", "-d", "null", warm_clip], self.env)  # first-use set-up, uncounted
        self.d.wait_closed()

    def run(self, argv):
        d = self.d
        d.drain()
        d.opened = 0
        if not reset_hwm(d.pid):  # else the peak would be an earlier run's
            raise RuntimeError(f"cannot reset the daemon's VmHWM (/proc/{d.pid}/clear_refs)")
        cpu0, sw0 = proc_cpu_ns(d.pid), switches(d.pid)
        client = run_once(argv, self.env)
        cpu_exit, sw1 = proc_cpu_ns(d.pid), switches(d.pid)
        d.drain()
        while d.opened == 0 or d.open:
            d.until(lambda m: m.get("event", "").startswith("device-"), "device-opened/closed after the client")
        daemon_cpu = (proc_cpu_ns(d.pid) - cpu0) / 1e9
        drss = status_kib(d.pid).get("VmHWM", 0)
        return dict(client, cpu=client["cpu"] + daemon_cpu, ctxsw=client["ctxsw"] + switches_since(sw0, sw1),
                    rss_kib=max(client["rss_kib"], drss), client_cpu=client["cpu"], daemon_cpu=daemon_cpu,
                    daemon_cpu_to_exit=(cpu_exit - cpu0) / 1e9, client_rss_kib=client["rss_kib"], daemon_rss_kib=drss)


def interleaved(b, cmds, counted, rounds, env=None):
    """{name: [run]} of `rounds` rounds of every command, interleaved so drift hits them alike;
    the `announce…` ones through `counted` (client + daemon), which is stopped at the end."""
    runs = {p: [] for p in cmds}
    try:
        for _ in range(rounds):
            for p, argv in cmds.items():
                rec = counted.run(argv) if p.startswith("announce") else run_once(argv, env)
                if rec["exit"] != 0:
                    raise RuntimeError(f"{shlex.join(argv)} exited {rec['exit']}: {rec['stderr']}")
                runs[p].append({k: v for k, v in rec.items() if k not in ("stderr", "exit")})
    finally:
        counted.d.stop()
        b.cleanups.remove(counted.d.stop)
    return runs
