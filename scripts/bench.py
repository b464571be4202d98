#!/usr/bin/env python3
"""make bench: announce side by side with mpg123, aplay and sox on the same inputs in the same
run, its daemon's own targets, alert latency, mixing CPU, instruction counts and the Swift
micro-benchmarks (Benchmarks/, ordo-one/benchmark). Writes BENCHMARKS.md. Standard library only.

    scripts/bench.py PATH-TO-announce [--smoke] [--only SECTIONS] [--out FILE]
    scripts/bench.py --render [--out FILE]     BENCHMARKS.md again from .bench-cache/results.json

Sections: players tempo daemon scale alert speech loudness network mixing duck zones callgrind micro (all by default). --smoke runs each with
few repetitions and short windows (a few minutes; for developing the harness, not for figures)
and writes .bench-cache/BENCHMARKS.smoke.md unless --out is given. Counts can be set one by one
with BENCH_<NAME>=N, NAME as in COUNTS below (e.g. BENCH_RUNS=9).
"""
import argparse
import json
import os
import shutil
import sys
import time

# The sections, the daemon's client (shared with stress.py) and the report: scripts/announce_tools/.
from announce_tools.config import CACHE, COUNTS, ROOT, log
from announce_tools.context import Bench
from announce_tools.machine import Load, machine, pin_alsa
from announce_tools.report import previous_targets, render
from announce_tools.sections import SECTIONS


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--out")
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--make-started", type=float, help="when `make bench` started (epoch s), for its duration")
    args = ap.parse_args()
    results = os.path.join(CACHE, "results.smoke.json" if args.smoke else "results.json")
    out = args.out or (os.path.join(CACHE, "BENCHMARKS.smoke.md") if args.smoke else os.path.join(ROOT, "BENCHMARKS.md"))
    if args.render:
        render(json.load(open(results)), out)
        return
    if not args.binary or not os.access(args.binary, os.X_OK):
        sys.exit("usage: bench.py PATH-TO-announce (build it with: make release)")
    missing = [t for t in ("ffmpeg", "ffprobe", "mpg123", "aplay", "sox") if not shutil.which(t)]
    if missing:
        sys.exit(f"bench.py: missing tools: {' '.join(missing)} (make deps-bench installs them)")
    os.makedirs(CACHE, exist_ok=True)
    os.makedirs(os.path.join(CACHE, "config"), exist_ok=True)
    # The user's config must not reach the plays; the sections but loudness time plays at the
    # files' own level, as the performance issue asks (the loudness section sets its own).
    os.makedirs(os.path.join(CACHE, "config", "announce"), exist_ok=True)
    with open(os.path.join(CACHE, "config", "announce", "config"), "w") as config:
        config.write("loudness = off\n")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(CACHE, "config")
    n = {k: int(os.environ.get(f"BENCH_{k}", v[1] if args.smoke else v[0])) for k, v in COUNTS.items()}
    load = Load()
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "smoke": args.smoke, "counts": n}
    bench = Bench(os.path.abspath(args.binary), n, res)
    res["machine"] = machine(bench.bin, pin_alsa())
    res["previous"] = previous_targets(out)  # the report shows the last run's figures beside the new ones
    try:
        bench.inputs()
        for name in SECTIONS:
            if name in args.only.split(","):
                t0 = time.perf_counter()
                log(f"{name}...")
                load.own_build = name == "micro"  # its Swift build is ours, not another's
                try:
                    SECTIONS[name](bench)
                except Exception as e:  # noqa: BLE001 (the other sections' figures are still written)
                    log(f"{name} FAILED: {e}")
                    res.setdefault("errors", {})[name] = str(e)[-600:]
                load.own_build = False
                res.setdefault("section_seconds", {})[name] = time.perf_counter() - t0
    finally:
        for f in reversed(bench.cleanups):
            try:
                f()
            except Exception as e:  # noqa: BLE001
                log(f"cleanup: {e}")
        res["load"] = load.result()
        if args.make_started:
            res["load"]["make_seconds"] = time.time() - args.make_started
        json.dump(res, open(results, "w"), indent=1)
    render(res, out)
    log(f"wrote {os.path.relpath(out)} in {res['load']['seconds'] / 60:.1f} min")
    if res.get("errors"):
        sys.exit(f"bench.py: failed: {', '.join(res['errors'])} (see BENCHMARKS.md)")


if __name__ == "__main__":
    main()
