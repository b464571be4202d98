#!/usr/bin/env python3
"""Alert latency for `make bench` (Python standard library only).

    alert.py ANNOUNCE_BIN CACHE_DIR OUT.json [--paced DIR]
    alert.py --render OUT.json      (re-renders OUT.json's markdown from its results)

How long `announce alert FILE` takes from the command's start to the first frame written,
with the daemon already running (the issue's target: p50 ≤ 15 ms when warm, i.e. the
alert's PCM is already in the daemon's cache). The alert is `alert-0.3s-48k.wav` (0.3 s,
48 kHz, 16-bit stereo, a tone with 10 ms fades), made once in CACHE_DIR.

Each case runs against a daemon of its own (`announce daemon --device DEV` in a fresh 0700
runtime directory on /dev/shm) with an `events` connection open. One uncounted alert of
another file goes first (first-use set-up: ALSA's configuration, the first device open).
Then the alert file is played once, uncounted (now it is cached), and rounds follow, each:

  - cold: `announce alert -q -d DEV` of a file the daemon has never seen (a fresh copy of the
    alert under a new name, so its PCM is not cached: the daemon decodes it first);
  - warm: the same command on the cached file, several times;
  - request: the daemon alone: an `alert` request (wait:false) on a connection held open,
    as many times as warm.

latency = the alert's `started` event's `time` (the daemon's CLOCK_REALTIME when it reports
the first frames written; the same clock as Python's time.time()) − time.time() just before
the client is spawned (cold, warm) or the request is sent (request). client exit = spawn to
the client's exit (it exits once the daemon has accepted the alert). client CPU = its user +
system time (RUSAGE_CHILDREN). After each alert the bench waits for its `finished` event and,
in the "device closed" cases, for `device-closed` (the daemon closes an idle device after
100 ms), so every alert opens the device, as an alert on an idle machine does.

Cases: ALSA `null` (samples are taken at once, nothing paced); with --paced DIR (a PulseAudio
started by Tests/Shell/paced-audio.sh) the ALSA PCM `pulse` with the device closed between alerts,
and `pulse` while an ambient 48 kHz stream loops on it (the alert joins the open device and
is mixed).

Writes OUT.json: {"results": ..., "verdicts": [[target, PASS|FAIL|INFO, figures], ...],
"markdown": "## Alert latency ..."} for measure.py report (--section).
"""
import os
import random
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import announced as A  # noqa: E402

WARM_P50_MS = 15.0
N_ROUNDS = int(os.environ.get("BENCH_ALERT_COLD", "10"))          # cold alerts (one per round)
WARM_PER_ROUND = int(os.environ.get("BENCH_ALERT_WARM_PER_ROUND", "5"))  # warm commands and requests per round
N_ROUNDS_PACED = int(os.environ.get("BENCH_ALERT_COLD_PACED", "4"))
TMPFS = "/dev/shm"
ALERT = "alert-0.3s-48k.wav"


