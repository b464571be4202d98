"""players: every player plays the same file to ALSA `null`; announce = its client + its daemon.
tempo: the 60-minute MP3 at --rate 2 (libsonic on the daemon's decode side), beside the same
file played plainly and sox's own tempo effect, each to ALSA `null`."""
import os
import re
import shlex
import subprocess
import time

from ..config import log
from ..proc import med
from ..runners import REFERENCE, SOX, Counted, interleaved, run_once


def players(b):
    plan = [("wav-0.1s", "RUNS_TINY"), ("wav-1min", "RUNS"), ("wav-10min", "RUNS"), ("wav-60min", "RUNS_MARGINAL"),
            ("mp3-0.1s", "RUNS_TINY"), ("mp3-1min", "RUNS"), ("mp3-60min", "RUNS_LONG")]
    only = os.environ.get("BENCH_CASES", ".")
    out = b.res.setdefault("players", {})
    for case, count in plan:
        if not re.search(only, case):
            continue
        kind = case.split("-")[0]
        path = b.path(f"{case}.{kind}")
        cmds = {"announce": [b.bin, "play", "-q", "-d", "null", path], REFERENCE[kind][0]: REFERENCE[kind] + [path]}
        if case != "wav-60min":  # the WAV target compares with aplay only
            cmds["sox"] = [a.format(path) for a in SOX]
        short = b.path("wav-1s.wav") if case == "wav-60min" else None
        counted = Counted(b, b.path(f"{kind}-0.1s.{kind}"))
        warm = 1
        if case == "mp3-60min":  # seconds per run: warm the page cache with cat instead
            warm = 0
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL)
        runs = {p: [] for p in cmds}
        t0 = time.perf_counter()
        try:
            for i in range(warm + b.n[count]):
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
            b.cleanups.remove(counted.d.stop)
        out[case] = {"seconds": b.dur[os.path.basename(path)], "bytes": os.path.getsize(path),
                     "commands": {p: shlex.join(a).replace(shlex.quote(path), "FILE").replace(b.bin, "announce")
                                  for p, a in cmds.items()}, "runs": runs}
        log(f"{case}: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.4f} s" for p, rs in runs.items())
            + f" CPU (medians; {time.perf_counter() - t0:.0f} s)")


def tempo(b):
    path = b.path("mp3-60min.mp3")
    cmds = {"announce --rate 2": [b.bin, "play", "-q", "-d", "null", "--rate", "2", path],
            "announce": [b.bin, "play", "-q", "-d", "null", path],
            "sox tempo 2": ["sox", "-q", path, "-t", "alsa", "null", "tempo", "2"]}
    counted = Counted(b, b.path("mp3-0.1s.mp3"))
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # the page cache warm, as for players
    t0 = time.perf_counter()
    runs = interleaved(b, cmds, counted, b.n["RUNS_TEMPO"])
    b.res["tempo"] = {"seconds": b.dur["mp3-60min.mp3"], "runs": runs,
                      "commands": {p: shlex.join(a).replace(shlex.quote(path), "FILE").replace(b.bin, "announce")
                                   for p, a in cmds.items()}}
    log("tempo: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.3f} s" for p, rs in runs.items())
        + f" CPU (medians; {time.perf_counter() - t0:.0f} s)")
