"""speech: `announce say` spawn to its first frame written (`started` event time), with a
sentence never said before (the engine renders it) and with one just said (the render cache),
beside espeak-ng itself: its spawn to the first byte of audio on its stdout."""
import os
import random
import shutil
import subprocess
import time

from ..client import is_event
from ..config import TMPFS, log
from ..daemons import Daemon
from ..proc import children_cpu, fresh_dir, stats_ms


def speech(b):
    if not shutil.which("espeak-ng"):
        log("speech: espeak-ng is not installed: no figures")
        return
    cache = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-speech-cache"))
    b.cleanups.append(lambda: shutil.rmtree(cache, ignore_errors=True))
    d = Daemon(b, "speech", env=dict(os.environ, XDG_CACHE_HOME=cache))
    rng = random.Random(3)
    words = ["backup", "finished", "build", "failed", "door", "kitchen", "printer", "server", "garden", "meeting"]

    def say(text):
        d.drain()
        d.wait_closed()
        time.sleep(rng.uniform(0, 0.060))
        cpu, t0 = children_cpu(), time.time()
        subprocess.run([b.bin, "say", "-q", "--no-wait", "-d", "null", text], env=d.env,
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
    for i in range(b.n["SAY"]):
        text = f"The {rng.choice(words)} {i} is {rng.choice(words)} now."
        first, c = say(text)
        fresh.append(first)
        cpu.append(c)
        cached.append(say(text)[0])
        own.append(espeak(f"The {rng.choice(words)} {i} is ready."))
    d.stop()
    b.res["speech"] = {k: stats_ms(v, 90) for k, v in
                       {"fresh": fresh, "cached": cached, "cpu": cpu, "espeak": own}.items()}
    log(f"speech: say to first frame p50 {b.res['speech']['fresh']['p50']:.1f} ms (cached "
        f"{b.res['speech']['cached']['p50']:.1f} ms); espeak-ng's own first byte p50 {b.res['speech']['espeak']['p50']:.1f} ms")
