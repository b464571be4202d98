"""Helpers for benchmarking the announce daemon (Python standard library only).

Used by scripts/measure.py (announce rows: client + daemon), scripts/bench/daemon.py (the
daemon section) and scripts/bench/profile.py.

Reading another process's CPU time
  proc_cpu_ns(pid)   the process's CPU clock (clock_gettime on the clock id that
                     clock_getcpuclockid(pid) returns, CPUCLOCK_SCHED): nanoseconds on CPU of
                     every thread, those that already exited included. It is the same counter
                     as /proc/PID/task/*/schedstat's first field, but a sum over task/* loses
                     the time of threads that ended (the daemon's playback thread ends when the
                     device is closed), and /proc/PID/stat's utime+stime are in clock ticks
                     (10 ms at USER_HZ=100).
  tasks_schedstat_ns(pid), tasks_ctxsw(pid)
                     per live thread: on-CPU ns and voluntary + involuntary context switches.
  stat_ticks(pid)    utime, stime from /proc/PID/stat (all threads, exited ones too), in ticks.
  threads_cpu_ns(pid)
                     per live thread: (name from /proc/PID/task/TID/comm, on-CPU ns).

The paced device (Tests/Shell/paced-audio.sh)
  paced_env(dir, env)  env plus what `source DIR/env` exports, a client.conf without shared
                       memory (see there), and ALSA_CONFIG_PATH pointing at a configuration
                       that defines the ALSA PCM "pulse" when the bench pinned ALSA's
                       configuration (scripts/bench.sh removes the conf.d hooks that define it).
  paced_check(dir)     raises, with the end of its log, when the paced PulseAudio is gone.

The sections' scripts (scripts/bench/alert.py, daemon.py, mixing.py)
  logger(name)         log(msg) printing "bench: NAME: msg".
  ms(x), stats_ms(values, tail)
                       seconds to milliseconds; n, p50, p<tail>, max, min in ms.
  Conn.until(...)      the next event that matches, or an error naming what did not come.
  Daemon.stop_checked()  SIGTERM, and an error unless it exits 0.
  cleanup(items, dirs, log)
                       stops what is left (errors logged), removes the directories.
  rerender(argv, render), write_section(out, res, render, log, t0)
                       `SCRIPT --render OUT.json`; OUT.json written, verdicts printed.
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
CPUCLOCK_SCHED = 2


def proc_cpu_ns(pid):
    # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED), what glibc's clock_getcpuclockid() returns.
    return time.clock_gettime_ns(((~pid) << 3) | CPUCLOCK_SCHED)


def _tids(pid):
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def tasks_schedstat_ns(pid):
    total = 0
    for tid in _tids(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def tasks_ctxsw(pid):
    """{tid: voluntary + nonvoluntary context switches} for the live threads."""
    out = {}
    for tid in _tids(pid):
        n = 0
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except OSError:
            continue
        out[tid] = n
    return out


def ctxsw_delta(before, after):
    """Switches between two tasks_ctxsw() readings; threads born in between count from 0.
    Threads that ended in between are lost (their counts are not kept anywhere readable)."""
    return sum(n - before.get(tid, 0) for tid, n in after.items())


def threads_cpu_ns(pid):
    """{tid: (comm, on-CPU ns)} for the live threads (the first schedstat field)."""
    out = {}
    for tid in _tids(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[int(tid)] = (comm, int(f.read().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return out


# The ALSA PCM "pulse" as Debian's /etc/alsa/conf.d/99-pulse.conf defines it (without its hint).
PULSE_PCM = """
# scripts/bench/announced.py: the ALSA PCM "pulse" for the paced device (libasound2-plugins)
pcm.pulse {
	@args [ DEVICE ]
	@args.DEVICE { type string default "" }
	type pulse
	device $DEVICE
}
ctl.pulse {
	@args [ DEVICE ]
	@args.DEVICE { type string default "" }
	type pulse
	device $DEVICE
}
"""


def paced_env(paced_dir, env=None):
    """The environment for an ALSA client of the paced PulseAudio that Tests/Shell/paced-audio.sh
    started in paced_dir: its DIR/env exports, and with a pinned ALSA configuration
    (ALSA_CONFIG_PATH set, as scripts/bench.sh does) a copy of it that also defines "pulse"."""
    env = dict(os.environ if env is None else env)
    with open(os.path.join(paced_dir, "env")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("export ") and "=" in line:
                key, value = line[len("export "):].split("=", 1)
                env[key] = value
    # No shared memory between libpulse and the server: Debian 12's PulseAudio 16.1 sometimes
    # aborts ("memblock.c: Assertion 'pa_atomic_load(&b->pool->stat.imported_size) >= ...'") when
    # a client that sent audio through shm closes its stream or exits, which the benches do often.
    # Over the socket each block is copied once more (192 kB/s per device stream here).
    conf = os.path.join(paced_dir, "bench-client.conf")
    base = ""
    if env.get("PULSE_CLIENTCONFIG") and os.path.exists(env["PULSE_CLIENTCONFIG"]):
        base = open(env["PULSE_CLIENTCONFIG"]).read()
    with open(conf + ".tmp", "w") as f:
        f.write(base + ("" if base.endswith("\n") or not base else "\n") + "enable-shm = no\n")
    os.replace(conf + ".tmp", conf)
    env["PULSE_CLIENTCONFIG"] = conf
    pinned = env.get("ALSA_CONFIG_PATH")
    if pinned:
        path = os.path.join(paced_dir, "alsa-pulse.conf")
        with open(pinned) as src, open(path + ".tmp", "w") as dst:
            dst.write(src.read() + PULSE_PCM)
        os.replace(path + ".tmp", path)
        env["ALSA_CONFIG_PATH"] = path
    return env


def paced_pid(paced_dir):
    """The paced PulseAudio's pid (Tests/Shell/paced-audio.sh writes DIR/pulseaudio.pid)."""
    try:
        return int(open(os.path.join(paced_dir, "pulseaudio.pid")).read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def paced_check(paced_dir):
    pid = paced_pid(paced_dir)
    if pid is None or not alive(pid):
        try:
            tail = " | ".join(open(os.path.join(paced_dir, "pulseaudio.log"), errors="replace").read().splitlines()[-2:])
        except OSError:
            tail = "(no log)"
        raise RuntimeError(f"the paced PulseAudio ({paced_dir}) is gone: {tail}")


def stat_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])  # utime, stime (fields 14 and 15)


