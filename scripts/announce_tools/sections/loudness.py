"""loudness: what the loudness stage costs. A request to the first frame written (`started`
event time) of a clip never measured (a fresh copy: a new inode, so a new cache key), of the
same clip measured (the cache), and with `loudness off`, for 1, 10 and 30 s of WAV and MP3;
and the stage's CPU per minute of audio (a never-measured file's play less the same play with
loudness off) and `announce info`'s (integrated loudness, range and true peak) beside
`ffmpeg -af ebur128=peak=true` on the same files. Every other
section runs with `loudness = off` (bench.py), as the performance issue asks."""
import os
import random
import shutil
import subprocess
import time

from ..client import is_event, item
from ..config import TMPFS, log
from ..daemons import Daemon
from ..proc import children_cpu, fresh_dir, med, proc_cpu_ns, stats_ms

LENGTHS = (1, 10, 30)


def clips(b):
    """1, 10 and 30 s cut from the 1-minute inputs, WAV and MP3 (made once)."""
    made = []
    for kind in ("wav", "mp3"):
        for seconds in LENGTHS:
            path = b.path(f"{kind}-{seconds}s-loudness.{kind}")
            if not os.path.exists(path):
                codec = ["-c:a", "libmp3lame", "-b:a", "128k"] if kind == "mp3" else ["-c:a", "pcm_s16le"]
                subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", b.path(f"{kind}-1min.{kind}"),
                                "-t", str(seconds)] + codec + [path], check=True)
            made.append((kind, seconds, path))
    return made


def loudness(b):
    work = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-loudness"))
    b.cleanups.append(lambda: shutil.rmtree(work, ignore_errors=True))
    config = os.path.join(work, "config")
    os.makedirs(os.path.join(config, "announce"))
    open(os.path.join(config, "announce", "config"), "w").close()  # every default: -16 LUFS
    env = dict(os.environ, XDG_CONFIG_HOME=config, XDG_CACHE_HOME=os.path.join(work, "cache"))
    d = Daemon(b, "loudness", env=env)
    c, rng = d.connect(), random.Random(5)
    rounds = b.n["LOUDNESS"]

    def played_cpu(path, off=False):
        """The daemon's CPU for one whole play of path on `null` (which takes frames as fast as
        they come), in seconds."""
        request = item(path)
        if off:
            request["clip"]["loudness"] = "off"
        d.drain()
        cpu = proc_cpu_ns(d.pid)
        iid = c.call({"op": "play", "wait": False, "items": [request]})["ids"][0]
        d.until(is_event("finished", iid), f"end of {path}", timeout=120)
        return (proc_cpu_ns(d.pid) - cpu) / 1e9

    def first_frame(path, off=False):
        request = item(path)
        if off:
            request["clip"]["loudness"] = "off"
        d.drain()
        time.sleep(rng.uniform(0, 0.020))
        t0 = time.time()
        iid = c.call({"op": "play", "wait": False, "items": [request]})["ids"][0]
        s = d.until(is_event("started", iid), f"start of {path}")
        c.call({"op": "cancel", "ids": [iid]})
        d.until(is_event("finished", iid), f"end of {path}")
        return s["time"] - t0

    out = b.res["loudness"] = {"first": [], "analysis": []}
    for kind, seconds, path in clips(b):
        first_frame(path)  # measured once: cached from here on
        r = {"fresh": [], "cached": [], "off": []}
        for i in range(rounds):
            copy = os.path.join(work, f"fresh-{i}-{os.path.basename(path)}")
            shutil.copyfile(path, copy)
            r["fresh"].append(first_frame(copy))
            os.remove(copy)
            r["cached"].append(first_frame(path))
            r["off"].append(first_frame(path, off=True))
        out["first"].append(dict({k: stats_ms(v, 90) for k, v in r.items()}, kind=kind, seconds=seconds))
    # The stage's CPU per minute of audio: a never-measured file's whole play (measuring, the
    # gain, the limiter) less the same play with loudness off; beside ffmpeg's ebur128.
    for name in ("mp3-1min.mp3", "wav-10min.wav"):
        path, minutes = b.path(name), b.dur[name] / 60
        runs = {"stage": [], "info": [], "ffmpeg": []}
        for i in range(max(1, rounds // 4)):
            copy = os.path.join(work, f"cpu-{i}-{name}")
            shutil.copyfile(path, copy)
            runs["stage"].append((played_cpu(copy) - played_cpu(copy, off=True)) / minutes)
            os.remove(copy)
            for who, argv in (("info", [b.bin, "info", path]),
                              ("ffmpeg", ["ffmpeg", "-nostdin", "-nostats", "-hide_banner", "-i", path, "-af",
                                          "ebur128=peak=true", "-f", "null", "-"])):
                cpu = children_cpu()
                subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                runs[who].append((children_cpu() - cpu) / minutes)
        out["analysis"].append({"file": name, "per_minute_s": {k: med(v) for k, v in runs.items()}})
    d.stop()
    f = out["first"][-1]
    log(f"loudness: {f['kind']} {f['seconds']} s never measured to first frame p50 {f['fresh']['p50']:.1f} ms, "
        f"cached {f['cached']['p50']:.1f} ms, off {f['off']['p50']:.1f} ms")
