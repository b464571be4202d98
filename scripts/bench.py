#!/usr/bin/env python3
"""make bench: announce side by side with mpg123, aplay and sox on the same inputs in the same
run, its daemon's own targets, alert latency, mixing CPU, instruction counts and the Swift
micro-benchmarks (Benchmarks/, ordo-one/benchmark). Writes BENCHMARKS.md. Standard library only.

    scripts/bench.py PATH-TO-announce [--smoke] [--only SECTIONS] [--out FILE]
    scripts/bench.py --render [--out FILE]     BENCHMARKS.md again from .bench-cache/results.json

Sections: players tempo daemon alert speech network mixing duck zones callgrind micro (all by default). --smoke runs each with
few repetitions and short windows (a few minutes; for developing the harness, not for figures)
and writes .bench-cache/BENCHMARKS.smoke.md unless --out is given. Counts can be set one by one
with BENCH_<NAME>=N, NAME as in COUNTS below (e.g. BENCH_RUNS=9).
"""
import argparse
import array
import ctypes
import itertools
import json
import math
import os
import platform
import pwd
import random
import re
import resource
import select
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".bench-cache")
# The toolchain `make bench` builds with (its SWIFT), for the micro-benchmarks too.
SWIFT = os.environ.get("SWIFT", "swift")
TMPFS, DISK = "/dev/shm", "/tmp"

# Repetitions: (full run, --smoke).
COUNTS = {
    "RUNS": (5, 1),            # counted runs per player, 1- and 10-minute files
    "RUNS_LONG": (9, 1),       # 60-minute MP3
    "RUNS_TEMPO": (5, 1),      # 60-minute MP3 at --rate 2, plain, and through sox's tempo
    "RUNS_TINY": (20, 3),      # 0.1 s clips
    "RUNS_MARGINAL": (15, 3),  # rounds of the WAV target (1 s and 60 min each)
    "ENQUEUE": (1000, 100),    # enqueue round trips per row
    "CLI": (200, 20),          # `announce play --no-wait` commands per filesystem
    "PREEMPT": (200, 20),      # preemptions over a looping WAV
    "PREEMPT_MP3": (100, 10),  # ... over a looping MP3
    "COLD": (10, 2),           # cold starts per row
    "IDLE": (10, 2),           # seconds idle
    "PLAYS": (1000, 100),      # plays for the daemon's memory target
    "PLAYS_MORE": (5000, 200),  # ... and on to this many
    "ALERT_ROUNDS": (10, 2),   # rounds of 1 cold + 5 warm + 5 daemon-alone alerts on null
    "ALERT_ROUNDS_PACED": (4, 1),
    "SAY": (60, 6),            # `announce say` commands per case (fresh text, cached text)
    "URL": (60, 6),            # `announce play URL` and the same file by path, to the first frame
    "RUNS_URL": (5, 1),        # the 60-minute MP3 over http: announce and mpg123
    "MIX_SECONDS": (10, 2),    # mixing window
    "DUCK_ROUNDS": (15, 3),    # --duck-others clips over another application's tone, per sound server
    "ZONE_ROUNDS": (40, 4),    # `play --zone all` on 3 hosts
    "ZONE_ROUNDS_MANY": (30, 3),  # ... on 30 hosts
    "ZONE_IDLE": (30, 5),      # seconds idle with the bridge connected (it wakes every 15 s for the keepalive)
    "MICRO_SECONDS": (2, 1),   # ordo-one/benchmark: at most this long per benchmark
}

# Targets (the issues'). "20 MB" is 20 × 10^6 bytes of VmHWM.
MP3_VS_MPG123, WAV_MARGINAL_VS_APLAY, RSS_MB, RSS_GROWTH_MIB = 1.05, 1.0, 20.0, 2.0
ENQUEUE_P99_MS, CLIENT_CPU_MS, PREEMPT_P99_MS, IDLE_CPU_MS = 5.0, 10.0, 20.0, 1.0
ALERT_P50_MS, MIX_PER_STREAM_PCT = 15.0, 0.5
SAY_P50_MS = 60.0
# Zones: spawn of `play --zone all` to the first frame on every host, p99, by number of hosts (the
# 300 ms common start lead included); the hosts' start spread, p99 (3 hosts); idle wake-ups a minute.
ZONE_ALL_P99_MS, ZONE_SPREAD_P99_MS, ZONE_WAKEUPS_PER_MIN = {3: 500.0, 30: 1000.0}, 30.0, 10


def log(msg):
    print(f"bench: {msg}", flush=True)


# =========================================================================================
# Shared helpers: other processes' CPU, memory and threads; statistics; the daemon and its socket.

CPUCLOCK_SCHED = 2


def proc_cpu_ns(pid):
    """The process's CPU clock (clock_getcpuclockid): every thread, those that ended included."""
    return time.clock_gettime_ns(((~pid) << 3) | CPUCLOCK_SCHED)


def switches(pid):
    """{tid: voluntary + involuntary context switches} of the live threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                out[tid] = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass
    return out


def thread_name(pid, tid):
    try:
        return open(f"/proc/{pid}/task/{tid}/comm").read().strip()
    except OSError:
        return "?"


def switches_since(before, after):
    return sum(n - before.get(tid, 0) for tid, n in after.items())


def status_kib(pid):
    keys = ("VmHWM", "VmRSS", "RssAnon", "RssFile")
    try:
        with open(f"/proc/{pid}/status") as f:
            return {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f) if k in keys}
    except OSError:
        return {}


def reset_hwm(pid):
    """VmHWM := current RSS (clear_refs 5)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def alive(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, TypeError):
        return False


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700)
    os.chmod(path, 0o700)
    return path


def fs_type(path):
    mounts = [line.split()[1:3] for line in open("/proc/self/mounts")]
    return max((m for m in mounts if (path + "/").startswith(m[0].rstrip("/") + "/")), key=lambda m: len(m[0]))[1]


def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))]


def stats_ms(values, tail=99):
    return {"n": len(values), "p50": pct(values, 50) * 1e3, f"p{tail}": pct(values, tail) * 1e3,
            "max": max(values) * 1e3}