def status_kib(pid, keys=("VmHWM", "VmRSS", "RssAnon", "RssFile")):
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in keys:
                    found[key] = int(line.split()[1])
    except OSError:
        pass
    return found


def reset_hwm(pid):
    """Resets the process's VmHWM to its current RSS (Linux ≥ 4.0, clear_refs 5)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def fresh_dir(path):
    """An empty 0700 directory at path (removing what was there)."""
    import shutil
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)
    return path


def daemon_argv(binary, device="null", idle_exit=None):
    argv = [binary, "daemon", "--device", device]
    if idle_exit:
        argv += ["--idle-exit", idle_exit]
    return argv


class Daemon:
    """`announce daemon` started by us, in its own runtime directory; ready once it listens."""

    def __init__(self, argv, rundir, env=None, log=None, timeout=10.0):
        """argv: e.g. daemon_argv(BIN, "null"), possibly behind valgrind/strace/perf."""
        self.rundir = rundir
        self.env = dict(env if env is not None else os.environ)
        self.env["ANNOUNCE_RUNTIME_DIR"] = rundir
        argv = list(argv)
        r, w = os.pipe()
        argv += ["--ready-fd", str(w)]
        self.log_path = log or os.path.join(rundir, "daemon.log")
        logf = open(self.log_path, "ab")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                     pass_fds=(w,))
        os.close(w)
        logf.close()
        word = b""
        deadline = time.monotonic() + timeout
        while not word.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                break
            chunk = os.read(r, 64)
            if not chunk:
                break
            word += chunk
        os.close(r)
        self.ready_seconds = time.perf_counter() - t0
        if word.strip() != b"ready":
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"announce daemon did not start in {rundir} (said {word!r}); "
                               f"log: {self.log_tail()}")
        # With a prefix (valgrind, strace, perf) the daemon may not be our child: the lock names it.
        self.pid = int(open(os.path.join(rundir, "daemon.lock")).read().split()[0])
        self.socket_path = os.path.join(rundir, "socket")

    def log_tail(self, n=5):
        try:
            return " | ".join(open(self.log_path, errors="replace").read().splitlines()[-n:])
        except OSError:
            return "(no log)"

    def connect(self):
        return Conn(self.socket_path)

    def stop(self, timeout=10.0):
        """SIGTERM, then wait; returns (exit status, rusage or None, seconds to exit)."""
        t0 = time.perf_counter()
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        ru = None
        status = None
        while time.monotonic() < deadline:
            pid, st, r = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                status, ru = st, r
                break
            time.sleep(0.005)
        if status is None:
            self.proc.kill()
            _, status, ru = os.wait4(self.proc.pid, 0)
            raise RuntimeError(f"announce daemon (pid {self.pid}) did not exit within {timeout} s of SIGTERM")
        code = os.waitstatus_to_exitcode(status)
        return code, ru, time.perf_counter() - t0

    def stop_checked(self):
        """stop(), and RuntimeError unless the daemon exited 0."""
        code, _, _ = self.stop()
        if code != 0:
            raise RuntimeError(f"the daemon in {self.rundir} exited {code} after SIGTERM: {self.log_tail()}")


class Conn:
    """One NDJSON connection to the daemon."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, obj):
        obj = dict(obj)
        obj.setdefault("v", 1)
        self.sock.sendall(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def next(self, timeout=None):
        """The next message; None on timeout (when a timeout is given)."""
        while b"\n" not in self.buf:
            if timeout is not None:
                r, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
                if not r:
                    return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def pending(self):
        """Every message already received, without waiting."""
        out = []
        while True:
            m = self.next(timeout=0)
            if m is None:
                return out
            out.append(m)

    def until(self, pred, timeout, each=None, missing=None):
        """The first message m read within timeout seconds for which pred(m) holds, each(m)
        called first on every message read (when given); when none comes, RuntimeError(missing())."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            m = self.next(timeout=left) if left > 0 else None
            if m is None:
                raise RuntimeError(missing() if missing else f"no matching message within {timeout:g} s")
            if each is not None:
                each(m)
            if pred(m):
                return m

    def call(self, obj):
        """Sends a request and returns its reply (events before it are returned too)."""
        self.send(obj)
        events = []
        while True:
            m = self.next()
            if "event" in m:
                events.append(m)
                continue
            if not m.get("ok"):
                raise RuntimeError(f"daemon refused {obj.get('op')}: {m.get('error')}")
            return m, events


def item(path, **kw):
    clip = {"path": path, "gain": 1, "pan": 0, "loops": kw.pop("loops", 0)}
    if "device" in kw:
        clip["device"] = kw.pop("device")
    return dict(clip=clip, **kw)


def write_tone(path, rate, seconds, freq, amplitude=0.1, fade=0.01):
    """A 16-bit stereo WAV of a sine (freq Hz; the right channel a fifth higher), with
    fade-seconds ramps at both ends (fade=0: none, so that integer frequencies loop
    seamlessly). Made once per path: an existing file is kept (its parameters are in its
    name, by the callers' convention)."""
    import array
    import math
    import wave
    if os.path.exists(path):
        return path
    n = int(round(rate * seconds))
    full = 32767 * amplitude
    # Without fades, one second holds whole periods of integer frequencies: computed once, repeated.
    periodic = fade == 0 and float(freq).is_integer() and float(freq * 1.5).is_integer()
    m = min(n, rate) if periodic else n
    ramp = max(1, int(rate * fade))
    pcm = array.array("h", bytes(4 * m))
    for i in range(m):
        g = full if fade == 0 else full * min(1.0, i / ramp, (n - 1 - i) / ramp)
        pcm[2 * i] = int(g * math.sin(2 * math.pi * freq * i / rate))
        pcm[2 * i + 1] = int(g * math.sin(2 * math.pi * freq * 1.5 * i / rate))
    if sys.byteorder != "little":
        pcm.byteswap()
    one = pcm.tobytes()
    data = one * (n // m) + one[:4 * (n % m)]
    tmp = path + ".tmp"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data)
    os.replace(tmp, path)
    return path


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of values."""
    s = sorted(values)
    if not s:
        return None
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def ms(x):
    return x * 1e3


def stats_ms(values, tail):
    """{n, p50, p<tail>, max, min} of values (seconds), in milliseconds."""
    return {"n": len(values), "p50": ms(percentile(values, 50)), f"p{tail}": ms(percentile(values, tail)),
            "max": ms(max(values)), "min": ms(min(values))}


def logger(name):
    """log(msg): prints "bench: NAME: msg" at once."""
    def log(msg):
        print(f"bench: {name}: {msg}", flush=True)
    return log


def cleanup(items, dirs, log):
    """At the end of a section, also after an error: stop() of everything still in items (an
    error is logged, not raised), then removes dirs."""
    for x in list(items):
        try:
            x.stop()
        except Exception as e:  # noqa: BLE001
            log(f"cleanup: {e}")
    for path in dirs:
        shutil.rmtree(path, ignore_errors=True)


def rerender(argv, render):
    """With argv `SCRIPT --render OUT.json`: OUT.json's verdicts and markdown made again by
    render(its results), written back; True. Otherwise False (nothing done)."""
    if len(argv) != 3 or argv[1] != "--render":
        return False
    with open(argv[2]) as f:
        saved = json.load(f)
    saved["verdicts"], saved["markdown"] = render(saved["results"])
    with open(argv[2], "w") as f:
        json.dump(saved, f, indent=1)
    return True


def section_markdown(lines, res):
    """A section's markdown: `lines`, then why part of it was not measured, if so."""
    if res.get("skipped"):
        lines += [f"Not measured: {res['skipped']}.", ""]
    return "\n".join(lines)


def write_section(out, res, render, log, t0):
    """The end of a section's run: res["seconds"] since t0 (time.perf_counter()), OUT.json =
    {results, verdicts, markdown} as render(res) makes them, the verdicts printed."""
    res["seconds"] = time.perf_counter() - t0
    verdicts, markdown = render(res)
    with open(out, "w") as f:
        json.dump({"results": res, "verdicts": verdicts, "markdown": markdown}, f, indent=1)
    for name, v, shown in verdicts:
        print(f"  {v:<4} {name}: {shown}")
    log(f"took {res['seconds']:.0f} s")
