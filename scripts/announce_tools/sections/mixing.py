"""mixing: the daemon's steady CPU while N looping ambient streams play on the paced device,
beside aplay through the same PCM."""
import subprocess
import time

from ..client import is_event
from ..config import log
from ..context import write_tone
from ..daemons import Daemon
from ..proc import proc_cpu_ns, switches, switches_since
from ..servers import paced_env


def mixing(b):
    env = paced_env(b)
    if not env:
        return
    secs, settle = b.n["MIX_SECONDS"], 2
    out = b.res.setdefault("mixing", {"seconds": secs, "cases": [], "references": []})
    d = Daemon(b, "mix", device="pulse", env=env)

    def tone(rate, k):
        freq = 200 + 37 * k
        return write_tone(b.path(f"tone-{rate / 1000:g}k-{freq}.wav"), rate, 5, freq, amplitude=0.05, fade=0)

    def play(path):
        return d.cli("play", "--no-wait", "--category", "ambient", "--loops", "-1", "-d", "pulse", path)

    def window(pid):
        cpu, sw, pa, t0 = proc_cpu_ns(pid), switches(pid), proc_cpu_ns(b.pulse_pid), time.perf_counter()
        time.sleep(secs)
        wall = time.perf_counter() - t0
        return {"seconds": wall, "cpu_pct": (proc_cpu_ns(pid) - cpu) / 1e7 / wall,
                "ctxsw_per_s": switches_since(sw, switches(pid)) / wall,
                "pulseaudio_pct": (proc_cpu_ns(b.pulse_pid) - pa) / 1e7 / wall}

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
            if (rate, n) == (48000, 1):
                # An alert over the stream: its own stream is kept open for the next alert while
                # the shared one is (issue 30): what that costs, and nothing once the device closes.
                alert = write_tone(b.path("alert-0.3s-48k.wav"), 48000, 0.3, 880, amplitude=0.3)
                c = d.connect()
                aid = c.call({"op": "alert", "alert": {"path": alert, "gain": 1, "device": "pulse"}, "wait": False})["ids"][0]
                d.until(is_event("finished", aid), "end of the alert", 15)
                c.close()
                time.sleep(1)
                r["kept_alert"] = window(d.pid)
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
    d.wait_closed(15)
    time.sleep(1)
    out["idle_after"] = window(d.pid)
    d.stop()
    # aplay through the same PCM: its defaults, then announce's periods for a sound server (3 × 60 ms)
    # and for a kernel-side PCM (4 × 20 ms).
    ref = write_tone(b.path(f"tone-48k-ref-{secs + 12}s.wav"), 48000, secs + 12, 440, amplitude=0.05, fade=0)
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
