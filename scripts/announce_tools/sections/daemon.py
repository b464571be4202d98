"""daemon: the daemon's own targets: the enqueue round trip and the `--no-wait` client,
preemption, cold start, idle and memory."""
import os
import random
import re
import shutil
import signal
import subprocess
import time
from datetime import datetime, timezone

from ..client import item, is_event
from ..config import DISK, TMPFS, log
from ..daemons import Daemon, lock_pid
from ..proc import children_cpu, fs_type, proc_cpu_ns, stats_ms, status_kib, switches, switches_since, wait_exit


def daemon(b):
    out = b.res.setdefault("daemon", {})
    out["enqueue"] = [enqueue(b, TMPFS), enqueue(b, DISK)]
    log("enqueue: " + "; ".join(f"{r['fs']} p99 {r['one']['p99']:.2f}/{r['each']['p99']:.2f} ms, "
                                f"client CPU p50 {r['cli_cpu']['p50']:.2f} ms" for r in out["enqueue"]))
    out["preempt"] = [preempt(b, "wav-1min.wav", b.n["PREEMPT"]), preempt(b, "mp3-1min.mp3", b.n["PREEMPT_MP3"])]
    log("preemption p99: " + ", ".join(f"{r['normal']} {r['latency']['p99']:.2f} ms" for r in out["preempt"]))
    out["cold"] = [cold(b, TMPFS, "wav-0.1s.wav"), cold(b, TMPFS, "mp3-0.1s.mp3"), cold(b, DISK, "wav-0.1s.wav")]
    out["idle"] = idle(b)
    log("idle: " + ", ".join(f"{k} {v['cpu_us']:.0f} µs, {v['wakeups']} wake-ups" for k, v in out["idle"].items()))
    out["memory"] = memory(b)


def enqueue(b, base):
    """`play` wait:false of an existing file while paused: request to reply, on one connection
    and with a connection each; then the whole `announce play --no-wait -q` command."""
    d = Daemon(b, "enq", base=base, events=False)
    req = {"op": "play", "items": [item(b.path("wav-0.1s.wav"))], "wait": False}
    c = d.connect()
    c.call({"op": "pause"})
    for _ in range(50):
        c.call(req)
    c.call({"op": "clear"})
    one, each, cli, cli_cpu = [], [], [], []
    for _ in range(b.n["ENQUEUE"]):
        t = time.perf_counter()
        c.call(req)
        one.append(time.perf_counter() - t)
    c.call({"op": "clear"})
    for _ in range(b.n["ENQUEUE"]):
        t = time.perf_counter()
        k = d.connect()
        k.call(req)
        each.append(time.perf_counter() - t)
        k.close()
    c.call({"op": "clear"})
    argv = [b.bin, "play", "--no-wait", "-q", b.path("wav-0.1s.wav")]
    for i in range(b.n["CLI"] + 5):  # 5 uncounted: warm
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


def preempt(b, normal_file, count):
    """A normal item loops on `null` (busy decoding); a 0.05 s high item is sent a random
    2–12 ms after it resumed: send to the high item's `started` time (first frames written)."""
    d = Daemon(b, "pre")
    c = d.connect()
    normal = c.call({"op": "play", "items": [item(b.path(normal_file), loops=-1)], "wait": False})["ids"][0]
    d.until(is_event("started", normal), "start of the normal item")
    rng = random.Random(1)
    lat, resume, outcomes = [], [], {}
    for _ in range(count):
        time.sleep(rng.uniform(0.002, 0.012))
        t = time.time()
        c.send({"op": "play", "items": [item(b.path("wav-0.05s.wav"), priority="high")], "wait": False})
        hid = c.next(timeout=5)["ids"][0]
        lat.append(d.until(is_event("started", hid), "start of the high item")["time"] - t)
        f = d.until(is_event("finished", hid), "end of the high item")
        outcomes[f["outcome"]["kind"]] = outcomes.get(f["outcome"]["kind"], 0) + 1
        resume.append(d.until(is_event("started", normal), "resumption")["time"] - f["time"])
    c.call({"op": "clear"})
    c.close()
    d.stop()
    return {"normal": normal_file, "latency": stats_ms(lat), "resume": stats_ms(resume), "outcomes": outcomes}


def cold(b, base, file):
    """No daemon: `announce play` starts one. Spawn to daemon.log's "started on" line."""
    rundir = os.path.join(base, f"ab{os.getpid()}-cold")
    env = dict(os.environ, ANNOUNCE_RUNTIME_DIR=rundir)
    first, done = [], []
    for _ in range(b.n["COLD"]):
        shutil.rmtree(rundir, ignore_errors=True)
        t0 = time.time()
        subprocess.run([b.bin, "play", "-q", "-d", "null", b.path(file)], env=env, stdin=subprocess.DEVNULL,
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
        pid = lock_pid(rundir)
        os.kill(pid, signal.SIGTERM)
        if not wait_exit(pid, 5, every=0.002):
            raise RuntimeError(f"auto-started daemon {pid} did not exit on SIGTERM")
    shutil.rmtree(rundir, ignore_errors=True)
    return {"file": file, "fs": fs_type(base), "first": stats_ms(first), "exit": stats_ms(done)}


def idle(b):
    """Two daemons, one fresh, one that played a clip and closed the device: CPU clock and
    context switches (wake-ups) over IDLE seconds."""
    fresh, used = Daemon(b, "idle1", events=False), Daemon(b, "idle2")
    used.cli("play", "-q", b.path("wav-0.1s.wav"))
    used.wait_closed()
    used.ev.close()
    time.sleep(0.5)  # it notices the closed connection
    before = {d: (proc_cpu_ns(d.pid), switches(d.pid)) for d in (fresh, used)}
    t0 = time.perf_counter()
    time.sleep(b.n["IDLE"])
    secs = time.perf_counter() - t0
    out = {}
    for name, d in (("fresh", fresh), ("after a play", used)):
        cpu, sw = before[d]
        out[name] = {"seconds": secs, "cpu_us": (proc_cpu_ns(d.pid) - cpu) / 1e3,
                     "wakeups": switches_since(sw, switches(d.pid)), "threads": len(switches(d.pid))}
        d.stop()
    return out


def memory(b):
    """0.1 s clips (WAV and MP3 alternating) played in batches of at most 100, each batch to
    the end; the daemon's VmRSS / VmHWM after 10, PLAYS and PLAYS_MORE plays."""
    d = Daemon(b, "mem", events=False)
    c = d.connect()
    clips = [b.path("wav-0.1s.wav"), b.path("mp3-0.1s.mp3")]
    kinds, done, snaps = {}, 0, {"ready": status_kib(d.pid)}
    for target in (10, b.n["PLAYS"], b.n["PLAYS_MORE"]):
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
    log(f"memory: VmRSS {snaps['10']['VmRSS'] / 1024:.1f} → {snaps[str(b.n['PLAYS'])]['VmRSS'] / 1024:.1f} MiB "
        f"(10 → {b.n['PLAYS']} plays)")
    return {"snapshots": snaps, "plays": b.n["PLAYS"], "more": b.n["PLAYS_MORE"], "outcomes": kinds}
