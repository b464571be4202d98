#!/usr/bin/env python3
"""The daemon section of `make bench` (Python standard library only).

    daemon.py ANNOUNCE_BIN CACHE_DIR OUT.json
    daemon.py --render OUT.json      (re-renders OUT.json's markdown from its results)

Every daemon here is `announce daemon --device null` in a fresh private runtime directory
(0700) on tmpfs (/dev/shm, like $XDG_RUNTIME_DIR) unless said otherwise, so nothing touches
the user's own daemon. Measures, in this order (about a minute in all):

  a. enqueue round trip: `play` with `wait:false` of an existing file while the queue is
     paused, 1000 requests on one connection and 1000 with a connection each (as
     `announce play --no-wait` does), with the runtime directory on tmpfs and on /tmp (disk:
     the spool's fsyncs cost there); then `announce play --no-wait -q` end to end (process start
     and exit included): its wall time and its CPU (user + system, the client process alone,
     from getrusage(RUSAGE_CHILDREN) around each run); `clear` afterwards.
  b. preemption: a looping normal item plays on `null`; ~200 times a 0.05 s `high` item is
     sent; latency = its `started` event's `time` (the daemon's CLOCK_REALTIME when the first
     frames were written) minus Python's time.time() just before the request was sent.
  c. cold start: no daemon, a fresh runtime directory, `announce play -d null FILE` starts
     one; latency from just before the spawn to the timestamp of the daemon.log line
     "ID PATH: started on DEV as FORMAT" (UTC, ms). The daemon is stopped (SIGTERM) after each.
  d. idle: a daemon without --idle-exit, idle 10 s (fresh, and after it has played something
     and closed the device): its CPU clock and summed /proc/PID/task/*/schedstat on-CPU time,
     and its threads' voluntary + involuntary context switches (wake-ups), before and after.
  e. memory: VmRSS / VmHWM after 10 plays and after 1000 plays of 0.1 s clips (WAV and MP3
     alternating) on `null`, enqueued with `wait:true`.

Writes OUT.json: {"results": ..., "verdicts": [[target, PASS|FAIL|INFO, figures], ...],
"markdown": "## The daemon ..."} for measure.py report.
"""
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import wave
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import announced as A  # noqa: E402

ENQUEUE_P99_MS = 5.0
PREEMPT_P99_MS = 20.0
IDLE_CPU_MS = 1.0
CLIENT_CPU_MS = 10.0  # issue 11: a warm `announce play -q --no-wait` (the client process alone), median
IDLE_WAKEUPS = 0
RSS_MB = 20.0
RSS_GROWTH_MIB = 2.0

N_ENQUEUE = int(os.environ.get("BENCH_DAEMON_ENQUEUE", "1000"))
N_CLI = int(os.environ.get("BENCH_DAEMON_CLI", "200"))
N_PREEMPT = int(os.environ.get("BENCH_DAEMON_PREEMPT", "200"))
# Over a looping MP3 each resumption takes tens to hundreds of ms (see the report), so fewer.
N_PREEMPT_MP3 = int(os.environ.get("BENCH_DAEMON_PREEMPT_MP3", "100"))
N_COLD = int(os.environ.get("BENCH_DAEMON_COLD", "10"))
IDLE_SECONDS = float(os.environ.get("BENCH_DAEMON_IDLE", "10"))
N_PLAYS = 1000
# Beyond the target's 1000 plays: does the growth go on (a leak) or level off?
MORE_PLAYS = [int(x) for x in os.environ.get("BENCH_DAEMON_PLAYS_MORE", "5000").split(",") if x]

TMPFS = "/dev/shm"
DISK = "/tmp"


log = A.logger("daemon")


def fs_type(path):
    """The filesystem type of path, from /proc/self/mounts (longest mount point prefix)."""
    best, kind = "", "?"
    real = os.path.realpath(path)
    try:
        for line in open("/proc/self/mounts"):
            parts = line.split()
            mnt = parts[1].replace("\\040", " ")
            if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, kind = mnt, parts[2]
    except OSError:
        pass
    return kind


