#!/usr/bin/env python3
"""Steady CPU while mixing, for `make bench` (Python standard library only).

    mixing.py ANNOUNCE_BIN CACHE_DIR OUT.json --paced DIR
    mixing.py --render OUT.json      (re-renders OUT.json's markdown from its results)

The daemon's CPU while it mixes 1, 4 and 16 streams on a real-time paced device: the ALSA PCM
`pulse` of the private PulseAudio that Tests/Shell/paced-audio.sh started in DIR (a 48 kHz stereo
null sink; DIR/env is read, and with the bench's pinned ALSA configuration a copy of it that
defines `pulse` is used). The issue's target: < 0.5% of one core per stream.

One daemon (`announce daemon --device pulse`, fresh 0700 runtime directory on /dev/shm) plays
every case. Per case, N looping ambient streams are started with the command users type,

    announce play --no-wait --category ambient --loops -1 -d pulse tone-48k-F.wav

(N different 5 s 48 kHz 16-bit stereo tones, integer frequencies, no fades, so each loop is
seamless), the bench waits for every `started` event, lets them settle (BENCH_MIX_SETTLE s,
default 2: the decode threads fill their 2 s rings), then reads the daemon's CPU clock (every
thread) and per-thread /proc/PID/task/TID/schedstat, waits BENCH_MIX_SECONDS (default 10) of
wall time and reads them again; then `announce stop`, and the bench waits for the device to be
closed before the next case. Reported: CPU as % of one core (CPU seconds / wall seconds ×
100), in all and per stream, split by thread: the control thread (the daemon's main thread:
requests, events, progress bookkeeping), the playback thread (the mixer and device writes;
the thread found sleeping in poll(), not on a futex), libpulse's `threaded-ml` thread (the
ALSA pulse plugin's client of the sound server) and the rest (one decode thread per stream,
the housekeeper); context switches per second; the PulseAudio server's CPU over the same
window (not counted in the daemon's); underruns reported in the streams' `finished` events.

44.1 kHz (BENCH_MIX_44K=1, the default): N 44.1 kHz tones resampled to 48 kHz. The device
opens at its first stream's rate, so a 48 kHz tone is started first (the anchor), the N
44.1 kHz streams join the device it opened at 48 kHz, and the anchor is cancelled before the
window: N streams are measured, every one resampled on the decode side.

References (when aplay is installed): `aplay -q -D pulse` of one 48 kHz tone, its own CPU clock
over a window as long, with aplay's default period and buffer, with the periods announce asks a
sound server's plugin for (60 ms × 3) and with those it asks a kernel-side PCM for (20 ms × 4):
what one stream through the ALSA pulse plugin costs any client.

Writes OUT.json: {"results": ..., "verdicts": [...], "markdown": "## Mixing CPU ..."} for
measure.py report (--section).
"""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import announced as A  # noqa: E402

PER_STREAM_PCT = 0.5
COUNTS = [int(x) for x in os.environ.get("BENCH_MIX_COUNTS", "1,4,16").split(",") if x]
SECONDS = float(os.environ.get("BENCH_MIX_SECONDS", "10"))
SETTLE = float(os.environ.get("BENCH_MIX_SETTLE", "2"))
WITH_44K = os.environ.get("BENCH_MIX_44K", "1") != "0"
TMPFS = "/dev/shm"
DEVICE = "pulse"
POLL_WCHAN = ("poll", "select")  # poll_schedule_timeout, do_sys_poll, do_select ...


log = A.logger("mixing")


def tone(cache, rate, k):
    """The k-th tone (k = 1, 2, ...) at rate: 5 s, its own integer frequency (200 + 37k Hz)."""
    freq = 200 + 37 * k
    return A.write_tone(os.path.join(cache, f"tone-{rate // 1000 if rate % 1000 == 0 else rate / 1000:g}k-{freq}.wav"),
                        rate, 5, freq, amplitude=0.05, fade=0)