log = A.logger("alert")


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Case:
    """One daemon on one device, and the alerts played through it."""

    def __init__(self, bench, device, env, name):
        self.bench = bench
        self.device = device
        self.rundir = A.fresh_dir(os.path.join(TMPFS, f"{bench.tag}-{name}"))
        bench.dirs.append(self.rundir)
        self.d = A.Daemon(A.daemon_argv(bench.bin, device), self.rundir, env=env)
        self.ev = self.d.connect()
        self.ev.call({"op": "events"})
        self.c = self.d.connect()
        self.device_open = False
        self.format = None
        self.rng = random.Random(1)

    def stop(self):
        self.ev.close()
        self.c.close()
        self.d.stop_checked()

    def absorb(self, m):
        kind = m.get("event")
        if kind == "device-opened":
            self.device_open, self.format = True, m.get("format")
        elif kind == "device-closed":
            self.device_open = False

    def until(self, pred, what, timeout=10.0):
        return self.ev.until(pred, timeout, self.absorb,
                             lambda: f"alert: no {what} within {timeout:g} s ({self.d.log_tail()})")

    def settle(self, closed):
        """Drops the events that came meanwhile; with closed, waits until the device is closed.
        Then a random 0-60 ms: over a playing stream the next alert would otherwise come at the
        same phase of the device's period (20 ms on null, 60 ms on pulse) every time (right after
        the last one ended)."""
        for m in self.ev.pending():
            self.absorb(m)
        if closed and self.device_open:
            self.until(lambda m: m.get("event") == "device-closed", "device-closed")
        time.sleep(self.rng.uniform(0, 0.060))

    def command(self, path, closed=True):
        """`announce alert -q -d DEV path`: (first frame s, client exit s, client CPU s)."""
        self.settle(closed)
        argv = [self.bench.bin, "alert", "-q", "-d", self.device, path]
        cpu0 = children_cpu()
        t0 = time.time()
        p0 = time.perf_counter()
        r = subprocess.run(argv, env=self.d.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        exit_s = time.perf_counter() - p0
        cpu = children_cpu() - cpu0
        if r.returncode != 0:
            raise RuntimeError(f"announce alert exited {r.returncode}: {r.stderr.decode()[-300:]}")
        s = self.until(lambda m: m.get("event") == "started" and m.get("path") == path, f"started event for {path}")
        self.finish(s["id"])
        return s["time"] - t0, exit_s, cpu

    def request(self, path, closed=True):
        """The daemon alone: an `alert` request on the held connection; first frame s."""
        self.settle(closed)
        t0 = time.time()
        self.c.send({"op": "alert", "alert": {"path": path, "gain": 1, "device": self.device}, "wait": False})
        reply = self.c.next(timeout=10)
        if reply is None or not reply.get("ok"):
            raise RuntimeError(f"alert request refused: {reply}")
        aid = reply["ids"][0]
        s = self.until(lambda m: m.get("event") == "started" and m.get("id") == aid, "started event of the alert request")
        self.finish(aid)
        return s["time"] - t0

    def finish(self, aid):
        f = self.until(lambda m: m.get("event") == "finished" and m.get("id") == aid, "finished event of the alert")
        kind = f["outcome"]["kind"]
        if kind != "played":
            raise RuntimeError(f"the alert ended {kind}: {f['outcome']}")


class Bench:
    def __init__(self, binary, cache):
        self.bin = binary
        self.cache = cache
        self.tag = f"aa{os.getpid()}"
        self.dirs = []
        self.cases = []
        self.alert = A.write_tone(os.path.join(cache, ALERT), 48000, 0.3, 880, amplitude=0.3)
        self.other = A.write_tone(os.path.join(cache, "alert-0.1s-48k-660.wav"), 48000, 0.1, 660, amplitude=0.3)
        self.loop = A.write_tone(os.path.join(cache, "tone-48k-220.wav"), 48000, 5, 220, fade=0)
        self.cold_dir = os.path.join(TMPFS, f"{self.tag}-cold-files")
        self.dirs.append(self.cold_dir)
        os.makedirs(self.cold_dir, exist_ok=True)
        self.cold_n = 0

    def case(self, device, env, name):
        c = Case(self, device, env, name)
        self.cases.append(c)
        return c

    def done(self, c):
        self.cases.remove(c)
        c.stop()

    def cleanup(self):
        A.cleanup(self.cases, self.dirs, log)

    def fresh_copy(self):
        """A new file with the alert's bytes: the daemon has not cached this path."""
        self.cold_n += 1
        path = os.path.join(self.cold_dir, f"cold-{self.cold_n}.wav")
        shutil.copyfile(self.alert, path)
        return path

    def run(self, device, env, name, rounds, requests=True, over_stream=False):
        c = self.case(device, env, name)
        closed = not over_stream
        c.command(self.other)  # first use: ALSA's configuration, the first device open
        loop_id = None
        if over_stream:
            reply, _ = c.c.call({"op": "play", "wait": False, "items": [
                dict(A.item(self.loop, loops=-1, device=device), session={"category": "ambient"})]})
            loop_id = reply["ids"][0]
            c.until(lambda m: m.get("event") == "started" and m.get("id") == loop_id, "start of the looping stream")
        c.command(self.alert, closed)  # now the alert is cached
        cold, warm, exits, cpus, cold_exits, req = [], [], [], [], [], []
        for _ in range(rounds):
            first, exit_s, _ = c.command(self.fresh_copy(), closed)
            cold.append(first)
            cold_exits.append(exit_s)
            for _ in range(WARM_PER_ROUND):
                first, exit_s, cpu = c.command(self.alert, closed)
                warm.append(first)
                exits.append(exit_s)
                cpus.append(cpu)
            if requests:
                for _ in range(WARM_PER_ROUND):
                    req.append(c.request(self.alert, closed))
        fmt = c.format
        floor = []
        if not over_stream:
            # The floor under any command: `announce --version` (process start, the Swift runtime,
            # argument parsing, exit), spawn to exit.
            for _ in range(rounds * WARM_PER_ROUND):
                p0 = time.perf_counter()
                subprocess.run([self.bin, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=True)
                floor.append(time.perf_counter() - p0)
        if loop_id:
            c.c.call({"op": "stop"})
        self.done(c)
        out = {"device": device, "device_closed": closed, "format": fmt,
               "cold": A.stats_ms(cold, 90), "cold_client_exit": A.stats_ms(cold_exits, 90),
               "warm": A.stats_ms(warm, 90), "warm_client_exit": A.stats_ms(exits, 90),
               "warm_client_cpu": A.stats_ms(cpus, 90)}
        if req:
            out["request"] = A.stats_ms(req, 90)
        if floor:
            out["version_exit"] = A.stats_ms(floor, 90)
        return out


# -------------------------------------------------------------------------------------
# report

def render(res):
    V, w = [], []
    rows = res["cases"]
    for r in rows:
        s = r["warm"]
        where = f"`{r['device']}`" + ("" if r["device_closed"] else ", over a playing stream")
        if r["device"] == "null" and r["device_closed"]:
            V.append((f"alert: warm `announce alert` to first frame p50 ≤ {WARM_P50_MS:g} ms ({where})",
                      "PASS" if s["p50"] <= WARM_P50_MS else "FAIL",
                      f"p50 {s['p50']:.1f} ms, p90 {s['p90']:.1f} ms, max {s['max']:.1f} ms ({s['n']} alerts); "
                      f"the daemon alone (request to first frame) p50 {r['request']['p50']:.2f} ms"
                      if "request" in r else ""))
        else:
            V.append((f"alert: warm `announce alert` to first frame ({where})", "INFO",
                      f"p50 {s['p50']:.1f} ms, p90 {s['p90']:.1f} ms, max {s['max']:.1f} ms ({s['n']} alerts); "
                      "no target set"))
        s = r["cold"]
        V.append((f"alert: cold `announce alert` (a file not yet cached) to first frame ({where})", "INFO",
                  f"p50 {s['p50']:.1f} ms, p90 {s['p90']:.1f} ms, max {s['max']:.1f} ms ({s['n']} alerts); no target set"))

    w.append("## Alert latency")
    w.append("")
    w.append("Made by `scripts/bench/alert.py` in the same run (`BENCH_ALERT=0` skips it). From just before")
    w.append("`announce alert -q -d DEV FILE` is spawned to the first frame written: the alert's `started` event")
    w.append("`time` (the daemon's CLOCK_REALTIME when it reports the first frames written, read on an")
    w.append("`events` connection) − Python's `time.time()` before the spawn. The daemon runs already")
    w.append("(`announce daemon --device DEV`, private runtime directory on tmpfs). FILE is a 0.3 s 48 kHz")
    w.append("16-bit stereo WAV. **warm**: the file was played once before, so its PCM is in the daemon's")
    w.append("alert cache; **cold**: the first alert of a file the daemon has not seen (a fresh copy under a")
    w.append("new name), decoded before it plays; **daemon alone**: an `alert` request on a connection held")
    k = res.get("warm_per_round", WARM_PER_ROUND)
    w.append(f"open, from the send to the first frame (no process start). Per round: 1 cold, {k} warm, {k}")
    w.append("daemon-alone alerts, interleaved so drift hits them alike.")
    w.append("Each alert is waited for to its end and, except \"over a playing stream\", until the daemon has")
    w.append("closed the device again (100 ms after it went idle), so each one opens the device. On `pulse`")
    w.append("(the paced PulseAudio of `Tests/Shell/paced-audio.sh`) the first frame is written to the ALSA pulse")
    w.append("plugin, not yet heard; \"over a playing stream\": an ambient 48 kHz tone loops on the device, and")
    w.append("the alert joins it through the mixer. **client exit**: spawn to the client's exit (it exits once")
    w.append("the daemon accepted the alert); **client CPU**: its user + system time; **`--version` exit**:")
    w.append("spawn to exit of `announce --version`, the floor under any command (process start, Swift runtime,")
    w.append("argument parsing). A random 0–60 ms pause precedes each alert, so that over a playing stream")
    w.append("alerts do not all land at the same phase of the device's period (20 ms on `null`, 60 ms on")
    w.append("`pulse`: a sound server's plugin gets 3 periods of 60 ms). Target (issue 4): warm")
    w.append(f"p50 ≤ {WARM_P50_MS:g} ms.")
    w.append("")
    w.append("| device | alerts | warm p50 / p90 / max ms | target: result | cold p50 / p90 / max ms | "
             "daemon alone p50 / p90 / max ms | warm client exit p50 ms | warm client CPU p50 ms | "
             "`--version` exit p50 ms | device format |")
    w.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---|")

    def three(s, digits=1):
        return f"{s['p50']:.{digits}f} / {s['p90']:.{digits}f} / {s['max']:.{digits}f}"

    for r in rows:
        where = f"`{r['device']}`" + ("" if r["device_closed"] else ", over a playing stream")
        tgt = "none: **INFO**"
        if r["device"] == "null" and r["device_closed"]:
            tgt = f"p50 ≤ {WARM_P50_MS:g} ms: **{'PASS' if r['warm']['p50'] <= WARM_P50_MS else 'FAIL'}**"
        floor = f"{r['version_exit']['p50']:.1f}" if "version_exit" in r else "—"
        w.append(f"| {where} | {r['warm']['n']} warm, {r['cold']['n']} cold | {three(r['warm'])} | {tgt} | "
                 f"{three(r['cold'])} | {three(r['request'], 2) if 'request' in r else '—'} | "
                 f"{r['warm_client_exit']['p50']:.1f} | {r['warm_client_cpu']['p50']:.1f} | {floor} | "
                 f"{r['format'] or '?'} |")
    w.append("")
    return V, A.section_markdown(w, res)


def main():
    if A.rerender(sys.argv, render):
        return
    args = sys.argv[1:]
    paced = None
    if len(args) == 5 and args[3] == "--paced":
        paced = args[4]
        args = args[:3]
    if len(args) != 3:
        sys.exit("usage: alert.py ANNOUNCE_BIN CACHE_DIR OUT.json [--paced DIR]")
    binary, cache, out = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2]
    b = Bench(binary, cache)
    res = {"cases": [], "warm_per_round": WARM_PER_ROUND}
    t0 = time.perf_counter()
    try:
        n = N_ROUNDS * (1 + 2 * WARM_PER_ROUND)
        log(f"null: {N_ROUNDS} rounds of 1 cold + {WARM_PER_ROUND} warm + {WARM_PER_ROUND} daemon-alone ({n} alerts)...")
        res["cases"].append(b.run("null", None, "null", N_ROUNDS))
        if paced:
            env = A.paced_env(paced)
            A.paced_check(paced)
            log(f"pulse (paced), device closed between alerts: {N_ROUNDS_PACED} rounds...")
            res["cases"].append(b.run("pulse", env, "pulse", N_ROUNDS_PACED))
            A.paced_check(paced)
            log(f"pulse (paced), over a looping ambient stream: {N_ROUNDS_PACED} rounds...")
            res["cases"].append(b.run("pulse", env, "pulse-mix", N_ROUNDS_PACED, over_stream=True))
            A.paced_check(paced)
        else:
            res["skipped"] = "the paced device (`pulse`): no paced PulseAudio (BENCH_PACED=0, or it did not start)"
    finally:
        b.cleanup()
    A.write_section(out, res, render, log, t0)


if __name__ == "__main__":
    main()