class Bench:
    def __init__(self, binary, cache):
        self.bin = binary
        self.cache = cache
        self.tag = f"ab{os.getpid()}"
        self.dirs = []
        self.daemons = []

    def rundir(self, base, name):
        path = os.path.join(base, f"{self.tag}-{name}")
        self.dirs.append(path)
        return A.fresh_dir(path)

    def daemon(self, base, name, **kw):
        d = A.Daemon(A.daemon_argv(self.bin, "null", **kw), self.rundir(base, name))
        self.daemons.append(d)
        return d

    def stop(self, d):
        self.daemons.remove(d)
        d.stop_checked()

    def cleanup(self):
        A.cleanup(self.daemons, self.dirs, log)

    def clip(self, name):
        return os.path.join(self.cache, name)

    # ---------------------------------------------------------------------------------
    # a. enqueue round trip

    def enqueue(self, base):
        d = self.daemon(base, "enq")
        clip = self.clip("wav-0.1s.wav")
        req = {"op": "play", "items": [A.item(clip)], "wait": False}
        c = d.connect()
        c.call({"op": "pause"})
        for _ in range(50):  # warm-up
            c.call(req)
        c.call({"op": "clear"})
        rss = {"before": A.status_kib(d.pid)}
        one = []
        for _ in range(N_ENQUEUE):
            t = time.perf_counter()
            reply, _ = c.call(req)
            one.append(time.perf_counter() - t)
            assert reply.get("ids"), reply
        rss["queued"] = A.status_kib(d.pid)
        t = time.perf_counter()
        c.call({"op": "clear"})
        clear_s = time.perf_counter() - t
        rss["cleared"] = A.status_kib(d.pid)
        each = []
        for _ in range(N_ENQUEUE):
            t = time.perf_counter()
            k = d.connect()
            reply, _ = k.call(req)
            each.append(time.perf_counter() - t)
            k.close()
            assert reply.get("ids"), reply
        c.call({"op": "clear"})
        cli = []
        cli_cpu = []
        argv = [self.bin, "play", "--no-wait", "-q", clip]
        for i in range(N_CLI + 5):
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            r = subprocess.run(argv, env=d.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
            dt = time.perf_counter() - t
            ru2 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.returncode != 0:
                raise RuntimeError(f"announce play --no-wait exited {r.returncode}: {r.stderr.decode()[-300:]}")
            if i >= 5:
                cli.append(dt)
                cli_cpu.append(ru2.ru_utime + ru2.ru_stime - ru.ru_utime - ru.ru_stime)
        c.call({"op": "clear"})
        c.call({"op": "resume"})
        c.close()
        self.stop(d)
        return {"dir": d.rundir, "fs": fs_type(d.rundir), "one_connection": A.stats_ms(one, 99),
                "connection_each": A.stats_ms(each, 99), "cli_no_wait": A.stats_ms(cli, 99),
                "cli_no_wait_cpu": A.stats_ms(cli_cpu, 99),
                "clear_ms": A.ms(clear_s),
                "cleared": N_ENQUEUE, "rss": rss}

    # ---------------------------------------------------------------------------------
    # b. preemption

    def short_clip(self):
        """wav-0.05s.wav: the first 0.05 s of wav-0.1s.wav (made here, once)."""
        path = self.clip("wav-0.05s.wav")
        if not os.path.exists(path):
            with wave.open(self.clip("wav-0.1s.wav"), "rb") as src:
                params = src.getparams()
                frames = src.readframes(int(src.getframerate() * 0.05))
            tmp = path + ".tmp"
            with wave.open(tmp, "wb") as dst:
                dst.setparams(params)
                dst.writeframes(frames)
            os.replace(tmp, path)
        return path

    def preemption(self, normal_file, count):
        d = self.daemon(TMPFS, "pre")
        high = self.short_clip()
        ev = d.connect()
        ev.call({"op": "events"})
        c = d.connect()
        reply, _ = c.call({"op": "play", "items": [A.item(self.clip(normal_file), loops=-1)], "wait": False})
        normal = reply["ids"][0]

        def until(pred, what, timeout=5.0):
            return ev.until(pred, timeout,
                            missing=lambda: f"preemption: no {what} within {timeout} s ({d.log_tail()})")

        until(lambda m: m.get("event") == "started" and m.get("id") == normal, "start of the normal item")
        rng = random.Random(1)
        lat, rtt, resume, outcomes = [], [], [], {}
        for _ in range(count):
            time.sleep(rng.uniform(0.002, 0.012))  # somewhere into the resumed item
            t = time.time()
            c.send({"op": "play", "items": [A.item(high, priority="high")], "wait": False})
            reply = c.next(timeout=5)
            rtt.append(time.time() - t)
            hid = reply["ids"][0]
            s = until(lambda m: m.get("event") == "started" and m.get("id") == hid, "started event of the high item")
            lat.append(s["time"] - t)
            f = until(lambda m: m.get("event") == "finished" and m.get("id") == hid, "finished event")
            kind = f["outcome"]["kind"]
            outcomes[kind] = outcomes.get(kind, 0) + 1
            r = until(lambda m: m.get("event") == "started" and m.get("id") == normal, "resumption of the normal item")
            resume.append(r["time"] - f["time"])
        c.call({"op": "clear"})
        ev.close()
        c.close()
        self.stop(d)
        return {"normal": normal_file, "high": os.path.basename(high), "latency": A.stats_ms(lat, 99),
                "enqueue_rtt": A.stats_ms(rtt, 99), "resume": A.stats_ms(resume, 99),
                "outcomes": outcomes}

    # ---------------------------------------------------------------------------------
    # c. cold start

    @staticmethod
    def log_time(stamp):
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()

    def cold(self, base, file):
        path = os.path.join(base, f"{self.tag}-cold")
        self.dirs.append(path)
        first, done = [], []
        env = dict(os.environ, ANNOUNCE_RUNTIME_DIR=path)
        argv = [self.bin, "play", "-q", "-d", "null", self.clip(file)]
        for _ in range(N_COLD):
            shutil.rmtree(path, ignore_errors=True)
            t0 = time.time()
            r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
            t1 = time.time()
            if r.returncode != 0:
                raise RuntimeError(f"cold announce play exited {r.returncode}: {r.stderr.decode()[-300:]}")
            text = open(os.path.join(path, "daemon.log"), errors="replace").read()
            m = re.search(r"^(\S+) \[\d+\] \w+: \S+ .*: started on ", text, re.M)
            if not m:
                raise RuntimeError(f"no 'started on' line in {path}/daemon.log:\n{text[-500:]}")
            first.append(self.log_time(m.group(1)) - t0)
            done.append(t1 - t0)
            pid = int(open(os.path.join(path, "daemon.lock")).read().split()[0])
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while A.alive(pid):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"auto-started daemon {pid} did not exit within 5 s of SIGTERM")
                time.sleep(0.002)
        shutil.rmtree(path, ignore_errors=True)
        return {"file": file, "fs": fs_type(base), "first_frame": A.stats_ms(first, 99),
                "client_exit": A.stats_ms(done, 99)}

    # ---------------------------------------------------------------------------------
    # d. idle

    def idle(self):
        fresh = self.daemon(TMPFS, "idle1")
        used = self.daemon(TMPFS, "idle2")
        ev = used.connect()
        ev.call({"op": "events"})
        c = used.connect()
        c.call({"op": "play", "items": [A.item(self.clip("wav-0.1s.wav"))], "wait": False})
        deadline = time.monotonic() + 10
        opened = False
        while True:
            m = ev.next(timeout=deadline - time.monotonic())
            if m is None:
                raise RuntimeError("idle: the daemon did not close the device after playing")
            opened = opened or m.get("event") == "device-opened"
            if opened and m.get("event") == "device-closed":
                break
        c.close()
        ev.close()
        time.sleep(0.5)  # let it notice the closed connections
        out = {}
        snap = {}
        for name, d in (("fresh", fresh), ("after a play", used)):
            snap[name] = (A.proc_cpu_ns(d.pid), A.tasks_schedstat_ns(d.pid), A.tasks_ctxsw(d.pid))
        t0 = time.perf_counter()
        time.sleep(IDLE_SECONDS)
        secs = time.perf_counter() - t0
        for name, d in (("fresh", fresh), ("after a play", used)):
            cpu1, sched1, sw1 = A.proc_cpu_ns(d.pid), A.tasks_schedstat_ns(d.pid), A.tasks_ctxsw(d.pid)
            cpu0, sched0, sw0 = snap[name]
            per_thread = {tid: sw1[tid] - sw0.get(tid, 0) for tid in sw1}
            out[name] = {"seconds": secs, "cpu_clock_ms": (cpu1 - cpu0) / 1e6,
                         "schedstat_ms": (sched1 - sched0) / 1e6, "wakeups": A.ctxsw_delta(sw0, sw1),
                         "threads": len(sw1), "threads_before": len(sw0),
                         "wakeups_by_thread": per_thread}
        self.stop(fresh)
        self.stop(used)
        return out

    # ---------------------------------------------------------------------------------
    # e. memory over many plays

    def memory(self):
        d = self.daemon(TMPFS, "mem")
        c = d.connect()
        clips = [self.clip("wav-0.1s.wav"), self.clip("mp3-0.1s.mp3")]

        def play(n, offset):
            # Batches of at most 100 items, each played to the end before the next is sent: the
            # queue never holds more than 100, so what is measured is what plays leave behind,
            # not the memory of a long queue (which malloc keeps after the queue has drained).
            kinds = {}
            for start in range(0, n, 100):
                items = [A.item(clips[(offset + i) % 2]) for i in range(start, min(n, start + 100))]
                reply, early = c.call({"op": "play", "items": items, "wait": True})
                left = set(reply["ids"])
                deadline = time.monotonic() + 60
                pending = list(early)
                while left:
                    m = pending.pop(0) if pending else c.next(timeout=deadline - time.monotonic())
                    if m is None:
                        raise RuntimeError(f"memory: {len(left)} items did not finish")
                    if m.get("event") == "finished" and m.get("id") in left:
                        left.discard(m["id"])
                        k = m["outcome"]["kind"]
                        kinds[k] = kinds.get(k, 0) + 1
            return kinds

        base = A.status_kib(d.pid)
        t = time.perf_counter()
        k10 = play(10, 0)
        at10 = A.status_kib(d.pid)
        k1000 = play(N_PLAYS - 10, 10)
        at1000 = A.status_kib(d.pid)
        secs = time.perf_counter() - t
        more, done = [], N_PLAYS
        for target in MORE_PLAYS:
            if target <= done:
                continue
            part = play(target - done, done)
            more.append((target, A.status_kib(d.pid)))
            done = target
            for k, v in part.items():
                k1000[k] = k1000.get(k, 0) + v
        c.close()
        self.stop(d)
        for k, v in k10.items():
            k1000[k] = k1000.get(k, 0) + v
        return {"ready": base, "after_10": at10, "after_1000": at1000, "more": more,
                "outcomes": k1000, "seconds": secs}


