"""alert: `announce alert` spawn to its first frame written (`started` event time), warm (the
PCM cached), cold (a new file), and the daemon alone (a request on an open connection); on
`null`, and on the paced device alone and over a playing stream."""
import os
import random
import shutil
import subprocess
import time

from ..client import item, is_event
from ..config import TMPFS, log
from ..context import write_tone
from ..daemons import Daemon
from ..proc import children_cpu, fresh_dir, stats_ms
from ..servers import paced_env


def alert(b):
    alert = write_tone(b.path("alert-0.3s-48k.wav"), 48000, 0.3, 880, amplitude=0.3)
    other = write_tone(b.path("alert-0.1s-48k-660.wav"), 48000, 0.1, 660, amplitude=0.3)
    loop = write_tone(b.path("tone-48k-220.wav"), 48000, 5, 220, fade=0)
    cold_dir = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-cold-files"))
    b.cleanups.append(lambda: shutil.rmtree(cold_dir, ignore_errors=True))
    out = b.res.setdefault("alert", [])
    cases = [("null", None, False, b.n["ALERT_ROUNDS"])]
    if paced_env(b):
        cases += [("pulse", paced_env(b), False, b.n["ALERT_ROUNDS_PACED"]),
                  ("pulse", paced_env(b), True, b.n["ALERT_ROUNDS_PACED"])]
    for device, env, over_stream, rounds in cases:
        d = Daemon(b, "alert", device=device, env=env)
        c, rng = d.connect(), random.Random(1)

        def settle():
            d.drain()
            if not over_stream:
                d.wait_closed()
            time.sleep(rng.uniform(0, 0.060))  # not always at the same phase of the device's period

        def command(path):
            settle()
            cpu, t0, p0 = children_cpu(), time.time(), time.perf_counter()
            subprocess.run([b.bin, "alert", "-q", "-d", device, path], env=d.env, stdin=subprocess.DEVNULL,
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
