"""Daemons in private runtime directories, on the one client (client.py): Runtime, a directory
and the daemons started in it (stress.py's parts, and bench.py's through Daemon), and Daemon,
bench.py's daemon that follows its own events."""
import json
import os
import select
import shutil
import signal
import subprocess
import time

from .client import Conn
from .config import TMPFS
from .proc import fresh_dir, run


def tail(log, lines=4):
    """The last lines of a daemon's log, for an error message."""
    try:
        return " | ".join(open(log, errors="replace").read().splitlines()[-lines:])
    except (OSError, TypeError):
        return "(no log)"


def lock_pid(rundir):
    """The pid in RUNDIR/daemon.lock, the daemon that holds it (ValueError when it is empty)."""
    return int((open(os.path.join(rundir, "daemon.lock")).read().split() or [""])[0])


class Runtime:
    """A private ANNOUNCE_RUNTIME_DIR: the environment that sends clients and daemons to it,
    requests on its socket, and the daemons started in it."""

    def __init__(self, binary, path, env=None):
        self.binary, self.path = binary, path
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
        self.env = dict(env or os.environ, ANNOUNCE_RUNTIME_DIR=path)
        self.daemons = []

    @classmethod
    def isolated(cls, binary, path):
        """One that nothing of the caller's reaches: none of its ANNOUNCE_, XDG_ and PULSE
        variables, and an empty config directory of its own beside path."""
        config = os.path.join(os.path.dirname(path), "config-" + os.path.basename(path))
        os.makedirs(config, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANNOUNCE_", "XDG_", "PULSE"))}
        return cls(binary, path, dict(env, XDG_CONFIG_HOME=config))

    @property
    def socket_path(self):
        return os.path.join(self.path, "socket")

    def connect(self, timeout=120):
        return Conn(self.socket_path, timeout)

    def request(self, line, timeout=10):
        """One request line (bytes, sent as they are) on a fresh connection: the decoded reply,
        or None (no daemon, no reply, or not JSON)."""
        try:
            with self.connect(timeout) as c:
                c.send_raw(line + b"\n")
                return json.loads(c.line())
        except (OSError, ValueError):
            return None

    def status(self):
        reply = self.request(b'{"v":1,"op":"status"}', timeout=5)
        return reply.get("status") if reply and reply.get("ok") else None

    def pending(self):
        status = self.status()
        if status is None:
            return None
        return ([status["playing"]] if status.get("playing") else []) + status["queued"] + status["scheduled"]

    def wait_drained(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pending = self.pending()
            if pending == []:
                return True
            time.sleep(0.1)
        return False

    def announce(self, *args, timeout=30):
        """`announce ARGS` here: (status, stdout, stderr), status None on a timeout."""
        return run([self.binary, *args], env=self.env, timeout=timeout)

    def cli(self, *args):
        """`announce ARGS` here: its stdout; RuntimeError unless it exits 0."""
        r = subprocess.run([self.binary, *args], env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"announce {' '.join(args)} exited {r.returncode}: {r.stderr[-300:]}")
        return r.stdout.strip()

    def spawn(self, log, device="null", ready=None, wrap=()):
        """`announce daemon --device DEVICE` here, its output appended to log (None: dropped),
        under the command wrap (valgrind) if any. ready: seconds to wait for its word on
        --ready-fd, else it is killed (RuntimeError); None: no --ready-fd."""
        argv = [*wrap, self.binary, "daemon", "--device", device]
        r = w = None
        if ready is not None:
            r, w = os.pipe()
            argv += ["--ready-fd", str(w)]
        out = open(log, "ab") if log else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                    pass_fds=() if w is None else (w,))
        except OSError:
            if r is not None:
                os.close(r)
            raise
        finally:
            if log:
                out.close()
            if w is not None:
                os.close(w)
        self.daemons.append(proc)
        if ready is not None:
            said = select.select([r], [], [], ready)[0] and os.read(r, 64)
            os.close(r)
            if not said or said.strip() != b"ready":
                proc.kill()
                raise RuntimeError(f"announce daemon did not start in {self.path}: {tail(log)}")
        return proc

    def start_daemon(self, log):
        """A daemon on `null`, once `status` answers with its pid: not one a client started."""
        daemon = self.spawn(log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = self.status()
            if status and status["pid"] == daemon.pid:
                return daemon
            if daemon.poll() is not None:
                raise RuntimeError(f"announce daemon exited {daemon.returncode}; see {log}")
            time.sleep(0.02)
        raise RuntimeError(f"announce daemon did not answer within 30 s; see {log}")

    def stop(self):
        # The daemon answering now may be one a client auto-started: ours too.
        status = self.status()
        if status and all(daemon.pid != status["pid"] for daemon in self.daemons):
            os.kill(status["pid"], signal.SIGTERM)
        for daemon in self.daemons:
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGCONT)
                daemon.terminate()
                try:
                    daemon.wait(10)
                except subprocess.TimeoutExpired:
                    daemon.kill()
                    daemon.wait()


class Daemon:
    """`announce daemon --device DEV` in a fresh private runtime directory, with (events=True) an
    `events` connection that tracks the device (open or closed) and the finished items. Without
    one where nothing reads events: unread, they would fill the socket and then the daemon's memory.
    bench is what it runs for: its binary (bin), and its cleanups, where stop goes."""

    def __init__(self, bench, name, device="null", base=TMPFS, env=None, events=True):
        self.runtime = Runtime(bench.bin, fresh_dir(os.path.join(base, f"ab{os.getpid()}-{name}")), env)
        self.rundir, self.env = self.runtime.path, self.runtime.env
        self.bin, self.device = bench.bin, device
        self.log = os.path.join(self.rundir, "daemon.log")
        self.proc = self.runtime.spawn(self.log, device, ready=10)
        self.pid = self.proc.pid
        self.open, self.opened, self.format, self.finished = False, 0, None, {}
        self.ev = self.connect() if events else None
        if events:
            self.ev.call({"op": "events"})
        bench.cleanups.append(self.stop)

    def tail(self):
        return tail(self.log)

    def connect(self):
        return self.runtime.connect()

    def absorb(self, m):
        kind = m.get("event")
        if kind == "device-opened":
            self.open, self.format, self.opened = True, m.get("format"), self.opened + 1
        elif kind == "device-closed":
            self.open = False
        elif kind == "finished":
            self.finished[m["id"]] = m

    def until(self, pred, what, timeout=10.0):
        try:
            return self.ev.until(pred, what, timeout, self.absorb)
        except RuntimeError as e:
            raise RuntimeError(f"{e} ({self.tail()})") from None

    def drain(self):
        for m in self.ev.pending():
            self.absorb(m)

    def wait_closed(self, timeout=10.0):
        self.drain()
        if self.open:
            self.until(lambda m: not self.open, "device-closed", timeout)

    def cli(self, *args):
        return self.runtime.cli(*args)

    def stop(self):
        if self.proc.poll() is None:
            if self.ev:
                self.ev.close()
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise RuntimeError(f"the daemon in {self.rundir} did not exit within 10 s of SIGTERM")
            if code != 0:
                raise RuntimeError(f"the daemon in {self.rundir} exited {code}: {self.tail()}")
        shutil.rmtree(self.rundir, ignore_errors=True)