# -------------------------------------------------------------------------------------
# report

def verdict(ok):
    return "PASS" if ok else "FAIL"


def render(res):
    V = []
    w = []
    a = res["enqueue"]
    for fs in ("tmpfs", "disk"):
        r = a[fs]
        for key, what in (("one_connection", "one connection"), ("connection_each", "a connection per request")):
            s = r[key]
            V.append((f"daemon: enqueue round trip p99 ≤ {ENQUEUE_P99_MS:g} ms ({what}, runtime dir on "
                      f"{r['fs']} {os.path.dirname(r['dir'])})", verdict(s["p99"] <= ENQUEUE_P99_MS),
                      f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} requests)"))
    c = a["tmpfs"].get("cli_no_wait_cpu")
    if c:
        V.append((f"client: warm `announce play -q --no-wait` CPU ≤ {CLIENT_CPU_MS:g} ms (median; runtime dir on "
                  f"{a['tmpfs']['fs']})", verdict(c["p50"] <= CLIENT_CPU_MS),
                  f"p50 {c['p50']:.2f} ms, p99 {c['p99']:.2f} ms, max {c['max']:.2f} ms ({c['n']} runs; user + system "
                  "of the client process)"))
    for fs in ("tmpfs", "disk"):
        s = a[fs]["cli_no_wait"]
        V.append((f"daemon: `announce play --no-wait` wall, process start to exit (runtime dir on {a[fs]['fs']})",
                  "INFO", f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms ({s['n']} runs); no target set"))
    for r in res["preemption"]:
        s = r["latency"]
        V.append((f"daemon: preemption to first frame p99 ≤ {PREEMPT_P99_MS:g} ms (normal {r['normal']} looping)",
                  verdict(s["p99"] <= PREEMPT_P99_MS),
                  f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} preemptions)"))
    for r in res["preemption"]:
        s = r["resume"]
        V.append((f"daemon: resumption after the preempting item, to its `started` event (normal {r['normal']})",
                  "INFO", f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms, max {s['max']:.1f} ms; no target set"))
    for r in res["cold"]:
        s = r["first_frame"]
        V.append((f"daemon: cold `announce play` with auto-start to first frame ({r['file']}, runtime dir on {r['fs']})",
                  "INFO", f"p50 {s['p50']:.1f} ms, max {s['max']:.1f} ms ({s['n']} runs); no target set"))
    for name, r in res["idle"].items():
        V.append((f"daemon: idle CPU < {IDLE_CPU_MS:g} ms over {r['seconds']:.0f} s ({name})",
                  verdict(r["cpu_clock_ms"] < IDLE_CPU_MS),
                  f"{r['cpu_clock_ms'] * 1e3:.0f} µs (schedstat sum {r['schedstat_ms'] * 1e3:.0f} µs)"))
        V.append((f"daemon: idle wake-ups = {IDLE_WAKEUPS} over {r['seconds']:.0f} s ({name})",
                  verdict(r["wakeups"] <= IDLE_WAKEUPS), f"{r['wakeups']} context switches, {r['threads']} threads"))
    m = res["memory"]
    hwm = m["after_1000"]["VmHWM"]
    V.append((f"daemon: VmHWM ≤ {RSS_MB:g} MB after {N_PLAYS} plays", verdict(hwm * 1024 / 1e6 <= RSS_MB),
              f"{hwm * 1024 / 1e6:.1f} MB ({hwm / 1024:.1f} MiB)"))
    growth = (m["after_1000"]["VmRSS"] - m["after_10"]["VmRSS"]) / 1024
    V.append((f"daemon: VmRSS does not grow with plays (10 → {N_PLAYS}: ≤ +{RSS_GROWTH_MIB:g} MiB)",
              verdict(growth <= RSS_GROWTH_MIB),
              f"{m['after_10']['VmRSS'] / 1024:.1f} → {m['after_1000']['VmRSS'] / 1024:.1f} MiB ({growth:+.2f} MiB, "
              f"{growth * 1024 / (N_PLAYS - 10):+.2f} KiB per play)"))
    if m["more"]:
        prev_n, prev = N_PLAYS, m["after_1000"]
        steps = []
        for n, st in m["more"]:
            g = (st["VmRSS"] - prev["VmRSS"]) / 1024
            steps.append(f"{prev_n} → {n}: {g:+.2f} MiB ({g * 1024 / (n - prev_n):+.2f} KiB per play)")
            prev_n, prev = n, st
        V.append((f"daemon: VmRSS beyond {N_PLAYS} plays", "INFO",
                  "; ".join(steps) + f"; VmRSS {m['more'][-1][1]['VmRSS'] / 1024:.1f} MiB, VmHWM "
                  f"{m['more'][-1][1]['VmHWM'] / 1024:.1f} MiB after {m['more'][-1][0]}; no target set"))

    def tv(ok, target):
        return f"{target}: **{verdict(ok)}**"

    w.append("## The daemon")
    w.append("")
    w.append("Made by `scripts/bench/daemon.py` in the same run (`BENCH_DAEMON=0` skips it). Every daemon here")
    w.append("is `announce daemon --device null` in a fresh private runtime directory (0700), on tmpfs")
    w.append("(`/dev/shm`, as `$XDG_RUNTIME_DIR` is) unless said otherwise. Targets: enqueue round trip")
    w.append("p99 ≤ 5 ms, a warm `announce play -q --no-wait` client ≤ 10 ms CPU (median), preemption p99 ≤ 20 ms,")
    w.append("idle CPU < 1 ms per 10 s with no wake-ups; the memory rows")
    w.append("apply the peak-RSS targets above (≤ 20 MB, no growth) to many plays. The end-to-end command and")
    w.append("cold-start figures have no target (INFO). The verdicts are also in [Targets](#targets).")
    w.append("")

    w.append("### a. Enqueue round trip")
    w.append("")
    w.append("`play` with `wait:false` of one existing file (`wav-0.1s.wav`) while the queue is paused, from")
    w.append("sending the request to reading `{\"ok\":true,\"ids\":[…]}` (`time.perf_counter()`): the daemon parses it,")
    w.append("writes `spool/ID.json` (temporary file, fsync, rename, fsync of the directory) and answers.")
    w.append(f"{N_ENQUEUE} requests per row after 50 uncounted; the queue grows to {N_ENQUEUE} items and is")
    w.append("cleared between rows. \"a connection per request\" adds `connect()` and `close()`, as a `--no-wait`")
    w.append("client does. The `announce play --no-wait` rows time the whole `announce play --no-wait -q FILE`")
    w.append("command from Python's spawn to its exit (process start, argument parsing, opening the file to")
    w.append("check it, connecting, the round trip, exit); its CPU row is the client process's user + system")
    w.append("time (`getrusage(RUSAGE_CHILDREN)` before and after each run; the daemon's share is not in it),")
    w.append(f"with the target from issue 11: median ≤ {CLIENT_CPU_MS:g} ms, warm (the daemon running, the file cached,")
    w.append("5 uncounted runs first).")
    w.append("")
    w.append("| runtime dir | filesystem | what | n | p50 ms | p99 ms | max ms | target: result |")
    w.append("|---|---|---|---:|---:|---:|---:|---|")
    for fs in ("tmpfs", "disk"):
        r = a[fs]
        for key, what in (("one_connection", "one connection"), ("connection_each", "a connection per request"),
                          ("cli_no_wait", "`announce play --no-wait` command"),
                          ("cli_no_wait_cpu", "`announce play --no-wait` command: client CPU")):
            s = r.get(key)
            if s is None:
                continue
            res_ = ("none: **INFO**" if key == "cli_no_wait"
                    else tv(s["p50"] <= CLIENT_CPU_MS, f"p50 ≤ {CLIENT_CPU_MS:g} ms") if key == "cli_no_wait_cpu" and fs == "tmpfs"
                    else "none: **INFO**" if key == "cli_no_wait_cpu"
                    else tv(s["p99"] <= ENQUEUE_P99_MS, f"p99 ≤ {ENQUEUE_P99_MS:g} ms"))
            w.append(f"| `{os.path.dirname(r['dir'])}` | {r['fs']} | {what} | {s['n']} | {s['p50']:.2f} | "
                     f"{s['p99']:.2f} | {s['max']:.2f} | {res_} |")
    w.append("")
    w.append("`clear` of the " + ", ".join(f"{a[fs]['cleared']} items queued on {a[fs]['fs']} took {a[fs]['clear_ms']:.0f} ms"
                                            for fs in ("tmpfs", "disk")) + " (an outcome file, fsynced, per item).")
    r = a["tmpfs"]["rss"]
    w.append(f"The daemon's VmRSS went from {r['before']['VmRSS'] / 1024:.1f} MiB to {r['queued']['VmRSS'] / 1024:.1f} MiB "
             f"with {N_ENQUEUE} items queued, and was {r['cleared']['VmRSS'] / 1024:.1f} MiB after the `clear` "
             "(freed memory that malloc keeps for reuse).")
    w.append("")

    w.append("### b. Preemption latency")
    w.append("")
    w.append("A normal item loops forever (`\"loops\":-1`) on `null`, which takes samples as fast as they")
    w.append("come, so the daemon's player is busy decoding the whole time (on this machine's "
             f"{os.cpu_count()} cores). Then, {N_PREEMPT} times ({N_PREEMPT_MP3} over the MP3), a random 2–12 ms")
    w.append("after the normal item has resumed, a `high` item (`wav-0.05s.wav`, 0.05 s) is sent with")
    w.append("`wait:false`; latency = its `started` event's `time` (the daemon's CLOCK_REALTIME when it reports")
    w.append("the first frames written; see the caveat below), collected on an `events` connection, −")
    w.append("`time.time()` just before the send.")
    w.append("It includes the round trip, spooling the high item, stopping the normal one and saving its")
    w.append("resume point, opening the clip and writing its first frames. **resumption** = the normal item's")
    w.append("next `started` `time` − the high item's `finished` `time` (no target: INFO).")
    w.append("")
    w.append("The daemon posts `started` from the decode loop's first look at the playback thread's progress")
    w.append("ticks; it looks after every decoded chunk (8192 frames), and the first tick comes with the first")
    w.append("write, so `started` trails the first frame written by at most one chunk's decoding.")
    w.append("")
    w.append("| normal item | n | p50 ms | p99 ms | max ms | target: result | enqueue round trip p99 ms | "
             "resumption p50 / p99 / max ms | high items' outcomes |")
    w.append("|---|---:|---:|---:|---:|---|---:|---:|---|")
    for r in res["preemption"]:
        s = r["latency"]
        w.append(f"| {r['normal']} | {s['n']} | {s['p50']:.2f} | {s['p99']:.2f} | {s['max']:.2f} | "
                 f"{tv(s['p99'] <= PREEMPT_P99_MS, f'p99 ≤ {PREEMPT_P99_MS:g} ms')} | "
                 f"{r['enqueue_rtt']['p99']:.2f} | {r['resume']['p50']:.1f} / {r['resume']['p99']:.1f} / "
                 f"{r['resume']['max']:.1f} | " + ", ".join(f"{k} {v}" for k, v in r["outcomes"].items()) + " |")
    w.append("")

    w.append("### c. Cold start")
    w.append("")
    w.append("No daemon and no runtime directory; `announce play -q -d null FILE` creates the directory, starts")
    w.append("the daemon (`announce daemon --idle-exit 30s --ready-fd 3`) and queues the file. From")
    w.append("`time.time()` just before the spawn to the timestamp of daemon.log's")
    w.append("\"ID PATH: started on null as FORMAT\" line (UTC, millisecond resolution, truncated), and to the")
    w.append(f"client's exit. The daemon is stopped with SIGTERM after each of the {N_COLD} runs. No target: INFO.")
    w.append("(The log line comes with the `started` event, so for these 0.1 s clips it is at most the")
    w.append("clip's decoding, well under a millisecond, after the first write; see the caveat in b.)")
    w.append("")
    w.append("| file | filesystem | first frame p50 ms | max ms | client exit p50 ms | max ms |")
    w.append("|---|---|---:|---:|---:|---:|")
    for r in res["cold"]:
        s, e = r["first_frame"], r["client_exit"]
        w.append(f"| {r['file']} | {r['fs']} | {s['p50']:.1f} | {s['max']:.1f} | {e['p50']:.1f} | {e['max']:.1f} |")
    w.append("")

    w.append("### d. Idle")
    w.append("")
    w.append(f"`announce daemon --device null` with no `--idle-exit` and no client, over {IDLE_SECONDS:g} s: one")
    w.append("fresh, one that had played a clip and closed the device again. CPU = the process's CPU clock")
    w.append("(every thread); the sum of `/proc/PID/task/*/schedstat` (on-CPU ns) is shown as well. Wake-ups")
    w.append("= voluntary + involuntary context switches summed over `/proc/PID/task/*/status`.")
    w.append("")
    w.append("| daemon | CPU µs | schedstat µs | target: result | wake-ups | target: result | threads |")
    w.append("|---|---:|---:|---|---:|---|---:|")
    for name, r in res["idle"].items():
        w.append(f"| {name} | {r['cpu_clock_ms'] * 1e3:.0f} | {r['schedstat_ms'] * 1e3:.0f} | "
                 f"{tv(r['cpu_clock_ms'] < IDLE_CPU_MS, f'< {IDLE_CPU_MS * 1e3:g} µs')} | {r['wakeups']} | "
                 f"{tv(r['wakeups'] <= IDLE_WAKEUPS, f'= {IDLE_WAKEUPS}')} | {r['threads']} |")
    w.append("")

    w.append("### e. Memory over many plays")
    w.append("")
    w.append(f"One daemon plays 10, then {N_PLAYS - 10} more 0.1 s clips (WAV and MP3 alternating) on `null`"
             + (f" (then on to {', '.join(str(n) for n, _ in m['more'])}, to see whether any growth goes on)"
                if m["more"] else "") + ",")
    w.append("enqueued with `wait:true` on one connection in batches of 100, each played to the end before the")
    w.append("next is sent (so the queue never holds more than 100 items); read from")
    w.append(f"`/proc/PID/status` once all had finished ({m['seconds']:.1f} s for the first {N_PLAYS}; outcomes: "
             + ", ".join(f"{k} {v}" for k, v in m["outcomes"].items()) + ").")
    w.append("")
    w.append("| when | VmRSS MiB | VmHWM MiB | RssAnon MiB | RssFile MiB |")
    w.append("|---|---:|---:|---:|---:|")
    rows = [("ready", "ready, nothing played"), ("after_10", "after 10 plays"), ("after_1000", f"after {N_PLAYS} plays")]
    snaps = {key: m[key] for key, _ in rows}
    for n, st in m["more"]:
        rows.append((f"more{n}", f"after {n} plays"))
        snaps[f"more{n}"] = st
    for key, label in rows:
        s = snaps[key]
        w.append(f"| {label} | {s['VmRSS'] / 1024:.1f} | {s['VmHWM'] / 1024:.1f} | {s['RssAnon'] / 1024:.1f} | "
                 f"{s['RssFile'] / 1024:.1f} |")
    w.append("")
    for name, v, shown in V[-(3 if m["more"] else 2):]:
        w.append(f"- {name.removeprefix('daemon: ')}: **{v}**, {shown}")
    w.append("")
    return V, "\n".join(w)


def main():
    if A.rerender(sys.argv, render):  # re-render a saved OUT.json's text
        return
    if len(sys.argv) != 4:
        sys.exit("usage: daemon.py ANNOUNCE_BIN CACHE_DIR OUT.json")
    binary, cache, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    b = Bench(binary, cache)
    res = {}
    t0 = time.perf_counter()
    try:
        log(f"enqueue round trip ({N_ENQUEUE} requests × 2, {N_CLI} --no-wait commands; tmpfs, then /tmp)...")
        res["enqueue"] = {"tmpfs": b.enqueue(TMPFS), "disk": b.enqueue(DISK)}
        log(f"preemption ({N_PREEMPT} high items over a looping WAV, then {N_PREEMPT_MP3} over an MP3)...")
        res["preemption"] = [b.preemption("wav-1min.wav", N_PREEMPT), b.preemption("mp3-1min.mp3", N_PREEMPT_MP3)]
        log(f"cold start ({N_COLD} runs each)...")
        res["cold"] = [b.cold(TMPFS, "wav-0.1s.wav"), b.cold(TMPFS, "mp3-0.1s.mp3"), b.cold(DISK, "wav-0.1s.wav")]
        log(f"idle ({IDLE_SECONDS:g} s)...")
        res["idle"] = b.idle()
        log(f"memory ({N_PLAYS} plays, then on to {MORE_PLAYS})...")
        res["memory"] = b.memory()
    finally:
        b.cleanup()
    A.write_section(out, res, render, log, t0)


if __name__ == "__main__":
    main()
