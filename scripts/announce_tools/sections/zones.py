"""zones: N daemons (3, then 30) with [mqtt] on one mosquitto on loopback, each on `null`;
`announce play --zone all` from a host without a daemon, spawn to the first frame (`started`
event time) on every host; the spread of the hosts' first frames; the play as the broker
carried it (mosquitto_sub), for its send time and common start time; then the idle daemons'
CPU with the bridge connected."""
import json
import os
import pwd
import random
import shutil
import socket
import subprocess
import threading
import time

from ..client import is_event
from ..config import TMPFS, log
from ..context import write_tone
from ..daemons import Daemon
from ..proc import alive, fresh_dir, proc_cpu_ns, stats_ms, switches, switches_since, thread_name


def zones(b):
    mosquitto = next((p for p in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto") if os.access(p, os.X_OK)), None)
    if not mosquitto or not shutil.which("mosquitto_sub"):
        log("zones: mosquitto or mosquitto_sub is not installed (make deps-bench installs them): no figures")
        return
    tone = write_tone(b.path("tone-48k-0.2s-523.wav"), 48000, 0.2, 523, amplitude=0.3)
    out = b.res.setdefault("zones", [])
    for hosts, rounds in ((3, b.n["ZONE_ROUNDS"]), (30, b.n["ZONE_ROUNDS_MANY"])):
        out.append(zones_with(b, mosquitto, tone, hosts, rounds))
        r = out[-1]
        log(f"zones, {hosts} hosts: first frame on every host p50 {r['all']['p50']:.0f} ms, p99 {r['all']['p99']:.0f} ms; "
            f"spread p50 {r['spread']['p50']:.1f} ms; idle CPU at most {max(r['idle']['cpu_us']):.0f} µs per daemon")


def zones_with(b, mosquitto, tone, count, rounds):
    work = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-zones-{count}"))
    procs, daemons = [], []

    def config(name, host):
        home = os.path.join(work, name)
        os.makedirs(os.path.join(home, "announce"))
        with open(os.path.join(home, "announce", "config"), "w") as f:
            f.write(f"loudness = off\n[mqtt]\nbroker = mqtt://127.0.0.1:{port}\nhost = {host}\nzones = bench\n")
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
    b.cleanups.append(cleanup)
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
            daemons.append(Daemon(b, f"zone-{count}-{i:02}", env=env))
            b.cleanups.remove(daemons[-1].stop)  # cleanup() stops it
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
            p = subprocess.run([b.bin, "play", "--json", "--zone", "all", tone], env=sender, stdin=subprocess.DEVNULL,
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
        secs = b.n["ZONE_IDLE"]
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
        b.cleanups.remove(cleanup)


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