def med(values):
    return statistics.median(values)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def write_tone(path, rate, seconds, freq, amplitude=0.1, fade=0.01):
    """A 16-bit stereo WAV of a sine (right channel a fifth higher), made once per path."""
    if os.path.exists(path):
        return path
    n = int(round(rate * seconds))
    periodic = fade == 0 and float(freq).is_integer() and float(freq * 1.5).is_integer()
    m, ramp, full = (min(n, rate) if periodic else n), max(1, int(rate * fade)), 32767 * amplitude
    pcm = array.array("h", bytes(4 * m))
    for i in range(m):
        g = full if fade == 0 else full * min(1.0, i / ramp, (n - 1 - i) / ramp)
        pcm[2 * i] = int(g * math.sin(2 * math.pi * freq * i / rate))
        pcm[2 * i + 1] = int(g * math.sin(2 * math.pi * freq * 1.5 * i / rate))
    one = pcm.tobytes()
    with wave.open(path + ".tmp", "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(one * (n // m) + one[:4 * (n % m)])
    os.replace(path + ".tmp", path)
    return path


def server_env(pdir):
    """The environment of a client of the private sound server in pdir (its DIR/env), through libpulse
    and ALSA's `pulse` device."""
    env = dict(os.environ)
    for line in open(os.path.join(pdir, "env")):
        if line.startswith("export ") and "=" in line:
            k, v = line[7:].strip().split("=", 1)
            env[k] = v
    if env.get("ALSA_CONFIG_PATH"):  # the pinned configuration has no conf.d: define `pulse` (libasound2-plugins)
        pcm = "".join(f'{k}.pulse {{ @args [ DEVICE ] @args.DEVICE {{ type string default "" }} type pulse device $DEVICE }}\n'
                      for k in ("pcm", "ctl"))
        path = os.path.join(pdir, "alsa-pulse.conf")
        open(path, "w").write(open(env["ALSA_CONFIG_PATH"]).read() + pcm)
        env["ALSA_CONFIG_PATH"] = path
    return env


def sink_input_volume(env, application):
    """`pactl list sink-inputs`: the per-channel volume of the stream of `application`, or None."""
    text = subprocess.run(["pactl", "list", "sink-inputs"], env=env, capture_output=True, text=True).stdout
    for block in text.split("Sink Input #")[1:]:
        if f'application.name = "{application}"' in block:
            m = re.search(r"^\s*Volume: (.*)$", block, re.M)
            return [int(v) for v in re.findall(r": (\d+) /", m.group(1))] if m else None
    return None


def envelope(x, freq, rate, window, hop):
    """The amplitude of `freq` in x over windows of `window` samples (whole cycles of it), every `hop`."""
    table = [(math.cos(2 * math.pi * freq * i / rate), math.sin(2 * math.pi * freq * i / rate)) for i in range(window)]
    cos_sums = array.array("d", [0.0])
    sin_sums = array.array("d", [0.0])
    cos_sums.extend(itertools.accumulate(x[i] * table[i % window][0] for i in range(len(x))))
    sin_sums.extend(itertools.accumulate(x[i] * table[i % window][1] for i in range(len(x))))
    return [2 / window * math.hypot(cos_sums[k + window] - cos_sums[k], sin_sums[k + window] - sin_sums[k])
            for k in range(0, len(x) - window, hop)]


def analyse_duck(recording, rate, window=1200, hop=48):
    """Each hearing of announce's 1000 Hz clip in the monitor recording (left channel), and the other
    stream's 440 Hz around it: the time from the clip's onset to the duck level (within 1 dB, and 90 %
    of the way), the ramps' 10-90 % times, the depth and the level after, as in the duck tests."""
    pcm = array.array("h")
    with open(recording, "rb") as f:
        pcm.frombytes(f.read())
    left = pcm[0::2]
    other, voice = envelope(left, 440, rate, window, hop), envelope(left, 1000, rate, window, hop)

    def time_of(k):
        return (k * hop + window / 2) / rate

    def index(t):
        return max(0, min(len(other) - 1, int((t * rate - window / 2) / hop)))

    def median(a, b):
        return statistics.median(other[index(a):index(b) + 1])

    level = 0.5 * max(voice)
    spans, k = [], 0
    while k < len(voice):
        if voice[k] >= level:
            j = k
            while j < len(voice) and voice[j] >= level:
                j += 1
            if spans and time_of(k) - spans[-1][1] < 0.1:  # an underrun splits a clip: one span
                spans[-1] = (spans[-1][0], time_of(j - 1))
            else:
                spans.append((time_of(k), time_of(j - 1)))
            k = j
        else:
            k += 1
    r = {k: [] for k in ("level_1db", "level_90", "down", "up", "depth_db", "after_db")}
    r["spans"] = spans = [s for s in spans if s[1] - s[0] > 1.0]
    for onset, end in spans:
        before, during, after = median(onset - 0.6, onset - 0.1), median(onset + 0.5, end - 0.1), median(end + 0.9, end + 1.3)
        depth = before - during

        def first(start, test):
            return next((time_of(k) for k in range(index(start), len(other)) if test(other[k])), None)
        d10, d90 = first(onset - 0.1, lambda v: v <= before - 0.1 * depth), first(onset - 0.1, lambda v: v <= before - 0.9 * depth)
        u10, u90 = first(end - 0.1, lambda v: v >= during + 0.1 * depth), first(end - 0.1, lambda v: v >= during + 0.9 * depth)
        at = first(onset - 0.1, lambda v: v <= during * 10 ** (1 / 20))
        if None in (d10, d90, u10, u90, at):
            raise RuntimeError(f"no duck heard around {onset:.2f} s")
        r["level_1db"].append(at - onset)
        r["level_90"].append(d90 - onset)
        r["down"].append(d90 - d10)
        r["up"].append(u90 - u10)
        r["depth_db"].append(20 * math.log10(during / before))
        r["after_db"].append(20 * math.log10(after / before))
    return r


class Conn:
    """One NDJSON connection to the daemon."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(120)  # a `clear` of 1000 items fsyncs each: slow on a busy disk
        self.sock.connect(path)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, obj):
        self.sock.sendall(json.dumps(dict({"v": 1}, **obj), separators=(",", ":")).encode() + b"\n")

    def next(self, timeout=None):
        """The next message; None once timeout seconds pass without one."""
        while b"\n" not in self.buf:
            if timeout is not None and not select.select([self.sock], [], [], max(0.0, timeout))[0]:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def pending(self):
        out = []
        while (m := self.next(timeout=0)) is not None:
            out.append(m)
        return out

    def until(self, pred, what, timeout=10.0, each=None):
        deadline = time.monotonic() + timeout
        while True:
            m = self.next(timeout=deadline - time.monotonic())
            if m is None:
                raise RuntimeError(f"no {what} within {timeout:g} s")
            if each:
                each(m)
            if pred(m):
                return m

    def call(self, obj):
        """Sends a request; its reply (events before it are dropped)."""
        self.send(obj)
        while "event" in (m := self.next()):
            pass
        if not m.get("ok"):
            raise RuntimeError(f"the daemon refused {obj.get('op')}: {m.get('error')}")
        return m


def item(path, **kw):
    clip = {"path": path, "gain": 1, "pan": 0, "loops": kw.pop("loops", 0)}
    if "device" in kw:
        clip["device"] = kw.pop("device")
    return dict(clip=clip, **kw)


def is_event(kind, ident=None):
    return lambda m: m.get("event") == kind and (ident is None or m.get("id") == ident)


class Daemon:
    """`announce daemon --device DEV` in a fresh private runtime directory, with (events=True) an
    `events` connection that tracks the device (open or closed) and the finished items. Without
    one where nothing reads events: unread, they would fill the socket and then the daemon's memory."""

    def __init__(self, bench, name, device="null", base=TMPFS, env=None, events=True):
        self.rundir = fresh_dir(os.path.join(base, f"ab{os.getpid()}-{name}"))
        self.env = dict(env or os.environ, ANNOUNCE_RUNTIME_DIR=self.rundir)
        self.bin, self.device = bench.bin, device
        r, w = os.pipe()
        self.log = os.path.join(self.rundir, "daemon.log")
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen([bench.bin, "daemon", "--device", device, "--ready-fd", str(w)], env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, pass_fds=(w,))
        os.close(w)
        ready = select.select([r], [], [], 10)[0] and os.read(r, 64)
        os.close(r)
        if not ready or ready.strip() != b"ready":
            self.proc.kill()
            raise RuntimeError(f"announce daemon did not start in {self.rundir}: {self.tail()}")
        self.pid = self.proc.pid
        self.open, self.opened, self.format, self.finished = False, 0, None, {}
        self.ev = self.connect() if events else None
        if events:
            self.ev.call({"op": "events"})
        bench.cleanups.append(self.stop)

    def tail(self):
        try:
            return " | ".join(open(self.log, errors="replace").read().splitlines()[-4:])
        except OSError:
            return "(no log)"

    def connect(self):
        return Conn(os.path.join(self.rundir, "socket"))

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
        r = subprocess.run([self.bin, *args], env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"announce {' '.join(args)} exited {r.returncode}: {r.stderr[-300:]}")
        return r.stdout.strip()

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


# =========================================================================================
# The sections. Each stores raw figures in self.res[SECTION]; render() turns them into rows.

FILES = ["wav-0.1s.wav", "mp3-0.1s.mp3", "wav-1s.wav", "wav-1min.wav", "mp3-1min.mp3", "wav-10min.wav",
         "wav-60min.wav", "mp3-60min.mp3"]
INPUTS_GEN = "2"
REFERENCE = {"mp3": ["mpg123", "-q", "-o", "alsa", "-a", "null"], "wav": ["aplay", "-q", "-D", "null"]}
SOX = ["sox", "-q", "{}", "-t", "alsa", "null"]


class Bench:
    def __init__(self, binary, n, res):
        self.bin, self.n, self.res = binary, n, res
        self.cleanups = []
        self.dur = {}

    def path(self, name):
        return os.path.join(CACHE, name)

    # -------------------------------------------------------------------------------------
    # Inputs: one minute of synthesized music-like stereo (a plucked melody, a bass line, a pad
    # with vibrato, noise), as 128 kbit/s CBR MP3 (libmp3lame) and 16-bit WAV, 44.1 kHz.

    def inputs(self):
        ok = open(self.path("inputs.gen")).read().strip() == INPUTS_GEN if os.path.exists(self.path("inputs.gen")) else False
        if not ok or not all(os.path.getsize(self.path(f)) if os.path.exists(self.path(f)) else 0 for f in FILES):
            t0 = time.perf_counter()
            log("generating inputs in .bench-cache (once, about a minute)...")
            note, bass = "pow(2,mod(floor(t*4)*7,12)/12)", "pow(2,mod(floor(t/2)*5,12)/12)"
            mel = f"0.25*exp(-4*mod(t,0.25))*(sin(2*PI*t*440*{note})+0.4*sin(4*PI*t*440*{note}))"
            low = f"0.2*(sin(2*PI*t*55*{bass})+0.3*sin(6*PI*t*55*{bass}))"
            pad = "0.12*sin(2*PI*t*330*(1+0.003*sin(2*PI*5*t)))*(0.6+0.4*sin(2*PI*0.1*t))"
            left, right = f"{mel}*0.8+{low}+{pad}+0.05*(2*random(0)-1)", f"{mel}*0.5+{low}+{pad}*0.7+0.05*(2*random(1)-1)"
            ff = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
            exact = ["-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"]
            mp3, wav = ["-c:a", "libmp3lame", "-b:a", "128k", "-ar", "44100", "-ac", "2"], ["-c:a", "pcm_s16le", "-ar", "44100", "-ac", "2"]
            src = self.path("source.wav")
            subprocess.run(ff + ["-f", "lavfi", "-i", f"aevalsrc=exprs='{left}|{right}':s=44100:d=60"] + wav + exact + [src], check=True)
            long = subprocess.Popen(ff + ["-stream_loop", "59", "-i", src] + mp3 + exact + [self.path("mp3-60min.mp3")])
            for name, pre, post in [("mp3-1min.mp3", [], mp3), ("mp3-0.1s.mp3", [], ["-t", "0.1"] + mp3),
                                    ("wav-1min.wav", [], wav), ("wav-0.1s.wav", [], ["-t", "0.1"] + wav),
                                    ("wav-1s.wav", [], ["-t", "1"] + wav), ("wav-10min.wav", ["-stream_loop", "9"], wav),
                                    ("wav-60min.wav", ["-stream_loop", "59"], wav)]:
                subprocess.run(ff + pre + ["-i", src] + post + exact + [self.path(name)], check=True)
            if long.wait() != 0:
                raise RuntimeError("ffmpeg failed on mp3-60min.mp3")
            os.remove(src)
            open(self.path("inputs.gen"), "w").write(INPUTS_GEN)
            log(f"inputs generated in {time.perf_counter() - t0:.0f} s")
        for f in FILES:
            self.dur[f] = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of",
                                                "csv=p=0", self.path(f)], capture_output=True, text=True).stdout)
        # wav-0.05s.wav: the preempting clip, the first 0.05 s of wav-0.1s.wav.
        if not os.path.exists(self.path("wav-0.05s.wav")):
            with wave.open(self.path("wav-0.1s.wav")) as src:
                params, frames = src.getparams(), src.readframes(2205)
            with wave.open(self.path("wav-0.05s.wav"), "wb") as dst:
                dst.setparams(params)
                dst.writeframes(frames)

    # -------------------------------------------------------------------------------------
    # players: every player plays the file to ALSA `null`; announce = its client + its daemon.

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

    def players(self):
        plan = [("wav-0.1s", "RUNS_TINY"), ("wav-1min", "RUNS"), ("wav-10min", "RUNS"), ("wav-60min", "RUNS_MARGINAL"),
                ("mp3-0.1s", "RUNS_TINY"), ("mp3-1min", "RUNS"), ("mp3-60min", "RUNS_LONG")]
        only = os.environ.get("BENCH_CASES", ".")
        out = self.res.setdefault("players", {})
        for case, count in plan:
            if not re.search(only, case):
                continue
            kind = case.split("-")[0]
            path = self.path(f"{case}.{kind}")
            cmds = {"announce": [self.bin, "play", "-q", "-d", "null", path], REFERENCE[kind][0]: REFERENCE[kind] + [path]}
            if case != "wav-60min":  # the WAV target compares with aplay only
                cmds["sox"] = [a.format(path) for a in SOX]
            short = self.path("wav-1s.wav") if case == "wav-60min" else None
            counted = self.Counted(self, self.path(f"{kind}-0.1s.{kind}"))
            warm = 1
            if case == "mp3-60min":  # seconds per run: warm the page cache with cat instead
                warm = 0
                subprocess.run(["cat", path], stdout=subprocess.DEVNULL)
            runs = {p: [] for p in cmds}
            t0 = time.perf_counter()
            try:
                for i in range(warm + self.n[count]):
                    for p, argv in cmds.items():  # interleaved, so drift hits every player alike
                        recs = []
                        for a in ([[short if x == path else x for x in argv]] if short else []) + [argv]:
                            rec = counted.run(a) if p == "announce" else run_once(a)
                            if rec["exit"] != 0:
                                raise RuntimeError(f"{shlex.join(a)} exited {rec['exit']}: {rec['stderr']}")
                            recs.append(rec)
                        if i >= warm:
                            rec = recs[-1]
                            if short:
                                rec["short"] = {k: recs[0].get(k) for k in ("cpu", "daemon_cpu")}
                            runs[p].append({k: v for k, v in rec.items() if k not in ("stderr", "exit")})
            finally:
                counted.d.stop()
                self.cleanups.remove(counted.d.stop)
            out[case] = {"seconds": self.dur[os.path.basename(path)], "bytes": os.path.getsize(path),
                         "commands": {p: shlex.join(a).replace(shlex.quote(path), "FILE").replace(self.bin, "announce")
                                      for p, a in cmds.items()}, "runs": runs}
            log(f"{case}: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.4f} s" for p, rs in runs.items())
                + f" CPU (medians; {time.perf_counter() - t0:.0f} s)")

    # -------------------------------------------------------------------------------------
    # tempo: the 60-minute MP3 at --rate 2 (libsonic on the daemon's decode side), beside the
    # same file played plainly and sox's own tempo effect, each to ALSA `null`.

    def tempo(self):
        path = self.path("mp3-60min.mp3")
        cmds = {"announce --rate 2": [self.bin, "play", "-q", "-d", "null", "--rate", "2", path],
                "announce": [self.bin, "play", "-q", "-d", "null", path],
                "sox tempo 2": ["sox", "-q", path, "-t", "alsa", "null", "tempo", "2"]}
        counted = self.Counted(self, self.path("mp3-0.1s.mp3"))
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # the page cache warm, as for players
        t0 = time.perf_counter()
        runs = self.interleaved(cmds, counted, self.n["RUNS_TEMPO"])
        self.res["tempo"] = {"seconds": self.dur["mp3-60min.mp3"], "runs": runs,
                             "commands": {p: shlex.join(a).replace(shlex.quote(path), "FILE").replace(self.bin, "announce")
                                          for p, a in cmds.items()}}
        log("tempo: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.3f} s" for p, rs in runs.items())
            + f" CPU (medians; {time.perf_counter() - t0:.0f} s)")

    def interleaved(self, cmds, counted, rounds, env=None):
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
            self.cleanups.remove(counted.d.stop)
        return runs

    # -------------------------------------------------------------------------------------
    # daemon: enqueue round trip, the --no-wait client, preemption, cold start, idle, memory.

    def daemon(self):
        out = self.res.setdefault("daemon", {})
        out["enqueue"] = [self.enqueue(TMPFS), self.enqueue(DISK)]
        log("enqueue: " + "; ".join(f"{r['fs']} p99 {r['one']['p99']:.2f}/{r['each']['p99']:.2f} ms, "
                                    f"client CPU p50 {r['cli_cpu']['p50']:.2f} ms" for r in out["enqueue"]))
        out["preempt"] = [self.preempt("wav-1min.wav", self.n["PREEMPT"]), self.preempt("mp3-1min.mp3", self.n["PREEMPT_MP3"])]
        log("preemption p99: " + ", ".join(f"{r['normal']} {r['latency']['p99']:.2f} ms" for r in out["preempt"]))
        out["cold"] = [self.cold(TMPFS, "wav-0.1s.wav"), self.cold(TMPFS, "mp3-0.1s.mp3"), self.cold(DISK, "wav-0.1s.wav")]
        out["idle"] = self.idle()
        log("idle: " + ", ".join(f"{k} {v['cpu_us']:.0f} µs, {v['wakeups']} wake-ups" for k, v in out["idle"].items()))
        out["memory"] = self.memory()

    def enqueue(self, base):
        """`play` wait:false of an existing file while paused: request to reply, on one connection
        and with a connection each; then the whole `announce play --no-wait -q` command."""
        d = Daemon(self, "enq", base=base, events=False)
        req = {"op": "play", "items": [item(self.path("wav-0.1s.wav"))], "wait": False}
        c = d.connect()
        c.call({"op": "pause"})
        for _ in range(50):
            c.call(req)
        c.call({"op": "clear"})
        one, each, cli, cli_cpu = [], [], [], []
        for _ in range(self.n["ENQUEUE"]):
            t = time.perf_counter()
            c.call(req)
            one.append(time.perf_counter() - t)
        c.call({"op": "clear"})
        for _ in range(self.n["ENQUEUE"]):
            t = time.perf_counter()
            k = d.connect()
            k.call(req)
            each.append(time.perf_counter() - t)
            k.close()
        c.call({"op": "clear"})
        argv = [self.bin, "play", "--no-wait", "-q", self.path("wav-0.1s.wav")]
        for i in range(self.n["CLI"] + 5):  # 5 uncounted: warm
            cpu, t = children_cpu(), time.perf_counter()
            subprocess.run(argv, env=d.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
            if i >= 5:
                cli.append(time.perf_counter() - t)
                cli_cpu.append(children_cpu() - cpu)
        c.call({"op": "clear"})
        c.close()
        d.stop()
        return {"fs": fs_type(base), "dir": base, "one": stats_ms(one), "each": stats_ms(each), "cli": stats_ms(cli),
                "cli_cpu": stats_ms(cli_cpu)}

    def preempt(self, normal_file, count):
        """A normal item loops on `null` (busy decoding); a 0.05 s high item is sent a random
        2–12 ms after it resumed: send to the high item's `started` time (first frames written)."""
        d = Daemon(self, "pre")
        c = d.connect()
        normal = c.call({"op": "play", "items": [item(self.path(normal_file), loops=-1)], "wait": False})["ids"][0]
        d.until(is_event("started", normal), "start of the normal item")
        rng = random.Random(1)
        lat, resume, outcomes = [], [], {}
        for _ in range(count):
            time.sleep(rng.uniform(0.002, 0.012))
            t = time.time()
            c.send({"op": "play", "items": [item(self.path("wav-0.05s.wav"), priority="high")], "wait": False})
            hid = c.next(timeout=5)["ids"][0]
            lat.append(d.until(is_event("started", hid), "start of the high item")["time"] - t)
            f = d.until(is_event("finished", hid), "end of the high item")
            outcomes[f["outcome"]["kind"]] = outcomes.get(f["outcome"]["kind"], 0) + 1
            resume.append(d.until(is_event("started", normal), "resumption")["time"] - f["time"])
        c.call({"op": "clear"})
        c.close()
        d.stop()
        return {"normal": normal_file, "latency": stats_ms(lat), "resume": stats_ms(resume), "outcomes": outcomes}

    def cold(self, base, file):
        """No daemon: `announce play` starts one. Spawn to daemon.log's "started on" line."""
        rundir = os.path.join(base, f"ab{os.getpid()}-cold")
        env = dict(os.environ, ANNOUNCE_RUNTIME_DIR=rundir)
        first, done = [], []
        for _ in range(self.n["COLD"]):
            shutil.rmtree(rundir, ignore_errors=True)
            t0 = time.time()
            subprocess.run([self.bin, "play", "-q", "-d", "null", self.path(file)], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, check=True)
            done.append(time.time() - t0)
            # The client may be gone before the daemon's line is on disk: look for up to 2 s.
            deadline = time.monotonic() + 2
            while True:
                text = open(os.path.join(rundir, "daemon.log"), errors="replace").read()
                m = re.search(r"^(\S+) \[\d+\] \w+: \S+ .*: started on ", text, re.M)
                if m or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            if not m:
                raise RuntimeError(f"no 'started on' line in {rundir}/daemon.log: {text[-300:]}")
            stamp = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
            first.append(stamp - t0)
            pid = int(open(os.path.join(rundir, "daemon.lock")).read().split()[0])
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while alive(pid):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"auto-started daemon {pid} did not exit on SIGTERM")
                time.sleep(0.002)
        shutil.rmtree(rundir, ignore_errors=True)
        return {"file": file, "fs": fs_type(base), "first": stats_ms(first), "exit": stats_ms(done)}

    def idle(self):
        """Two daemons, one fresh, one that played a clip and closed the device: CPU clock and
        context switches (wake-ups) over IDLE seconds."""
        fresh, used = Daemon(self, "idle1", events=False), Daemon(self, "idle2")
        used.cli("play", "-q", self.path("wav-0.1s.wav"))
        used.wait_closed()
        used.ev.close()
        time.sleep(0.5)  # it notices the closed connection
        before = {d: (proc_cpu_ns(d.pid), switches(d.pid)) for d in (fresh, used)}
        t0 = time.perf_counter()
        time.sleep(self.n["IDLE"])
        secs = time.perf_counter() - t0
        out = {}
        for name, d in (("fresh", fresh), ("after a play", used)):
            cpu, sw = before[d]
            out[name] = {"seconds": secs, "cpu_us": (proc_cpu_ns(d.pid) - cpu) / 1e3,
                         "wakeups": switches_since(sw, switches(d.pid)), "threads": len(switches(d.pid))}
            d.stop()
        return out

    def memory(self):
        """0.1 s clips (WAV and MP3 alternating) played in batches of at most 100, each batch to
        the end; the daemon's VmRSS / VmHWM after 10, PLAYS and PLAYS_MORE plays."""
        d = Daemon(self, "mem", events=False)
        c = d.connect()
        clips = [self.path("wav-0.1s.wav"), self.path("mp3-0.1s.mp3")]
        kinds, done, snaps = {}, 0, {"ready": status_kib(d.pid)}
        for target in (10, self.n["PLAYS"], self.n["PLAYS_MORE"]):
            while done < target:
                batch = min(100, target - done)
                ids = set(c.call({"op": "play", "items": [item(clips[(done + i) % 2]) for i in range(batch)],
                                  "wait": True})["ids"])
                while ids:
                    m = c.next(timeout=60)
                    if m is None:
                        raise RuntimeError(f"memory: {len(ids)} items did not finish")
                    if m.get("event") == "finished" and m.get("id") in ids:
                        ids.discard(m["id"])
                        kinds[m["outcome"]["kind"]] = kinds.get(m["outcome"]["kind"], 0) + 1
                done += batch
            snaps[str(target)] = status_kib(d.pid)
        c.close()
        d.stop()
        log(f"memory: VmRSS {snaps['10']['VmRSS'] / 1024:.1f} → {snaps[str(self.n['PLAYS'])]['VmRSS'] / 1024:.1f} MiB "
            f"(10 → {self.n['PLAYS']} plays)")
        return {"snapshots": snaps, "plays": self.n["PLAYS"], "more": self.n["PLAYS_MORE"], "outcomes": kinds}

    # -------------------------------------------------------------------------------------
    # The paced device: a private real-time PulseAudio with a 48 kHz null sink
    # (Tests/Shell/paced-audio.sh), played through ALSA `pulse`. For alert and mixing.

    def paced_env(self):
        if hasattr(self, "_paced"):
            return self._paced
        self._paced = None
        pdir = os.path.join(CACHE, "paced")
        if len(pdir) > 80:
            pdir = tempfile.mkdtemp(prefix="announce-paced.")
        script = os.path.join(ROOT, "Tests", "Shell", "paced-audio.sh")
        if subprocess.run([script, "up", pdir], env=dict(os.environ, PACED_WATCH_PID=str(os.getpid()))).returncode != 0:
            log("the paced device did not come up: no `pulse` figures")
            return None
        self.cleanups.append(lambda: subprocess.run([script, "down", pdir], capture_output=True))
        env = server_env(pdir)
        self.pulse_pid = int(open(os.path.join(pdir, "pulseaudio.pid")).read().split()[0])
        self._paced = env
        return env

    def pipewire_env(self):
        """A private PipeWire with WirePlumber and pipewire-pulse (Tests/Shell/pipewire-audio.sh), or None."""
        if not all(shutil.which(t) for t in ("pipewire", "wireplumber", "pipewire-pulse", "dbus-daemon")):
            log("PipeWire is not installed: no PipeWire figures")
            return None
        pdir = os.path.join(CACHE, "pipewire")
        if len(pdir) > 80:
            pdir = tempfile.mkdtemp(prefix="announce-pw.")
        shutil.rmtree(pdir, ignore_errors=True)  # a run's leftovers keep the next from listening
        script = os.path.join(ROOT, "Tests", "Shell", "pipewire-audio.sh")
        if subprocess.run([script, "up", pdir], env=dict(os.environ, PACED_WATCH_PID=str(os.getpid())),
                          capture_output=True).returncode != 0:
            log("the private PipeWire did not come up: no PipeWire figures")
            return None
        self.cleanups.append(lambda: subprocess.run([script, "down", pdir], capture_output=True))
        return server_env(pdir)

    # -------------------------------------------------------------------------------------
    # alert: `announce alert` spawn to its first frame written (`started` event time), warm (the
    # PCM cached), cold (a new file), and the daemon alone (a request on an open connection).

    def alert(self):
        alert = write_tone(self.path("alert-0.3s-48k.wav"), 48000, 0.3, 880, amplitude=0.3)
        other = write_tone(self.path("alert-0.1s-48k-660.wav"), 48000, 0.1, 660, amplitude=0.3)
        loop = write_tone(self.path("tone-48k-220.wav"), 48000, 5, 220, fade=0)
        cold_dir = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-cold-files"))
        self.cleanups.append(lambda: shutil.rmtree(cold_dir, ignore_errors=True))
        out = self.res.setdefault("alert", [])
        cases = [("null", None, False, self.n["ALERT_ROUNDS"])]
        if self.paced_env():
            cases += [("pulse", self.paced_env(), False, self.n["ALERT_ROUNDS_PACED"]),
                      ("pulse", self.paced_env(), True, self.n["ALERT_ROUNDS_PACED"])]
        for device, env, over_stream, rounds in cases:
            d = Daemon(self, "alert", device=device, env=env)
            c, rng = d.connect(), random.Random(1)

            def settle():
                d.drain()
                if not over_stream:
                    d.wait_closed()
                time.sleep(rng.uniform(0, 0.060))  # not always at the same phase of the device's period

            def command(path):
                settle()
                cpu, t0, p0 = children_cpu(), time.time(), time.perf_counter()
                subprocess.run([self.bin, "alert", "-q", "-d", device, path], env=d.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, check=True)
                exit_s, cpu = time.perf_counter() - p0, children_cpu() - cpu
                s = d.until(lambda m: m.get("event") == "started" and m.get("path") == path, f"start of {path}")
                d.until(is_event("finished", s["id"]), "end of the alert")
                return s["time"] - t0, exit_s, cpu

            def request():
                settle()
                t0 = time.time()
                aid = c.call({"op": "alert", "alert": {"path": alert, "gain": 1, "device": device}, "wait": False})["ids"][0]
                s = d.until(is_event("started", aid), "start of the alert request")
                d.until(is_event("finished", aid), "end of the alert request")
                return s["time"] - t0

            command(other)  # first use
            if over_stream:
                lid = c.call({"op": "play", "wait": False, "items": [
                    dict(item(loop, loops=-1, device=device), session={"category": "ambient"})]})["ids"][0]
                d.until(is_event("started", lid), "start of the looping stream")
            command(alert)  # now cached
            r = {k: [] for k in ("cold", "warm", "exit", "cpu", "request")}
            for i in range(rounds):
                copy = os.path.join(cold_dir, f"cold-{device}-{over_stream}-{i}.wav")
                shutil.copyfile(alert, copy)
                r["cold"].append(command(copy)[0])
                for _ in range(5):
                    first, exit_s, cpu = command(alert)
                    r["warm"].append(first)
                    r["exit"].append(exit_s)
                    r["cpu"].append(cpu)
                    r["request"].append(request())
            d.stop()
            out.append(dict({k: stats_ms(v, 90) for k, v in r.items()}, device=device, over_stream=over_stream,
                            format=d.format))
            log(f"alert on {device}{' over a stream' if over_stream else ''}: warm p50 {out[-1]['warm']['p50']:.1f} ms")

    # -------------------------------------------------------------------------------------
    # duck: another application's tone (sox | pacat, no media.role) plays on the private sound
    # server's sink while announce plays a 1.5 s --duck-others clip over it, round after round;
    # the sink's monitor is recorded throughout and the other stream's level read from it.

    def duck(self):
        out = self.res.setdefault("duck", [])
        for name, up in (("PulseAudio", self.paced_env), ("PipeWire", self.pipewire_env)):
            env = up()
            if env:
                out.append(self.duck_on(name, env))
                r = out[-1]
                log(f"duck on {name}: at the duck level (1 dB) p50 {r['level_1db']['p50']:.0f} ms, "
                    f"restored exactly {r['pactl_exact']}/{r['rounds']}")

    def duck_on(self, server, env):
        rate, rounds, app = 48000, self.n["DUCK_ROUNDS"], f"bench-other-{os.getpid()}"
        work = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-duck-files-{server.lower()}"))
        self.cleanups.append(lambda: shutil.rmtree(work, ignore_errors=True))
        clip = write_tone(os.path.join(work, "voice-1000.wav"), rate, 1.5, 1000, amplitude=0.3)
        recording = os.path.join(work, "monitor.s16")
        procs = []

        def start(cmd, stdout=subprocess.DEVNULL):
            p = subprocess.Popen(cmd, shell=isinstance(cmd, str), env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(p)
            return p

        def stop_all():
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(5)
        self.cleanups.append(stop_all)
        with open(recording, "wb") as f:
            recorder = start(["parec", "--raw", "--format=s16le", f"--rate={rate}", "--channels=2", "--latency-msec=10",
                              "-d", env["PACED_SINK"] + ".monitor"], stdout=f)
        start(f"sox -q -n -r {rate} -c 2 -b 16 -e signed-integer -t raw - synth 3600 sine 440 vol 0.3 | "
              f"pacat --raw --format=s16le --rate={rate} --channels=2 --latency-msec=20 --client-name={app}")
        original = None
        for _ in range(500):
            original = sink_input_volume(env, app)
            if original and any(original):
                break
            time.sleep(0.01)
        if not original:
            raise RuntimeError(f"the other stream did not appear on {server}")
        time.sleep(1.0)  # WirePlumber sets a new stream's restored volume just after it appears
        original = sink_input_volume(env, app)
        d = Daemon(self, f"duck-{server.lower()}", device="pulse", env=env)
        after, restore_s = [], []
        for _ in range(rounds):
            time.sleep(0.8)  # the other tone alone: the level before
            d.cli("play", "-q", clip, "--duck-others")
            t0 = time.perf_counter()
            volume = sink_input_volume(env, app)
            while volume != original and time.perf_counter() - t0 < 3:
                time.sleep(0.005)
                volume = sink_input_volume(env, app)
            restore_s.append(time.perf_counter() - t0)
            time.sleep(1.4)  # the level after
            after.append(volume)
        d.stop()
        os.killpg(recorder.pid, signal.SIGTERM)
        recorder.wait(5)
        stop_all()
        r = analyse_duck(recording, rate)
        if len(r["spans"]) != rounds:
            raise RuntimeError(f"duck on {server}: announce's clip heard {len(r['spans'])} times in {rounds} rounds")

        def volume_db(v):
            return 60 * math.log10(max(v, 1) / 65536)
        pactl_db = [max(abs(volume_db(a) - volume_db(b)) for a, b in zip(v or [0], original)) for v in after]
        return {"server": server, "rounds": rounds, "original": original,
                "level_1db": stats_ms(r["level_1db"]), "level_90": stats_ms(r["level_90"]),
                "down": stats_ms(r["down"]), "up": stats_ms(r["up"]), "depth_db": r["depth_db"], "after_db": r["after_db"],
                "pactl_exact": sum(v == original for v in after), "pactl_db_max": max(pactl_db),
                "restore_seen": stats_ms(restore_s)}

    # -------------------------------------------------------------------------------------
    # speech: `announce say` spawn to its first frame written (`started` event time), with a
    # sentence never said before (the engine renders it) and with one just said (the render
    # cache), beside espeak-ng itself: its spawn to the first byte of audio on its stdout.

    def speech(self):
        if not shutil.which("espeak-ng"):
            log("speech: espeak-ng is not installed: no figures")
            return
        cache = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-speech-cache"))
        self.cleanups.append(lambda: shutil.rmtree(cache, ignore_errors=True))
        d = Daemon(self, "speech", env=dict(os.environ, XDG_CACHE_HOME=cache))
        rng = random.Random(3)
        words = ["backup", "finished", "build", "failed", "door", "kitchen", "printer", "server", "garden", "meeting"]

        def say(text):
            d.drain()
            d.wait_closed()
            time.sleep(rng.uniform(0, 0.060))
            cpu, t0 = children_cpu(), time.time()
            subprocess.run([self.bin, "say", "-q", "--no-wait", "-d", "null", text], env=d.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
            cpu = children_cpu() - cpu
            s = d.until(lambda m: m.get("event") == "started" and (m.get("path") or "").startswith("say:"), "start of say")
            d.until(is_event("finished", s["id"]), "end of say")
            return s["time"] - t0, cpu

        def espeak(text):
            time.sleep(rng.uniform(0, 0.060))
            t0 = time.perf_counter()
            p = subprocess.Popen(["espeak-ng", "--stdout", "-b", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            p.stdin.write(text.encode())
            p.stdin.close()
            p.stdout.read(44 + 2)  # the WAV header and a first sample
            first = time.perf_counter() - t0
            p.stdout.read()
            p.wait()
            return first

        say("Warm up.")  # the engine's binary and data in the page cache
        fresh, cached, cpu, own = [], [], [], []
        for i in range(self.n["SAY"]):
            text = f"The {rng.choice(words)} {i} is {rng.choice(words)} now."
            first, c = say(text)
            fresh.append(first)
            cpu.append(c)
            cached.append(say(text)[0])
            own.append(espeak(f"The {rng.choice(words)} {i} is ready."))
        d.stop()
        self.res["speech"] = {k: stats_ms(v, 90) for k, v in
                              {"fresh": fresh, "cached": cached, "cpu": cpu, "espeak": own}.items()}
        log(f"speech: say to first frame p50 {self.res['speech']['fresh']['p50']:.1f} ms (cached "
            f"{self.res['speech']['cached']['p50']:.1f} ms); espeak-ng's own first byte p50 {self.res['speech']['espeak']['p50']:.1f} ms")

    # -------------------------------------------------------------------------------------
    # network: `play http://127.0.0.1/…` to the first frame (beside the same file by path), and
    # the CPU of the 60-minute MP3 over http beside `mpg123 http://…`, from Tests/Servers/httpd.py
    # (Python's http.server; its own CPU is nobody's) on loopback.

    def network(self):
        server = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/Servers/httpd.py"), CACHE, "3600"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.cleanups.append(server.kill)
        port = int(server.stdout.readline())
        env = dict(os.environ, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
        d = Daemon(self, "network", env=env)
        rng = random.Random(5)

        def first_frame(target):
            d.drain()
            d.wait_closed()
            time.sleep(rng.uniform(0, 0.060))
            t0 = time.time()
            ident = d.cli("play", "--no-wait", "-d", "null", target)
            s = d.until(lambda m: m.get("event") == "started" and m.get("id") == ident, "start of the play")
            d.until(is_event("finished", ident), "end of the play")
            if d.finished[ident].get("outcome", {}).get("kind") != "played":
                raise RuntimeError(f"{target}: {d.finished[ident]}")
            return s["time"] - t0

        name = "mp3-1min.mp3"
        url = f"http://127.0.0.1:{port}/{name}"
        first_frame(url)  # libcurl loaded, the file in the page cache
        by_url, by_path = [], []
        for _ in range(self.n["URL"]):
            by_url.append(first_frame(url))
            by_path.append(first_frame(self.path(name)))
        d.stop()
        self.cleanups.remove(d.stop)
        out = {"url": stats_ms(by_url), "path": stats_ms(by_path), "file": name}

        long = f"http://127.0.0.1:{port}/mp3-60min.mp3"
        cmds = {"announce": [self.bin, "play", "-q", "-d", "null", long], "mpg123": REFERENCE["mp3"] + [long]}
        counted = self.Counted(self, self.path("mp3-0.1s.mp3"))
        counted.env.update(no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
        subprocess.run(["cat", self.path("mp3-60min.mp3")], stdout=subprocess.DEVNULL)
        try:
            runs = self.interleaved(cmds, counted, self.n["RUNS_URL"], env)
        finally:
            server.kill()
            server.wait()
            self.cleanups.remove(server.kill)
        out["stream"] = {"seconds": self.dur["mp3-60min.mp3"], "runs": runs,
                         "commands": {p: shlex.join(a).replace(long, "http://127.0.0.1/FILE").replace(self.bin, "announce")
                                      for p, a in cmds.items()}}
        self.res["network"] = out
        log(f"network: URL to first frame p50 {out['url']['p50']:.1f} ms (by path {out['path']['p50']:.1f} ms); 60-min MP3 "
            "over http: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.3f} s" for p, rs in runs.items()) + " CPU")

    # -------------------------------------------------------------------------------------
    # mixing: the daemon's steady CPU while N looping ambient streams play on the paced device.

    def mixing(self):
        env = self.paced_env()
        if not env:
            return
        secs, settle = self.n["MIX_SECONDS"], 2
        out = self.res.setdefault("mixing", {"seconds": secs, "cases": [], "references": []})
        d = Daemon(self, "mix", device="pulse", env=env)

        def tone(rate, k):
            freq = 200 + 37 * k
            return write_tone(self.path(f"tone-{rate / 1000:g}k-{freq}.wav"), rate, 5, freq, amplitude=0.05, fade=0)

        def play(path):
            return d.cli("play", "--no-wait", "--category", "ambient", "--loops", "-1", "-d", "pulse", path)

        def window(pid):
            cpu, sw, pa, t0 = proc_cpu_ns(pid), switches(pid), proc_cpu_ns(self.pulse_pid), time.perf_counter()
            time.sleep(secs)
            wall = time.perf_counter() - t0
            return {"seconds": wall, "cpu_pct": (proc_cpu_ns(pid) - cpu) / 1e7 / wall,
                    "ctxsw_per_s": switches_since(sw, switches(pid)) / wall,
                    "pulseaudio_pct": (proc_cpu_ns(self.pulse_pid) - pa) / 1e7 / wall}

        for rate in (48000, 44100):
            for n in (1, 4, 16):
                d.wait_closed(15)
                # 44.1 kHz streams join a device a 48 kHz stream opened, so each is resampled.
                anchor = play(tone(48000, 20)) if rate != 48000 else None
                if anchor:
                    d.until(is_event("started", anchor), "start of the anchor stream", 15)
                ids = [play(tone(rate, k)) for k in range(1, n + 1)]
                left = set(ids)
                d.until(lambda m: m.get("event") == "started" and left.discard(m.get("id")) or not left, "start of the streams", 15)
                if anchor:
                    d.cli("cancel", anchor)
                    d.until(is_event("finished", anchor), "end of the anchor stream")
                time.sleep(settle)
                r = window(d.pid)
                d.drain()
                if any(i in d.finished for i in ids):
                    raise RuntimeError("a stream ended during the mixing window")
                d.cli("stop")
                for i in ids:
                    if i not in d.finished:
                        d.until(is_event("finished", i), "end of the streams", 15)
                r.update(rate=rate, streams=n, format=d.format,
                         underruns=[d.finished[i]["warning"] for i in ids if d.finished[i].get("warning")])
                out["cases"].append(r)
                log(f"mixing {n} at {rate / 1000:g} kHz: {r['cpu_pct']:.2f}% of a core, {r['cpu_pct'] / n:.3f}% per stream")
        d.stop()
        # aplay through the same PCM: its defaults, then announce's periods for a sound server (3 × 60 ms)
        # and for a kernel-side PCM (4 × 20 ms).
        ref = write_tone(self.path(f"tone-48k-ref-{secs + 12}s.wav"), 48000, secs + 12, 440, amplitude=0.05, fade=0)
        for extra in ([], ["--period-time=60000", "--buffer-time=180000"], ["--period-time=20000", "--buffer-time=80000"]):
            p = subprocess.Popen(["aplay", "-q", "-D", "pulse", *extra, ref], env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(settle + 0.5)
            r = window(p.pid)
            if p.poll() is not None:
                raise RuntimeError("aplay -D pulse ended during the window")
            p.terminate()
            p.wait()
            out["references"].append(dict(r, command=" ".join(["aplay", "-q", "-D", "pulse", *extra, "FILE"])))

    # -------------------------------------------------------------------------------------
    # zones: N daemons (3, then 30) with [mqtt] on one mosquitto on loopback, each on `null`;
    # `announce play --zone all` from a host without a daemon, spawn to the first frame
    # (`started` event time) on every host; the spread of the hosts' first frames; the play as
    # the broker carried it (mosquitto_sub), for its send time and common start time; then
    # the idle daemons' CPU with the bridge connected.

    def zones(self):
        mosquitto = next((p for p in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto") if os.access(p, os.X_OK)), None)
        if not mosquitto or not shutil.which("mosquitto_sub"):
            log("zones: mosquitto or mosquitto_sub is not installed (make deps-bench installs them): no figures")
            return
        tone = write_tone(self.path("tone-48k-0.2s-523.wav"), 48000, 0.2, 523, amplitude=0.3)
        out = self.res.setdefault("zones", [])
        for hosts, rounds in ((3, self.n["ZONE_ROUNDS"]), (30, self.n["ZONE_ROUNDS_MANY"])):
            out.append(self.zones_with(mosquitto, tone, hosts, rounds))
            r = out[-1]
            log(f"zones, {hosts} hosts: first frame on every host p50 {r['all']['p50']:.0f} ms, p99 {r['all']['p99']:.0f} ms; "
                f"spread p50 {r['spread']['p50']:.1f} ms; idle CPU at most {max(r['idle']['cpu_us']):.0f} µs per daemon")

    def zones_with(self, mosquitto, tone, count, rounds):
        work = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-zones-{count}"))
        procs, daemons = [], []

        def config(name, host):
            home = os.path.join(work, name)
            os.makedirs(os.path.join(home, "announce"))
            with open(os.path.join(home, "announce", "config"), "w") as f:
                f.write(f"[mqtt]\nbroker = mqtt://127.0.0.1:{port}\nhost = {host}\nzones = bench\n")
            return home

        def cleanup():
            for d in daemons:  # first: they say goodbye to the broker
                try:
                    d.stop()
                except Exception as e:  # noqa: BLE001 (the others are still stopped)
                    log(f"zones: {e}")
            for p in reversed(procs):
                if p.poll() is None:
                    p.terminate()  # `timeout` passes SIGTERM on to mosquitto
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
            shutil.rmtree(work, ignore_errors=True)
        self.cleanups.append(cleanup)
        try:
            port = start_mosquitto(mosquitto, work, procs)
            # What the broker carries: each play's send time and common start time.
            sub = subprocess.Popen(["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1",
                                    "-t", "announce/v1/zone/all/play"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
            procs.append(sub)
            plays = []

            def read_plays():
                for line in sub.stdout:
                    m = json.loads(line)
                    plays.append((m["sent"], m["items"][0]["item"].get("at")))
            threading.Thread(target=read_plays, daemon=True).start()
            for i in range(count):
                env = dict(os.environ, XDG_CONFIG_HOME=config(f"config-{i}", f"bench-{i:02}"))
                daemons.append(Daemon(self, f"zone-{count}-{i:02}", env=env))
                self.cleanups.remove(daemons[-1].stop)  # cleanup() stops it
            sender = dict(os.environ, XDG_CONFIG_HOME=config("sender", "bench-sender"),
                          ANNOUNCE_RUNTIME_DIR=fresh_dir(os.path.join(work, "sender-runtime")))
            deadline = time.monotonic() + 30
            for d in daemons:
                while "zones: subscribed to" not in open(d.log, errors="replace").read():
                    if time.monotonic() > deadline or not alive(d.pid):
                        raise RuntimeError(f"zones: a daemon did not subscribe within 30 s: {d.tail()}")
                    time.sleep(0.02)
            while True:  # every host's retained status is at the broker (as mosquitto_sub reads it)
                h = subprocess.run(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", "announce/v1/status/+",
                                    "-C", str(count), "-W", "2"], capture_output=True, text=True)
                if sum(json.loads(line).get("state") == "online" for line in h.stdout.splitlines()) == count:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"zones: the broker does not hold {count} online statuses: {h.stdout[-300:]}")

            rng = random.Random(7)
            r = {k: [] for k in ("all", "spread", "client", "delivery", "late", "exit")}
            reported = []
            for i in range(1 + rounds):  # the first uncounted
                time.sleep(rng.uniform(0, 0.060))  # not always at the same phase of the hosts' timers
                t0 = time.time()
                p = subprocess.run([self.bin, "play", "--json", "--zone", "all", tone], env=sender, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True)
                exit_s = time.time() - t0
                results = [json.loads(line) for line in p.stdout.splitlines()]
                if p.returncode != 0 or any(x.get("result") != "played" for x in results):
                    raise RuntimeError(f"zones: play --zone all exited {p.returncode}: {(p.stderr or p.stdout)[-300:]}")
                queued, started = [], []
                for d in daemons:  # what each host did, from its own events (the client's report is checked below)
                    q = d.until(is_event("queued"), "the zone play queued")
                    started.append(d.until(is_event("started", q["id"]), "start of the zone play")["time"])
                    f = d.until(is_event("finished", q["id"]), "end of the zone play")
                    if f["outcome"]["kind"] != "played":
                        raise RuntimeError(f"zones: a host did not play the zone play: {f['outcome']}")
                    queued.append(q["time"])
                deadline = time.monotonic() + 5
                while not (m := [x for x in plays if t0 <= x[0] <= t0 + exit_s]) and time.monotonic() < deadline:
                    time.sleep(0.01)
                if len(m) != 1 or m[0][1] is None:
                    raise RuntimeError(f"zones: mosquitto_sub saw {len(m)} plays sent in the round ({m}), not one with a start time")
                sent, at = m[0]
                if i == 0:
                    continue
                r["all"].append(max(started) - t0)
                r["spread"].append(max(started) - min(started))
                r["client"].append(sent - t0)
                r["delivery"].append(max(queued) - sent)
                r["late"].append(max(started) - at)
                r["exit"].append(exit_s)
                r["lead"] = at - sent
                reported.append(len(results))
            for d in daemons:
                d.wait_closed()
                d.drain()

            # Idle, the bridge connected: each daemon's CPU clock and context switches (by thread name).
            time.sleep(1.0)
            secs = self.n["ZONE_IDLE"]
            before = [(proc_cpu_ns(d.pid), switches(d.pid)) for d in daemons]
            t0 = time.perf_counter()
            time.sleep(secs)
            secs = time.perf_counter() - t0
            cpu_us, wakeups, by_thread = [], [], {}
            for d, (cpu, sw) in zip(daemons, before):
                cpu_us.append((proc_cpu_ns(d.pid) - cpu) / 1e3)
                now = switches(d.pid)
                wakeups.append(switches_since(sw, now))
                for tid, n in now.items():
                    if n - sw.get(tid, 0):
                        name = thread_name(d.pid, tid)
                        by_thread[name] = by_thread.get(name, 0) + n - sw.get(tid, 0)
            broker_log = open(os.path.join(work, "broker.log"), errors="replace").read().strip()
            return {"hosts": count, "rounds": rounds, "lead": r.pop("lead"), "broker_log": broker_log[-300:], "reported": reported,
                    **{k: stats_ms(v) for k, v in r.items()},
                    "idle": {"seconds": secs, "cpu_us": cpu_us, "wakeups": wakeups, "by_thread": by_thread}}
        finally:
            cleanup()
            self.cleanups.remove(cleanup)

    # -------------------------------------------------------------------------------------
    # callgrind: instructions (user space, all threads) of announce (client + daemon from just
    # before the client starts until the device is closed) and the reference player.

    OWN_MODULES = ("13AnnounceModel", "14AnnounceSystem", "15AnnounceSources", "14AnnounceOutput", "14AnnounceEngine",
                   "14AnnounceDaemon", "14AnnounceClient", "8announce", "announce_")  # Swift mangled module names; CPosix
    DEP_MODULES = ("14ArgumentParser", "7Logging", "10HeapModule", "15InternalCollectionsUtilities")

    def group(self, obj, fn):
        if os.path.basename(obj) == "announce":
            head = fn[:40]
            if any(m in head for m in self.OWN_MODULES):
                return "announce's own code (Sources/)"
            if any(m in head for m in self.DEP_MODULES):
                return "announce: package dependencies"
            if "20FoundationEssentials" in head:
                return "announce: FoundationEssentials (static)"
            return "announce: Swift runtime + stdlib (static)"
        m = re.match(r"(lib[^.]+|ld-linux[^.]*)", os.path.basename(obj))
        return m.group(1) if m else os.path.basename(obj)

    @staticmethod
    def parse_callgrind(path):
        """Self instructions per (object, function)."""
        names, cur, cost, skip = {}, {"ob": "?", "fn": "?"}, {}, False
        for line in open(path, errors="replace"):
            if line[:1].isdigit() or line[:1] in "+-*":
                if not skip and len(parts := line.split()) > 1:
                    key = (cur["ob"], cur["fn"])
                    cost[key] = cost.get(key, 0) + int(parts[1])
                skip = False
                continue
            m = re.match(r"^(c?ob|c?fn|calls)=(?:\((\d+)\))?\s*(.*)$", line.rstrip("\n"))
            if not m:
                continue
            key, ident, name = m.groups()
            if key == "calls":
                skip = True
                continue
            table = names.setdefault(key.lstrip("c"), {})
            if ident is not None and name:
                table[ident] = name
            value = table.get(ident, name) if ident is not None else name
            if key in ("ob", "fn"):
                cur[key] = value
        return cost

    def callgrind(self):
        if not shutil.which("valgrind"):
            log("callgrind skipped: valgrind is not installed")
            return
        tmp = tempfile.mkdtemp(prefix="announce-callgrind.")
        self.cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
        # valgrind 3.19 cannot read clang's DWARF 5: a copy without debug info (the symbols stay).
        vbin = os.path.join(tmp, "announce")
        subprocess.run(["strip", "--strip-debug", "-o", vbin, self.bin], check=True)
        out = self.res.setdefault("callgrind", {})
        rundir = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-cg"))
        env = dict(os.environ, ANNOUNCE_RUNTIME_DIR=rundir)
        dout = os.path.join(tmp, "daemon.out")
        r, w = os.pipe()
        daemon = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={dout}", vbin, "daemon", "--device",
                                   "null", "--ready-fd", str(w)], env=env, pass_fds=(w,), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        if not select.select([r], [], [], 120)[0] or not os.read(r, 64).startswith(b"ready"):
            daemon.kill()
            raise RuntimeError("the daemon under callgrind did not start")
        os.close(r)
        pid = int(open(os.path.join(rundir, "daemon.lock")).read().split()[0])
        ev = Conn(os.path.join(rundir, "socket"))
        ev.call({"op": "events"})

        def closed():
            ev.until(is_event("device-opened"), "device-opened", 120)
            ev.until(is_event("device-closed"), "device-closed", 120)

        def cg(argv, label, env=None):
            f = os.path.join(tmp, label)
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"] + argv, env=env, check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return self.parse_callgrind(f)

        try:
            dumps = 0
            for kind, ref in (("mp3", REFERENCE["mp3"]), ("wav", REFERENCE["wav"])):
                for size in ("0.1s", "1min"):
                    path = self.path(f"{kind}-{size}.{kind}")
                    subprocess.run([vbin, "play", "-q", "-d", "null", self.path(f"{kind}-0.1s.{kind}")], env=env, check=True)
                    closed()
                    subprocess.run(["callgrind_control", "--zero", str(pid)], capture_output=True, check=True)
                    client = cg([vbin, "play", "-q", "-d", "null", path], f"client-{kind}-{size}", env)
                    closed()
                    subprocess.run(["callgrind_control", "--dump", str(pid)], capture_output=True, check=True)
                    dumps += 1
                    dcost = self.parse_callgrind(wait_for_dump(f"{dout}.{dumps}"))
                    groups = {}
                    for (obj, fn), n in list(client.items()) + list(dcost.items()):
                        g = self.group(obj, fn)
                        groups[g] = groups.get(g, 0) + n
                    rcost = cg(ref + [path], f"ref-{kind}-{size}")
                    rgroups = {}
                    for (obj, fn), n in rcost.items():
                        g = self.group(obj, fn)
                        rgroups[g] = rgroups.get(g, 0) + n
                    out[f"{kind}-{size}"] = {"announce": sum(groups.values()), "client": sum(client.values()),
                                             "daemon": sum(dcost.values()), "reference": ref[0],
                                             "ref": sum(rgroups.values()), "groups": groups, "ref_groups": rgroups}
                    log(f"callgrind {kind}-{size}: announce {out[f'{kind}-{size}']['announce'] / 1e6:.1f} M, "
                        f"{ref[0]} {out[f'{kind}-{size}']['ref'] / 1e6:.1f} M instructions")
        finally:
            ev.close()
            os.kill(pid, signal.SIGTERM)
            daemon.wait(120)
            shutil.rmtree(rundir, ignore_errors=True)

    # -------------------------------------------------------------------------------------
    # micro: Benchmarks/ (ordo-one/benchmark), a package of its own, built here in release.

    def micro(self):
        pkg = os.path.join(ROOT, "Benchmarks")
        env = dict(os.environ, BENCH_INPUTS=CACHE, BENCH_MICRO_SECONDS=str(self.n["MICRO_SECONDS"]))
        env.pop("ALSA_CONFIG_PATH", None)
        t0 = time.perf_counter()
        r = subprocess.run([SWIFT, "package", "--disable-sandbox", "benchmark", "--no-progress", "--format", "markdown"],
                           cwd=pkg, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"swift package benchmark failed: {(r.stderr or r.stdout)[-1500:]}")
        self.res["micro"] = {"output": r.stdout, "seconds": time.perf_counter() - t0}
        log(f"micro-benchmarks: {time.perf_counter() - t0:.0f} s (build included)")


# =========================================================================================
# Set-up: tools, ALSA configuration, machine.

def start_mosquitto(program, work, procs):
    """mosquitto on 127.0.0.1 at a free port with a generated config in work, at most 10 minutes
    (`timeout`), appended to procs (stopped by pid); its port."""
    log_path = os.path.join(work, "broker.log")
    for _ in range(5):  # a port the kernel had free a moment ago: mosquitto cannot say which one it took
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        conf = os.path.join(work, "mosquitto.conf")
        with open(conf, "w") as f:  # `user`: started as root, mosquitto would become the user `mosquitto`
            f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    f"user {pwd.getpwuid(os.getuid()).pw_name}\nlog_dest stderr\nlog_type error\nlog_type warning\n")
        with open(log_path, "ab") as logf:
            broker = subprocess.Popen(["timeout", "600", program, "-c", conf], stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)
        procs.append(broker)
        deadline = time.monotonic() + 10
        while broker.poll() is None and time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return port
            time.sleep(0.01)
        broker.terminate()
        broker.wait()
    raise RuntimeError(f"mosquitto did not start: {open(log_path, errors='replace').read()[-300:]}")


def wait_for_dump(path, limit=30.0):
    """A callgrind dump once it is whole (its last line is `totals:`): under load the daemon
    may still be writing it when it appears, and a half-read dump undercounts silently."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, "rb") as f:
                if b"\ntotals:" in f.read():
                    return path
        time.sleep(0.05)
    raise RuntimeError(f"callgrind dump {path} not complete after {limit:.0f} s")


def pin_alsa():
    """Every player reads alsa.conf without its conf.d / asound.conf / asoundrc hooks, so plugins
    installed on the machine (e.g. PulseAudio's, which loads libpulse into every ALSA client) do
    not move the figures. BENCH_ALSA_CONFIG=system keeps the machine's."""
    hooks = len([f for f in os.listdir("/etc/alsa/conf.d") if f.endswith(".conf")]) if os.path.isdir("/etc/alsa/conf.d") else 0
    if os.environ.get("BENCH_ALSA_CONFIG") == "system":
        return f"the machine's ({hooks} files in /etc/alsa/conf.d)"
    src = open("/usr/share/alsa/alsa.conf").read()
    i = src.find("\n@hooks [")
    j = src.find("\n]\n", i) if i >= 0 else -1
    if i >= 0 and j >= 0:
        src = src[:i] + "\n# scripts/bench.py: conf.d / asound.conf / asoundrc hooks removed\n" + src[j + 3:]
    open(os.path.join(CACHE, "alsa.conf"), "w").write(src)
    os.environ["ALSA_CONFIG_PATH"] = os.path.join(CACHE, "alsa.conf")
    return (f"pinned: /usr/share/alsa/alsa.conf without its conf.d/asoundrc hooks (BENCH_ALSA_CONFIG=system "
            f"uses the machine's; this machine has {hooks} files in /etc/alsa/conf.d)")


def first_line(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        return "?"


def machine(binary, alsa):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                      capture_output=True, text=True).stdout.strip():
        commit += " + uncommitted changes in Sources/ or Package.swift"
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["strip", "-o", f"{d}/s", binary], check=True)
        stripped = os.path.getsize(f"{d}/s")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    osname = next((line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release")
                   if line.startswith("PRETTY_NAME=")), "?")
    return {"commit": commit or "unknown", "binary_bytes": os.path.getsize(binary), "stripped_bytes": stripped,
            "cpu": cpu, "cores": os.cpu_count(), "memory": f"{mem / 1048576:.1f} GiB", "kernel": platform.release(),
            "os": osname, "swift": first_line([SWIFT, "--version"]), "mpg123": first_line(["mpg123", "--version"]),
            "aplay": first_line(["aplay", "--version"]), "sox": first_line(["sox", "--version"]), "alsa config": alsa}


class Load:
    """What else ran during the bench: the machine's busy time (/proc/stat) against this
    process's and its children's, and other builds (swift-frontend processes) seen, every 5 s."""

    def __init__(self):
        self.t0, self.busy0, self.own0 = time.time(), self.busy(), self.own()
        self.samples, self.stop, self.own_build = [], threading.Event(), False
        threading.Thread(target=self.sample, daemon=True).start()

    @staticmethod
    def busy():
        v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def own():
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    def sample(self):
        while not self.stop.wait(5):
            n = 0
            for pid in filter(str.isdigit, [] if self.own_build else os.listdir("/proc")):
                try:
                    n += open(f"/proc/{pid}/comm").read().strip() in ("swift-frontend", "swift-build", "swiftc")
                except OSError:
                    pass
            self.samples.append((float(open("/proc/loadavg").read().split()[0]), n))

    def result(self):
        self.stop.set()
        wall = time.time() - self.t0
        busy, own = self.busy() - self.busy0, self.own() - self.own0
        return {"seconds": wall, "busy_cores": busy / wall, "own_cores": own / wall,
                "others_cores": max(0.0, busy - own) / wall,
                "builds_seen": sum(1 for _, n in self.samples if n), "samples": len(self.samples),
                "max_frontends": max((n for _, n in self.samples), default=0),
                "load_max": max((x for x, _ in self.samples), default=0.0)}


# =========================================================================================
# The report.

def ratio_rows(res):
    """[(target, verdict, figures)] of every measured target and informative row."""
    V = []
    P = res.get("players", {})

    def paired(case, ref, key="cpu"):
        a, b = P[case]["runs"]["announce"], P[case]["runs"][ref]
        return [x[key] / y[key] for x, y in zip(a, b) if y[key] > 0]

    def cpu_row(case, ref, limit, name):
        if case not in P:
            return
        pr = paired(case, ref)
        a, b = (med(r["cpu"] for r in P[case]["runs"][p]) for p in ("announce", ref))
        V.append((name, "INFO" if limit is None else "PASS" if med(pr) <= limit else "FAIL",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s)"))

    cpu_row("mp3-60min", "mpg123", MP3_VS_MPG123, "MP3 CPU ≤ 1.05× mpg123 (mp3-60min)")
    cpu_row("mp3-1min", "mpg123", None, RENAMED[1])
    if "wav-60min" in P:
        a, b = P["wav-60min"]["runs"]["announce"], P["wav-60min"]["runs"]["aplay"]
        secs = P["wav-60min"]["seconds"] - 1.0
        daemon = [x["daemon_cpu"] - x["short"]["daemon_cpu"] for x in a]
        both = [x["cpu"] - x["short"]["cpu"] for x in a]
        other = [y["cpu"] - y["short"]["cpu"] for y in b]
        pr = [x / y for x, y in zip(daemon, other) if y > 0]
        V.append(("WAV: daemon's CPU per second of audio ≤ 1.0× aplay's (wav-60min minus wav-1s)",
                  "PASS" if med(pr) <= WAV_MARGINAL_VS_APLAY else "FAIL",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; per second of audio: daemon "
                  f"{med(daemon) / secs * 1e6:.2f} µs, aplay {med(other) / secs * 1e6:.2f} µs; client + daemon "
                  f"{med(x / y for x, y in zip(both, other) if y > 0):.3f}× aplay)"))
    for case in ("wav-10min", "wav-1min"):
        cpu_row(case, "aplay", None, f"WAV CPU ÷ aplay, whole runs ({case})")
    for case in ("mp3-1min", "mp3-60min", "wav-1min", "wav-60min"):
        if case in P:
            a = P[case]["runs"]["announce"]
            kib = med(r["rss_kib"] for r in a)
            c, d = med(r["client_rss_kib"] for r in a), med(r["daemon_rss_kib"] for r in a)
            V.append((f"announce peak RSS ≤ 20 MB ({case})", "PASS" if kib * 1024 / 1e6 <= RSS_MB else "FAIL",
                      f"{kib * 1024 / 1e6:.1f} MB ({kib / 1024:.1f} MiB): the larger of client {c * 1024 / 1e6:.1f} MB "
                      f"and daemon {d * 1024 / 1e6:.1f} MB"))
    for s, l in (("mp3-1min", "mp3-60min"), ("wav-1min", "wav-60min")):
        if s in P and l in P:
            a, b = (med(r["rss_kib"] for r in P[c]["runs"]["announce"]) / 1024 for c in (s, l))
            V.append((f"peak RSS does not grow with length ({s} → {l}: ≤ +2 MiB)",
                      "PASS" if b - a <= RSS_GROWTH_MIB else "FAIL", f"{a:.1f} → {b:.1f} MiB ({b - a:+.1f} MiB)"))

    T = res.get("tempo")
    if T:
        runs = T["runs"]
        for ref, what in (("announce", "plain playback"), ("sox tempo 2", "`sox FILE -t alsa null tempo 2`")):
            pr = [x["cpu"] / y["cpu"] for x, y in zip(runs["announce --rate 2"], runs[ref]) if y["cpu"] > 0]
            a, b = (med(r["cpu"] for r in runs[p]) for p in ("announce --rate 2", ref))
            V.append((f"tempo: `announce play --rate 2` CPU ÷ {what} (mp3-60min → null)", "INFO",
                      f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s); no target set"))

    D = res.get("daemon")
    if D:
        for r in D.get("enqueue", []):
            for key, what in (("one", "one connection"), ("each", "a connection per request")):
                s = r[key]
                V.append((f"daemon: enqueue round trip p99 ≤ 5 ms ({what}, runtime dir on {r['fs']} {r['dir']})",
                          "PASS" if s["p99"] <= ENQUEUE_P99_MS else "FAIL",
                          f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} requests)"))
        for s in [r["cli_cpu"] for r in D.get("enqueue", [])[:1]]:
            V.append(("client: warm `announce play -q --no-wait` CPU ≤ 10 ms (median; runtime dir on tmpfs)",
                      "PASS" if s["p50"] <= CLIENT_CPU_MS else "FAIL",
                      f"p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.2f} ms ({s['n']} runs; user + system "
                      "of the client process)"))
        for r in D.get("enqueue", []):
            s = r["cli"]
            V.append((f"daemon: `announce play --no-wait` wall, process start to exit (runtime dir on {r['fs']})", "INFO",
                      f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms ({s['n']} runs); no target set"))
        for r in D.get("preempt", []):
            s = r["latency"]
            V.append((f"daemon: preemption to first frame p99 ≤ 20 ms (normal {r['normal']} looping)",
                      "PASS" if s["p99"] <= PREEMPT_P99_MS else "FAIL",
                      f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} preemptions; "
                      + ", ".join(f"{k} {v}" for k, v in r["outcomes"].items()) + ")"))
        for r in D.get("preempt", []):
            s = r["resume"]
            V.append((f"daemon: resumption after the preempting item, to its `started` event (normal {r['normal']})",
                      "INFO", f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms, max {s['max']:.1f} ms; no target set"))
        for r in D.get("cold", []):
            s, e = r["first"], r["exit"]
            V.append((f"daemon: cold `announce play` with auto-start to first frame ({r['file']}, runtime dir on {r['fs']})",
                      "INFO", f"p50 {s['p50']:.1f} ms, max {s['max']:.1f} ms ({s['n']} runs; client exit p50 "
                      f"{e['p50']:.1f} ms); no target set"))
        for name, r in D.get("idle", {}).items():
            V.append((f"daemon: idle CPU < 1 ms over {r['seconds']:.0f} s ({name})",
                      "PASS" if r["cpu_us"] < IDLE_CPU_MS * 1e3 else "FAIL",
                      f"{r['cpu_us']:.0f} µs (the process's CPU clock, every thread)"))
            V.append((f"daemon: idle wake-ups = 0 over {r['seconds']:.0f} s ({name})", "PASS" if r["wakeups"] == 0 else "FAIL",
                      f"{r['wakeups']} context switches, {r['threads']} threads"))
        for m in [D["memory"]] if "memory" in D else []:
            s10, s1k, more = (m["snapshots"][k] for k in ("10", str(m["plays"]), str(m["more"])))
            V.append((f"daemon: VmHWM ≤ 20 MB after {m['plays']} plays", "PASS" if s1k["VmHWM"] * 1024 / 1e6 <= RSS_MB else "FAIL",
                      f"{s1k['VmHWM'] * 1024 / 1e6:.1f} MB ({s1k['VmHWM'] / 1024:.1f} MiB)"))
            g = (s1k["VmRSS"] - s10["VmRSS"]) / 1024
            V.append((f"daemon: VmRSS does not grow with plays (10 → {m['plays']}: ≤ +2 MiB)", "PASS" if g <= RSS_GROWTH_MIB else "FAIL",
                      f"{s10['VmRSS'] / 1024:.1f} → {s1k['VmRSS'] / 1024:.1f} MiB ({g:+.2f} MiB, {g * 1024 / (m['plays'] - 10):+.2f} "
                      "KiB per play)"))
            g2 = (more["VmRSS"] - s1k["VmRSS"]) / 1024
            V.append((f"daemon: VmRSS beyond {m['plays']} plays", "INFO",
                      f"{m['plays']} → {m['more']}: {g2:+.2f} MiB ({g2 * 1024 / (m['more'] - m['plays']):+.2f} KiB per play); "
                      f"VmRSS {more['VmRSS'] / 1024:.1f} MiB, VmHWM {more['VmHWM'] / 1024:.1f} MiB after {m['more']} "
                      f"(outcomes: " + ", ".join(f"{k} {v}" for k, v in m["outcomes"].items()) + "); no target set"))

    for r in res.get("alert", []):
        where = f"`{r['device']}`" + (", over a playing stream" if r["over_stream"] else "")
        w, c = r["warm"], r["cold"]
        if r["device"] == "null":
            V.append((f"alert: warm `announce alert` to first frame p50 ≤ 15 ms ({where})",
                      "PASS" if w["p50"] <= ALERT_P50_MS else "FAIL",
                      f"p50 {w['p50']:.1f} ms, p90 {w['p90']:.1f} ms, max {w['max']:.1f} ms ({w['n']} alerts); the daemon "
                      f"alone (request to first frame) p50 {r['request']['p50']:.2f} ms; client CPU p50 {r['cpu']['p50']:.1f} ms"))
        else:
            V.append((f"alert: warm `announce alert` to first frame ({where})", "INFO",
                      f"p50 {w['p50']:.1f} ms, p90 {w['p90']:.1f} ms, max {w['max']:.1f} ms ({w['n']} alerts; the daemon "
                      f"alone p50 {r['request']['p50']:.2f} ms); no target set"))
        V.append((f"alert: cold `announce alert` (a file not yet cached) to first frame ({where})", "INFO",
                  f"p50 {c['p50']:.1f} ms, p90 {c['p90']:.1f} ms, max {c['max']:.1f} ms ({c['n']} alerts); no target set"))

    S = res.get("speech")
    if S:
        f, k, e = S["fresh"], S["cached"], S["espeak"]
        V.append(("speech: warm `announce say` (a new sentence, espeak-ng) to first frame p50 ≤ 60 ms (`null`)",
                  "PASS" if f["p50"] <= SAY_P50_MS else "FAIL",
                  f"p50 {f['p50']:.1f} ms, p90 {f['p90']:.1f} ms, max {f['max']:.1f} ms ({f['n']} utterances); "
                  f"espeak-ng alone, spawn to its first sample: p50 {e['p50']:.1f} ms ({f['p50'] / e['p50']:.2f}×); "
                  f"client CPU p50 {S['cpu']['p50']:.1f} ms"))
        V.append(("speech: `announce say` of a sentence just said (the render cache) to first frame (`null`)", "INFO",
                  f"p50 {k['p50']:.1f} ms, p90 {k['p90']:.1f} ms, max {k['max']:.1f} ms; no engine runs; no target set"))

    N = res.get("network")
    if N:
        u, q = N["url"], N["path"]
        V.append((f"network: `announce play http://127.0.0.1/…` to first frame on loopback ({N['file']}, `null`)", "INFO",
                  f"p50 {u['p50']:.1f} ms, p99 {u['p99']:.1f} ms, max {u['max']:.1f} ms ({u['n']} plays); the same file "
                  f"by path p50 {q['p50']:.1f} ms, p99 {q['p99']:.1f} ms; no target set"))
        runs = N["stream"]["runs"]
        pr = [x["cpu"] / y["cpu"] for x, y in zip(runs["announce"], runs["mpg123"]) if y["cpu"] > 0]
        a, b = (med(r["cpu"] for r in runs[p]) for p in ("announce", "mpg123"))
        V.append(("network: the 60-minute MP3 over http, CPU ÷ `mpg123 -o alsa -a null http://…`", "INFO",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s; announce: client "
                  f"+ daemon, its download included); no target set"))

    M = res.get("mixing")
    if M:
        by = {}
        for r in M["cases"]:
            per = r["cpu_pct"] / r["streams"]
            by[(r["rate"], r["streams"])] = r
            what = f"{r['streams']} stream{'s' if r['streams'] > 1 else ''} at {r['rate'] / 1000:g} kHz"
            shown = (f"{per:.3f}% per stream ({r['cpu_pct']:.2f}% in all over {r['seconds']:.0f} s; PulseAudio server "
                     f"{r['pulseaudio_pct']:.2f}% besides; {r['ctxsw_per_s']:.0f} context switches/s; underruns: "
                     f"{'; '.join(r['underruns']) or 'none'})")
            if r["rate"] == 48000:
                V.append((f"mixing: daemon CPU < 0.5% of a core per stream ({what}, paced `pulse`)",
                          "PASS" if per < MIX_PER_STREAM_PCT else "FAIL", shown))
            else:
                V.append((f"mixing: daemon CPU per stream ({what}, resampled to 48 kHz, paced `pulse`)", "INFO",
                          shown + "; no target set"))
        for rate in (48000, 44100):
            if (rate, 4) in by and (rate, 16) in by:
                V.append((f"mixing: marginal daemon CPU per added stream ({rate / 1000:g} kHz, 4 → 16 streams)", "INFO",
                          f"{(by[(rate, 16)]['cpu_pct'] - by[(rate, 4)]['cpu_pct']) / 12:.3f}% of a core per stream "
                          "(the device's fixed cost left out); no target set"))
        if M["references"]:
            V.append(("mixing: reference, one stream through ALSA `pulse` by aplay", "INFO",
                      "; ".join(f"`{r['command']}` {r['cpu_pct']:.2f}%" for r in M["references"]) + "; no target set"))

    for r in res.get("duck", []):
        on = f"{r['server']}, {r['rounds']} rounds"
        V.append((f"duck others: announce's clip heard → another application's stream at the duck level ({r['server']})", "INFO",
                  f"p50 {r['level_1db']['p50']:.0f} ms, p99 {r['level_1db']['p99']:.0f} ms to within 1 dB of it (90 % of "
                  f"the way: p50 {r['level_90']['p50']:.0f} ms, p99 {r['level_90']['p99']:.0f} ms; {on}); no target set"))
        V.append((f"duck others: ramps, 10–90 % ({r['server']})", "INFO",
                  f"down p50 {r['down']['p50']:.0f} ms (max {r['down']['max']:.0f}), up p50 {r['up']['p50']:.0f} ms "
                  f"(max {r['up']['max']:.0f}); depth {min(r['depth_db']):.2f} to {max(r['depth_db']):.2f} dB for -12 dB; "
                  f"raised cosines of 150 and 400 ms: 88 and 236 ms; no target set"))
        V.append((f"duck others: restored exactly ({r['server']})", "PASS" if r["pactl_exact"] == r["rounds"] else "FAIL",
                  f"pactl's volume after = before in {r['pactl_exact']}/{r['rounds']} rounds (largest difference "
                  f"{r['pactl_db_max']:.3f} dB; seen back {r['restore_seen']['p50']:.0f} ms after the play returned, p50); "
                  f"level after vs before on the monitor {min(r['after_db']):+.3f} to {max(r['after_db']):+.3f} dB"))

    for r in res.get("zones", []):
        n, lead = r["hosts"], r["lead"] * 1e3
        a, sp, late, dl = r["all"], r["spread"], r["late"], r["delivery"]
        limit = ZONE_ALL_P99_MS.get(n)
        V.append((f"zones: `play --zone all` → first frame on every host p99 ≤ {limit:.0f} ms ({n} hosts, the "
                  f"{lead:.0f} ms common start lead included)", "PASS" if a["p99"] <= limit else "FAIL",
                  f"p99 {a['p99']:.0f} ms (p50 {a['p50']:.0f}, max {a['max']:.0f}; {a['n']} plays); without the lead: "
                  f"p50 {a['p50'] - lead:.0f} ms, p99 {a['p99'] - lead:.0f} ms = the client to its send (p50 "
                  f"{r['client']['p50']:.0f} ms: connect, read the statuses) + the last host's first frame after the "
                  f"common start time (p50 {late['p50']:.1f} ms, p99 {late['p99']:.1f} ms); client exit p50 "
                  f"{r['exit']['p50']:.0f} ms"))
        V.append((f"zones: `play --zone all` reports every host ({n} hosts)", "PASS" if min(r["reported"]) == n else "FAIL",
                  f"{min(r['reported'])} of {n} hosts in its worst play ({sum(x == n for x in r['reported'])} of "
                  f"{len(r['reported'])} plays complete); every host played every play (its own events)"))
        V.append((f"zones: the play queued on every host within the {lead:.0f} ms lead, p99 ({n} hosts)",
                  "PASS" if dl["p99"] < lead else "FAIL",
                  f"p99 {dl['p99']:.0f} ms (p50 {dl['p50']:.0f}, max {dl['max']:.0f}) from the send (the play's `sent`) "
                  f"to the last host's `queued` event: through the broker, stored and spooled"))
        shown = (f"p99 {sp['p99']:.1f} ms (p50 {sp['p50']:.1f}, max {sp['max']:.1f}; {sp['n']} plays): max − min of "
                 f"the hosts' first frames, one machine and one clock, so the hosts' own jitter, not clock error")
        if n <= 3:
            V.append((f"zones: start spread between hosts p99 ≤ {ZONE_SPREAD_P99_MS:.0f} ms ({n} hosts)",
                      "PASS" if sp["p99"] <= ZONE_SPREAD_P99_MS else "FAIL", shown))
        else:
            V.append((f"zones: start spread between hosts ({n} hosts)", "INFO",
                      shown + f" ({n} daemons woken at once on this machine's cores); no target set"))
        idle = r["idle"]
        secs, cpu, wk = idle["seconds"], idle["cpu_us"], idle["wakeups"]
        V.append((f"zones: idle CPU < 1 ms per daemon over {secs:.0f} s, the bridge connected ({n} hosts)",
                  "PASS" if max(cpu) < IDLE_CPU_MS * 1e3 else "FAIL",
                  f"at most {max(cpu):.0f} µs (median {med(cpu):.0f} µs, the {n} together {sum(cpu):.0f} µs; each process's CPU clock, every thread)"))
        limit = max(2, math.ceil(ZONE_WAKEUPS_PER_MIN * secs / 60))
        threads = sorted(idle["by_thread"].items(), key=lambda t: -t[1])
        V.append((f"zones: idle wake-ups ≤ {ZONE_WAKEUPS_PER_MIN} a minute per daemon, the bridge connected ({n} hosts)",
                  "PASS" if max(wk) <= limit else "FAIL",
                  f"at most {max(wk)} in {secs:.0f} s (limit {limit}; median {med(wk):g}); by thread, all daemons: "
                  + (", ".join(f"{k} {v}" for k, v in threads) or "none")))

    C = res.get("callgrind")
    for kind in ("mp3", "wav"):
        if f"{kind}-1min" in (C or {}):
            a, b = C[f"{kind}-0.1s"], C[f"{kind}-1min"]
            V.append((f"instructions per minute of {kind.upper()} audio ÷ {a['reference']} (callgrind, 1min − 0.1s)", "INFO",
                      f"{(b['announce'] - a['announce']) / max(1, b['ref'] - a['ref']):.2f}× ({(b['announce'] - a['announce']) / 1e6:.1f} M "
                      f"vs {(b['ref'] - a['ref']) / 1e6:.1f} M); start-up {a['announce'] / 1e6:.1f} M vs {a['ref'] / 1e6:.1f} M "
                      "(the 0.1 s clip); no target set"))
    mach = res.get("machine")
    if mach:
        V.append(("binary: stripped size, as `make install` installs it", "INFO",
                  f"{mach['stripped_bytes'] / 1e6:.1f} MB ({mach['binary_bytes'] / 1e6:.1f} MB unstripped); no target set"))
    return V


# Rows renamed since an earlier report: (old name, new name), for the previous-run column.
RENAMED = ("MP3 CPU ≤ 1.05× mpg123 (mp3-1min, informative)", "MP3 CPU ÷ mpg123, start-up included (mp3-1min)")


def previous_targets(path):
    """{target: (verdict, first figure)} and the commit of the BENCHMARKS.md at path."""
    try:
        text = open(path).read()
    except OSError:
        return {}, None
    commit = re.search(r"\*\*commit\*\*: ([0-9a-f]+)", text)
    rows = {}
    for m in re.finditer(r"^\| (.+?) \| \*\*(\w+)\*\* \| (.+?) \|", text, re.M):
        rows[RENAMED[1] if m.group(1) == RENAMED[0] else m.group(1)] = (m.group(2), re.split(r" \(|;", m.group(3))[0])
    return rows, commit.group(1) if commit else None


def render(res, out):
    prev, prev_commit = res.get("previous") or ({}, None)
    mach, load = res.get("machine", {}), res.get("load")
    V = ratio_rows(res)
    w = []
    w += ["# Benchmarks", "",
          "Written by `make bench` (`scripts/bench.py`); regenerate it rather than editing it. announce,",
          "mpg123, aplay and sox play the same files to ALSA's `null` device in the same run, interleaved",
          "round by round; announce is given as a ratio of the reference player. Reliability figures are in",
          "docs/RELIABILITY.md (`make stress`).", ""]
    if res.get("smoke"):
        w += ["**Smoke run** (`--smoke`): few repetitions, short windows. Not for comparison.", ""]
    w += ["## Machine and run", ""]
    w.append(f"- **date**: {res.get('date', '?')}; **commit**: {mach.get('commit', '?')}")
    if mach:
        w.append(f"- **binary**: announce, {mach['binary_bytes'] / 1e6:.1f} MB ({mach['stripped_bytes'] / 1e6:.1f} MB stripped, "
                 "as make install installs it); `make release`")
        w.append(f"- **machine**: {mach['cpu']}, {mach['cores']} cores, {mach['memory']}; {mach['os']}, kernel {mach['kernel']}")
        w.append(f"- **tools**: {mach['swift']}; {mach['mpg123']}; {mach['aplay'].split(' by ')[0]}; {re.sub(' +', ' ', mach['sox'])}")
        w.append(f"- **alsa config**: {mach['alsa config']}")
    if load:
        quiet = load["others_cores"] < 0.1 and not load["builds_seen"]
        w.append((f"- **duration**: `make bench` took {load['make_seconds'] / 60:.1f} min, the harness {load['seconds'] / 60:.1f} min "
                  "of it" if "make_seconds" in load else f"- **duration**: {load['seconds'] / 60:.1f} min")
                 + " (the first run takes a few minutes more: the inputs, and building Benchmarks/)")
        w.append(f"- **other load**: {'quiet' if quiet else '**disturbed**'}: other processes used {load['others_cores']:.2f} "
                 f"of the {mach.get('cores', '?')} cores on average (this harness {load['own_cores']:.2f}); Swift builds "
                 f"were running in {load['builds_seen']} of {load['samples']} 5-second samples (up to "
                 f"{load['max_frontends']} compiler processes; 1-minute load average up to {load['load_max']:.1f})."
                 + ("" if quiet else " Ratios are taken round by round, so most drift cancels, but latencies and "
                    "small-file figures suffer: rerun `make bench` on a quiet machine to confirm."))
    w += ["", "## Targets", "",
          "From the issues. CPU = user + system; announce = its client (`announce play`) and its daemon",
          "together (the daemon's CPU clock from just before the client starts until it has closed the",
          "device after the item). CPU ratios are the median of per-round ratios (announce's run over the",
          "reference's run right after it), so machine drift cancels; the range over rounds follows.",
          "For WAV, where a second process's start-up outweighs the work, the target is the daemon's CPU",
          "per second of audio beyond start-up (the 60-minute file's run minus the 1-second file's, played",
          "side by side in each round). INFO rows have no target.", ""]
    pc = f" | previous run ({prev_commit})" if prev else ""
    w += [f"| target | result | figures{pc} |", "|---|---|---|" + ("---|" if prev else "")]
    for name, v, shown in V:
        p = f" | {prev[name][0]}: {prev[name][1]}" if name in prev else (" | —" if prev else "")
        w.append(f"| {name} | **{v}** | {shown}{p} |")
    w.append("")

    P = res.get("players")
    if P:
        w += ["## Players", "",
              "Medians of the counted runs (one uncounted warm-up round first; for the 60-minute MP3 the file",
              "is read once with `cat` instead). Peak RSS: the process's VmHWM at its exit (ptrace exit stop);",
              "announce's is the larger of the client's and the daemon's (its VmHWM reset before each run).",
              "Context switches: the client's and the daemon's threads'.", "",
              "| file | player | runs | CPU s | CPU min–max | wall s | peak RSS MiB | context switches | ÷ player: CPU | wall | RSS |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for case in ("mp3-60min", "mp3-1min", "mp3-0.1s", "wav-60min", "wav-10min", "wav-1min", "wav-0.1s"):
            if case not in P:
                continue
            runs = P[case]["runs"]
            m = {p: {k: med(r[k] for r in rs) for k in ("cpu", "wall", "rss_kib", "ctxsw")} for p, rs in runs.items()}
            for p, rs in runs.items():
                cpus = [r["cpu"] for r in rs]
                ratio = " |  | " if p == "announce" else " | ".join(f"{m['announce'][k] / m[p][k]:.2f}×" for k in ("cpu", "wall", "rss_kib"))
                w.append(f"| {case if p == 'announce' else ''} | {'**announce**' if p == 'announce' else p} | {len(rs)} | "
                         f"{m[p]['cpu']:.4f} | {min(cpus):.4f}–{max(cpus):.4f} | {m[p]['wall']:.3f} | {m[p]['rss_kib'] / 1024:.1f} | "
                         f"{m[p]['ctxsw']:,.0f} | {ratio} |")
        w.append("")
        w.append("announce's split (medians): " + "; ".join(
            f"{c}: client {med(r['client_cpu'] for r in P[c]['runs']['announce']) * 1e3:.1f} ms + daemon "
            f"{med(r['daemon_cpu'] for r in P[c]['runs']['announce']) * 1e3:.1f} ms CPU"
            for c in ("mp3-0.1s", "mp3-60min", "wav-0.1s", "wav-60min") if c in P) + ".")
        w += ["", "Commands (FILE is the case's file in `.bench-cache/`): " + "; ".join(sorted(
            {f"`{cmd}`" for c in P.values() for cmd in c["commands"].values()})) + ".", ""]

    C = res.get("callgrind")
    if C:
        w += ["## Instructions (callgrind)", "",
              "| file | announce M (client + daemon) | reference M | ÷ |", "|---|---:|---:|---:|"]
        w += [f"| {k} | {r['announce'] / 1e6:.1f} ({r['client'] / 1e6:.1f} + {r['daemon'] / 1e6:.1f}) | {r['reference']} "
              f"{r['ref'] / 1e6:.1f} | {r['announce'] / r['ref']:.2f}× |" for k, r in C.items()]
        for k, r in C.items():
            if k.endswith("1min"):
                gs = sorted(r["groups"], key=lambda g: -r["groups"][g])
                w += ["", f"{k}, announce by library (M): " + "; ".join(
                    f"{g} {r['groups'][g] / 1e6:.1f}" for g in gs if r["groups"][g] >= 0.003 * r["announce"]) + "."]
        w.append("")

    w += ["## How it is measured", "",
          "- **Players**: each case gets its own `announce daemon --device null` (private runtime directory);",
          "  first a 0.1 s clip of the format is played uncounted. announce's CPU = the client's rusage + the",
          "  daemon's CPU clock (`clock_getcpuclockid`, every thread) from just before the client starts",
          "  until the daemon's `device-closed` event after the item (it closes an idle device after 100 ms),",
          "  so each run pays for opening, playing and closing, like the other players.",
          "- **Tempo**: the 60-minute MP3 with `--rate 2` (libsonic on the daemon's decode thread), the same",
          "  file played plainly, and sox's WSOLA `tempo 2`, each to `null`, interleaved round by round;",
          "  announce counted as for Players. The ratios are per round.",
          "- **Enqueue**: `play` with `wait:false` of an existing file while the queue is paused, from the",
          "  send to the reply (the daemon spools the item with fsyncs), after 50 uncounted; on tmpfs",
          "  (`/dev/shm`, as `$XDG_RUNTIME_DIR`) and ext4 `/tmp`. The `--no-wait` command: spawn to exit, and",
          "  its client's user + system time, after 5 uncounted runs.",
          "- **Preemption**: a normal item loops on `null` (the player busy decoding); a random 2–12 ms after",
          "  it resumed, a 0.05 s `high` item is sent: send to its `started` event's `time` (the daemon's",
          "  clock when the first frames are written). Resumption: the high item's `finished` to the normal",
          "  item's next `started`.",
          "- **Cold start**: no daemon; `announce play -q -d null` starts one: spawn to daemon.log's",
          "  \"started on\" line. **Idle**: a fresh daemon and one that played a clip, CPU clock and context",
          "  switches of every thread. **Memory**: 0.1 s clips (WAV and MP3) in batches of 100, each played to",
          "  the end, then `/proc/PID/status`.",
          "- **Alerts**: `announce alert -q -d DEV FILE` (0.3 s, 48 kHz) with the daemon running, spawn to its",
          "  `started` event; warm = PCM cached, cold = a new copy; \"daemon alone\" = an `alert` request on an",
          "  open connection. A random 0–60 ms between alerts; each waits for the device to close again,",
          "  except over a playing stream (an ambient tone looping on the device).",
          "- **Mixing**: N looping ambient streams (`announce play --no-wait --category ambient --loops -1`,",
          "  different 5 s tones) on `pulse`, the paced PulseAudio of `Tests/Shell/paced-audio.sh`; the daemon's",
          "  CPU clock over the window, 2 s after all started. 44.1 kHz streams join a device a 48 kHz stream",
          "  opened, so each is resampled. The aplay rows: one tone through the same PCM with aplay's periods,",
          "  announce's for a sound server (3 × 60 ms) and for a kernel-side PCM (4 × 20 ms).",
          "- **Ducking other applications**: another application's 440 Hz tone (`sox … | pacat`, no media.role)",
          "  plays on the private sound server's sink (PulseAudio as for Mixing; PipeWire with WirePlumber and",
          "  pipewire-pulse, `Tests/Shell/pipewire-audio.sh`) while `announce play --duck-others` plays a 1.5 s",
          "  1000 Hz clip on `pulse`, 0.8 s and more apart; the sink's monitor is recorded (parec, 10 ms) and each",
          "  tone's level read in 25 ms windows every 1 ms. From the clip's onset as heard to the other tone",
          "  within 1 dB of its duck level; the ramps' 10–90 % times; the tone's level 0.9–1.3 s after the clip",
          "  against 0.1–0.6 s before it; and the stream's volume in `pactl list sink-inputs` after each round",
          "  against before (exact means the same integers).",
          "- **Zones**: mosquitto on 127.0.0.1 at a free port (generated config, `timeout`, stopped by pid), N",
          "  `announce daemon --device null` (3, then 30, a fresh broker each), each with its own runtime directory",
          "  and config (`[mqtt]` broker, host, zones), and a sending host without a daemon; one uncounted play",
          "  first. `announce play --json --zone all` of a 0.2 s WAV (it travels in the message): from the spawn",
          "  to the last host's `started` event time (the daemon's clock when the first frames are written);",
          "  every host must play it (its `finished` event), and the client must list them all. The play as",
          "  the broker carried it (`mosquitto_sub`) gives its send time and common start time (send + 300 ms,",
          "  `ZoneLimits.startLead`), which split the figure into the client's part, the lead, and the hosts'",
          "  lateness after the common time. Spread: the latest minus",
          "  the earliest host's first frame; one machine shows the hosts' own jitter, not the clocks' offset",
          "  (NTP adds that across machines). Targets: 500 ms for 3 hosts is the lead plus 200 ms; 1 s for 30",
          "  daemons that share this machine's cores; a spread under 30 ms, as speakers in neighbouring rooms",
          "  heard less than about 30 ms apart are heard as one (the precedence effect). Idle: after the plays,",
          "  each daemon's CPU clock and context switches over the window, the bridge connected; the bridge",
          "  wakes for the keepalive (a loop timeout every 15 s, a PINGREQ every 30 s and its PINGRESP), hence",
          "  wake-ups, unlike a daemon without `[mqtt]`.",
          "- **Instructions**: callgrind, user space, every thread; announce = client + daemon from just",
          "  before the client starts until the device closed. 1 min − 0.1 s is the cost of one minute of",
          "  audio; announce's own code is told from the static Swift runtime by the mangled module name.",
          ""]

    MI = res.get("micro")
    if MI:
        w += ["## Micro-benchmarks (ordo-one/benchmark)", "",
              "`Benchmarks/` (a package of its own: `swift build` and `make test` never build it), through the",
              "layers' public API; one iteration is one second of audio, one whole 1-minute file or 100 queue",
              "items. Percentiles over the iterations; allocations (malloc count) show what the real-time",
              "paths must not do. Run alone: `cd Benchmarks && swift package --disable-sandbox benchmark`.", ""]
        w += micro_tables(MI["output"]) + [""]

    for name, e in res.get("errors", {}).items():
        w += [f"**The {name} section failed** and is missing above:", "", "```", e.strip(), "```", ""]
    w += ["## Reproduce", "", "```sh",
          "make bench                                   # installs tools, builds release, runs scripts/bench.py",
          "scripts/bench.py .build/release/announce --smoke --only daemon   # quick look at one section",
          "scripts/bench.py --render                    # this file again from .bench-cache/results.json",
          "```", "",
          "Inputs are generated once into `.bench-cache/` by ffmpeg: one minute of synthesized music-like stereo,",
          "as 128 kbit/s CBR MP3 (1 and 60 minutes, one continuous encode) and 16-bit WAV (1 s, 1, 10 and 60",
          "minutes), 44.1 kHz, plus 0.1 s clips. Every figure above is in `.bench-cache/results.json`.", ""]
    text = "\n".join(w)
    with open(out, "w") as f:
        f.write(text)
    for name, v, shown in V:
        print(f"  {v:<4} {name}: {shown[:110]}")


def micro_tables(output):
    """ordo-one's markdown output (a table per benchmark, a row per metric) as one table per
    metric, a row per benchmark."""
    out, bench, rows, header = [], None, {}, None
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("### "):
            bench = line[4:].strip()
        elif line.startswith("| Metric"):
            header = cells
        elif line.startswith("| ") and bench and header:
            rows.setdefault(cells[0].rstrip(" *"), []).append((bench, dict(zip(header, cells))))
    for metric, items in rows.items():
        out += [f"| {metric} | p0 | p50 | p90 | p100 | samples |", "|---|---:|---:|---:|---:|---:|"]
        out += [f"| {b} | " + " | ".join(c.get(k, "") for k in ("p0", "p50", "p90", "p100", "Samples")) + " |" for b, c in items]
        out.append("")
    return out or ["```", output.strip(), "```"]


# =========================================================================================

SECTIONS = ["players", "tempo", "daemon", "alert", "speech", "network", "mixing", "duck", "zones", "callgrind", "micro"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--out")
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--make-started", type=float, help="when `make bench` started (epoch s), for its duration")
    args = ap.parse_args()
    results = os.path.join(CACHE, "results.smoke.json" if args.smoke else "results.json")
    out = args.out or (os.path.join(CACHE, "BENCHMARKS.smoke.md") if args.smoke else os.path.join(ROOT, "BENCHMARKS.md"))
    if args.render:
        render(json.load(open(results)), out)
        return
    if not args.binary or not os.access(args.binary, os.X_OK):
        sys.exit("usage: bench.py PATH-TO-announce (build it with: make release)")
    missing = [t for t in ("ffmpeg", "ffprobe", "mpg123", "aplay", "sox") if not shutil.which(t)]
    if missing:
        sys.exit(f"bench.py: missing tools: {' '.join(missing)} (make deps-bench installs them)")
    os.makedirs(CACHE, exist_ok=True)
    os.makedirs(os.path.join(CACHE, "config"), exist_ok=True)
    os.environ["XDG_CONFIG_HOME"] = os.path.join(CACHE, "config")  # the user's config must not reach the plays
    n = {k: int(os.environ.get(f"BENCH_{k}", v[1] if args.smoke else v[0])) for k, v in COUNTS.items()}
    load = Load()
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "smoke": args.smoke, "counts": n}
    bench = Bench(os.path.abspath(args.binary), n, res)
    res["machine"] = machine(bench.bin, pin_alsa())
    res["previous"] = previous_targets(out)  # the report shows the last run's figures beside the new ones
    try:
        bench.inputs()
        for name in SECTIONS:
            if name in args.only.split(","):
                t0 = time.perf_counter()
                log(f"{name}...")
                load.own_build = name == "micro"  # its Swift build is ours, not another's
                try:
                    getattr(bench, name)()
                except Exception as e:  # noqa: BLE001 (the other sections' figures are still written)
                    log(f"{name} FAILED: {e}")
                    res.setdefault("errors", {})[name] = str(e)[-600:]
                load.own_build = False
                res.setdefault("section_seconds", {})[name] = time.perf_counter() - t0
    finally:
        for f in reversed(bench.cleanups):
            try:
                f()
            except Exception as e:  # noqa: BLE001
                log(f"cleanup: {e}")
        res["load"] = load.result()
        if args.make_started:
            res["load"]["make_seconds"] = time.time() - args.make_started
        json.dump(res, open(results, "w"), indent=1)
    render(res, out)
    log(f"wrote {os.path.relpath(out)} in {res['load']['seconds'] / 60:.1f} min")
    if res.get("errors"):
        sys.exit(f"bench.py: failed: {', '.join(res['errors'])} (see BENCHMARKS.md)")


if __name__ == "__main__":
    main()