def wchan(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/wchan") as f:
            return f.read().strip()
    except OSError:
        return ""


class Bench:
    def __init__(self, binary, cache, paced):
        self.bin = binary
        self.cache = cache
        self.paced = paced
        self.env = A.paced_env(paced)
        self.pulse_pid = A.paced_pid(paced)
        self.rundir = A.fresh_dir(os.path.join(TMPFS, f"am{os.getpid()}-mix"))
        self.d = None

    def start(self):
        self.d = A.Daemon(A.daemon_argv(self.bin, DEVICE), self.rundir, env=self.env)
        self.ev = self.d.connect()
        self.ev.call({"op": "events"})
        self.open = False
        self.format = None
        self.finished = {}

    def cleanup(self):
        if self.d:
            try:
                self.ev.close()
                self.d.stop()
            except Exception as e:  # noqa: BLE001
                log(f"cleanup: {e}")
        shutil.rmtree(self.rundir, ignore_errors=True)

    def absorb(self, m):
        kind = m.get("event")
        if kind == "device-opened":
            self.open, self.format = True, m.get("format")
        elif kind == "device-closed":
            self.open = False
        elif kind == "finished":
            self.finished[m["id"]] = m

    def until(self, pred, what, timeout=15.0):
        return self.ev.until(pred, timeout, self.absorb,
                             lambda: f"mixing: no {what} within {timeout:g} s ({self.d.log_tail()})")

    def cli(self, *args):
        r = subprocess.run([self.bin, *args], env=self.d.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"announce {' '.join(args)} exited {r.returncode}: {r.stderr[-300:]}")
        return r.stdout.strip()

    def play(self, path):
        out = self.cli("play", "--no-wait", "--category", "ambient", "--loops", "-1", "-d", DEVICE, path)
        ids = out.split()
        if len(ids) != 1:
            raise RuntimeError(f"announce play --no-wait printed {out!r}, not one id")
        return ids[0]

    def wait_started(self, ids):
        left = set(ids)
        while left:
            m = self.until(lambda m: m.get("event") in ("started", "finished") and m.get("id") in left,
                           f"start of {len(left)} stream(s)")
            if m["event"] == "finished":
                raise RuntimeError(f"stream {m['id']} ended before the window: {m.get('outcome')}")
            left.discard(m["id"])

    # aplay's own period and buffer (ALSA's defaults for it: 4 periods in at most 500 ms), then
    # announce's: ALSAOutput asks a sound server's plugin for 3 periods of 60 ms, a kernel-side
    # PCM for 4 of 20 ms.
    REFERENCES = [("aplay -q -D pulse FILE", []),
                  ("aplay -q -D pulse --period-time=60000 --buffer-time=180000 FILE",
                   ["--period-time=60000", "--buffer-time=180000"]),
                  ("aplay -q -D pulse --period-time=20000 --buffer-time=80000 FILE",
                   ["--period-time=20000", "--buffer-time=80000"])]

    def reference(self, extra):
        """aplay -q -D pulse (with extra options) of one 48 kHz tone over the same window: what
        one stream through the ALSA pulse plugin costs any client."""
        path = A.write_tone(os.path.join(self.cache, f"tone-48k-ref-{SETTLE + SECONDS + 10:g}s.wav"), 48000,
                            SETTLE + SECONDS + 10, 440, amplitude=0.05, fade=0)
        p = subprocess.Popen(["aplay", "-q", "-D", DEVICE, *extra, path], env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            time.sleep(SETTLE + 0.5)
            if p.poll() is not None:
                raise RuntimeError(f"aplay -D {DEVICE} exited {p.returncode}: {p.stderr.read().decode()[-300:]}")
            c0, sw0 = A.proc_cpu_ns(p.pid), A.tasks_ctxsw(p.pid)
            p0 = A.proc_cpu_ns(self.pulse_pid) if self.pulse_pid and A.alive(self.pulse_pid) else None
            t0 = time.perf_counter()
            time.sleep(SECONDS)
            t1 = time.perf_counter()
            c1, sw1 = A.proc_cpu_ns(p.pid), A.tasks_ctxsw(p.pid)
            p1 = A.proc_cpu_ns(self.pulse_pid) if p0 is not None and A.alive(self.pulse_pid) else None
            if p.poll() is not None:
                raise RuntimeError(f"aplay -D {DEVICE} ended during the window")
        finally:
            if p.poll() is None:
                p.terminate()
            p.wait()
        wall = t1 - t0
        return {"command": " ".join(["aplay", "-q", "-D", DEVICE, *extra, "FILE"]), "seconds": wall,
                "cpu_pct": (c1 - c0) / 1e9 / wall * 100, "ctxsw_per_s": A.ctxsw_delta(sw0, sw1) / wall,
                "pulseaudio_pct": (p1 - p0) / 1e9 / wall * 100 if p1 is not None else None}

    def threads(self):
        """{tid: (comm, ns, sleeps in poll)} now."""
        pid = self.d.pid
        return {tid: (comm, ns, any(w in wchan(pid, tid) for w in POLL_WCHAN))
                for tid, (comm, ns) in A.threads_cpu_ns(pid).items()}

    def case(self, rate, n):
        for m in self.ev.pending():
            self.absorb(m)
        if self.open:
            self.until(lambda m: m.get("event") == "device-closed", "device-closed before the case")
        anchor = None
        if rate != 48000:
            anchor = self.play(tone(self.cache, 48000, 20))
            self.wait_started([anchor])
        ids = [self.play(tone(self.cache, rate, k)) for k in range(1, n + 1)]
        self.wait_started(ids)
        if anchor:
            self.cli("cancel", anchor)
            self.until(lambda m: m.get("event") == "finished" and m.get("id") == anchor, "end of the anchor stream")
        fmt = self.format
        time.sleep(SETTLE)
        pid = self.d.pid
        th0 = self.threads()
        c0, sw0 = A.proc_cpu_ns(pid), A.tasks_ctxsw(pid)
        p0 = A.proc_cpu_ns(self.pulse_pid) if self.pulse_pid and A.alive(self.pulse_pid) else None
        t0 = time.perf_counter()
        # Look at where the threads sleep a few times during the window (the playback thread polls the device).
        polling = {tid for tid, v in th0.items() if v[2]}
        steps = 5
        for _ in range(steps):
            time.sleep(SECONDS / steps)
            polling |= {tid for tid, v in self.threads().items() if v[2]}
        t1 = time.perf_counter()
        c1, sw1 = A.proc_cpu_ns(pid), A.tasks_ctxsw(pid)
        p1 = A.proc_cpu_ns(self.pulse_pid) if p0 is not None and A.alive(self.pulse_pid) else None
        th1 = self.threads()
        wall = t1 - t0
        pending = [m for m in self.ev.pending()]
        for m in pending:
            self.absorb(m)
        ended = [i for i in ids if i in self.finished]
        if ended:
            raise RuntimeError(f"{len(ended)} stream(s) ended during the window: {self.finished[ended[0]].get('outcome')}")
        self.cli("stop")
        for i in ids:
            if i not in self.finished:
                self.until(lambda m: m.get("event") == "finished" and m.get("id") == i, "end of the streams after stop")
        warnings = [self.finished[i].get("warning") for i in ids if self.finished[i].get("warning")]

        groups = {"control": 0, "playback": 0, "libpulse": 0, "other": 0}
        for tid, (comm, ns, _) in th1.items():
            d = ns - th0.get(tid, (comm, 0, False))[1]
            if tid == pid:
                groups["control"] += d
            elif comm == "threaded-ml":
                groups["libpulse"] += d
            elif comm == "announce-out" or tid in polling:
                groups["playback"] += d
            else:
                groups["other"] += d
        pct = lambda ns: ns / 1e9 / wall * 100  # noqa: E731
        total = pct(c1 - c0)
        return {
            "rate": rate, "streams": n, "seconds": wall, "device_format": fmt, "anchor": bool(anchor),
            "cpu_pct": total, "per_stream_pct": total / n,
            "threads_pct": {k: pct(v) for k, v in groups.items()},
            "threads": len(th1), "polling_threads": len(polling - {pid}),
            "ctxsw_per_s": A.ctxsw_delta(sw0, sw1) / wall,
            "pulseaudio_pct": pct(p1 - p0) if p1 is not None else None,
            "underrun_warnings": warnings,
        }


# -------------------------------------------------------------------------------------
# report

def render(res):
    V, w = [], []
    rows = res.get("cases", [])
    for r in rows:
        what = f"{r['streams']} stream{'s' if r['streams'] != 1 else ''} at {r['rate'] / 1000:g} kHz"
        shown = (f"{r['per_stream_pct']:.3f}% per stream ({r['cpu_pct']:.2f}% in all over {r['seconds']:.0f} s; "
                 f"PulseAudio server {r['pulseaudio_pct']:.2f}% besides)" if r["pulseaudio_pct"] is not None
                 else f"{r['per_stream_pct']:.3f}% per stream ({r['cpu_pct']:.2f}% in all over {r['seconds']:.0f} s)")
        if r["rate"] == 48000:
            V.append((f"mixing: daemon CPU < {PER_STREAM_PCT:g}% of a core per stream ({what}, paced `pulse`)",
                      "PASS" if r["per_stream_pct"] < PER_STREAM_PCT else "FAIL", shown))
        else:
            V.append((f"mixing: daemon CPU per stream ({what}, resampled to 48 kHz, paced `pulse`)", "INFO",
                      shown + "; no target set"))
    by = {(r["rate"], r["streams"]): r for r in rows}
    for rate in (48000, 44100):
        ns = sorted(n for (r_, n) in by if r_ == rate)
        if len(ns) >= 2:
            lo, hi = by[(rate, ns[-2])], by[(rate, ns[-1])]
            V.append((f"mixing: marginal daemon CPU per added stream ({rate / 1000:g} kHz, {ns[-2]} → {ns[-1]} streams)",
                      "INFO", f"{(hi['cpu_pct'] - lo['cpu_pct']) / (ns[-1] - ns[-2]):.3f}% of a core per stream "
                      "(the device's fixed cost left out); no target set"))
    refs = res.get("references") or []
    if refs:
        V.append(("mixing: reference, one stream through ALSA `pulse` by aplay", "INFO",
                  "; ".join(f"`{r['command']}` {r['cpu_pct']:.2f}%" for r in refs) + "; no target set"))

    w.append("## Mixing CPU")
    w.append("")
    w.append("Made by `scripts/bench/mixing.py` in the same run (`BENCH_MIXING=0` skips it). The daemon's")
    w.append("steady CPU while N looping ambient streams play on a real-time paced device: ALSA `pulse`, the")
    w.append("private PulseAudio of `Tests/Shell/paced-audio.sh` (a 48 kHz stereo null sink, paced by a 10 ms")
    w.append("monitor reader). Each stream is `announce play --no-wait --category ambient --loops -1 -d pulse")
    w.append("FILE`, FILE a different 5 s 16-bit stereo tone; once all have started and "
             f"{res.get('settle', SETTLE):g} s have passed, the daemon's")
    w.append("CPU clock (every thread) is read before and after "
             f"{res.get('window', SECONDS):g} s of wall time: **% of a core** = CPU s ÷ wall s × 100.")
    w.append("By thread (per-thread `schedstat`): **control** = the main thread (requests, events, progress")
    w.append("bookkeeping); **playback** = the device's thread (mixer, sample conversion, `snd_pcm_writei`);")
    w.append("**libpulse** = the ALSA pulse plugin's `threaded-ml` thread (talks to the server); **decode** = one")
    w.append("decode thread per stream and the housekeeper. One stream alone at unity gain is written")
    w.append("straight to the device without the mixer. 44.1 kHz rows: the streams join a device a 48 kHz")
    w.append("stream opened (then cancelled before the window), so each is resampled to 48 kHz (speexdsp,")
    w.append("decode side). **PulseAudio** = the sound server's own CPU over the same window (not announce's:")
    w.append("for scale). Target (issue 4): < 0.5% of one core per stream. `announce stop` ends each case.")
    w.append("")
    if rows:
        w.append("| streams | rate | device | % of a core | per stream | target: result | control | playback | "
                 "libpulse | decode | context switches /s | PulseAudio % | underruns |")
        w.append("|---:|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            t = r["threads_pct"]
            tgt = ("none: **INFO**" if r["rate"] != 48000 else
                   f"< {PER_STREAM_PCT:g}%: **{'PASS' if r['per_stream_pct'] < PER_STREAM_PCT else 'FAIL'}**")
            pa = f"{r['pulseaudio_pct']:.2f}" if r["pulseaudio_pct"] is not None else "?"
            under = "; ".join(r["underrun_warnings"]) if r["underrun_warnings"] else "none"
            w.append(f"| {r['streams']} | {r['rate'] / 1000:g} kHz | {r['device_format'] or '?'} | {r['cpu_pct']:.2f} | "
                     f"{r['per_stream_pct']:.3f} | {tgt} | {t['control']:.2f} | {t['playback']:.2f} | "
                     f"{t['libpulse']:.2f} | {t['other']:.2f} | {r['ctxsw_per_s']:,.0f} | {pa} | {under} |")
        refs = res.get("references") or []
        for ref in refs:
            pa = f"{ref['pulseaudio_pct']:.2f}" if ref["pulseaudio_pct"] is not None else "?"
            w.append(f"| 1 | 48 kHz | reference: `{ref['command']}` | {ref['cpu_pct']:.2f} | {ref['cpu_pct']:.3f} | "
                     f"none: **INFO** | | | | | {ref['ctxsw_per_s']:,.0f} | {pa} | |")
        w.append("")
        if refs:
            w.append("The reference rows are aplay playing one 48 kHz tone to the same `pulse` PCM over a window as")
            w.append("long (its own CPU clock): with aplay's default period and buffer, with the 3 periods of 60 ms")
            w.append("announce asks a sound server's plugin for (`pulse` here), and with the 4 of 20 ms it asks a")
            w.append("kernel-side PCM for. What one stream through the ALSA pulse plugin costs any client at a")
            w.append("period is the floor under announce's one-stream row at that period.")
            w.append("")
        lines = []
        for rate in (48000, 44100):
            ns = sorted(n for (r_, n) in by if r_ == rate)
            if len(ns) >= 2:
                lo, hi = by[(rate, ns[-2])], by[(rate, ns[-1])]
                lines.append(f"{(hi['cpu_pct'] - lo['cpu_pct']) / (ns[-1] - ns[-2]):.3f}% of a core at {rate / 1000:g} kHz "
                             f"({ns[-2]} → {ns[-1]} streams)")
        if lines:
            w.append("Marginal cost per added stream: " + ", ".join(lines) + ". The rest is the device's fixed cost:")
            w.append("the playback and libpulse threads wake every period whatever the number of streams.")
            w.append("")
    return V, A.section_markdown(w, res)


def main():
    if A.rerender(sys.argv, render):
        return
    args = sys.argv[1:]
    if len(args) != 5 or args[3] != "--paced":
        sys.exit("usage: mixing.py ANNOUNCE_BIN CACHE_DIR OUT.json --paced DIR")
    binary, cache, out, paced = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2], args[4]
    res = {"cases": [], "counts": COUNTS, "settle": SETTLE, "window": SECONDS}
    t0 = time.perf_counter()
    b = Bench(binary, cache, paced)
    try:
        for k in range(1, max(COUNTS) + 1):
            tone(cache, 48000, k)
            if WITH_44K:
                tone(cache, 44100, k)
        tone(cache, 48000, 20)
        b.start()
        rates = [48000] + ([44100] if WITH_44K else [])
        for rate in rates:
            for n in COUNTS:
                log(f"{n} stream(s) at {rate / 1000:g} kHz ({SECONDS:g} s)...")
                A.paced_check(paced)
                r = b.case(rate, n)
                A.paced_check(paced)
                log(f"  {r['cpu_pct']:.2f}% of a core, {r['per_stream_pct']:.3f}% per stream "
                    f"(control {r['threads_pct']['control']:.2f}, playback {r['threads_pct']['playback']:.2f}, "
                    f"libpulse {r['threads_pct']['libpulse']:.2f}, decode {r['threads_pct']['other']:.2f})")
                res["cases"].append(r)
        if shutil.which("aplay"):
            res["references"] = []
            for _, extra in Bench.REFERENCES:
                log(f"reference: {' '.join(['aplay', '-D', DEVICE, *extra])}, one 48 kHz stream ({SECONDS:g} s)...")
                A.paced_check(paced)
                r = b.reference(extra)
                res["references"].append(r)
                log(f"  {r['cpu_pct']:.2f}% of a core")
    finally:
        b.cleanup()
    A.write_section(out, res, render, log, t0)


if __name__ == "__main__":
    main()
