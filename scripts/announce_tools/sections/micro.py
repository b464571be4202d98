"""micro: Benchmarks/ (ordo-one/benchmark), a package of its own, built here in release;
report.py turns its markdown into tables."""
import os
import subprocess
import time

from ..config import CACHE, ROOT, SWIFT, log


def micro(b):
    pkg = os.path.join(ROOT, "Benchmarks")
    env = dict(os.environ, BENCH_INPUTS=CACHE, BENCH_MICRO_SECONDS=str(b.n["MICRO_SECONDS"]))
    env.pop("ALSA_CONFIG_PATH", None)
    t0 = time.perf_counter()
    r = subprocess.run([SWIFT, "package", "--disable-sandbox", "benchmark", "--no-progress", "--format", "markdown"],
                       cwd=pkg, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"swift package benchmark failed: {(r.stderr or r.stdout)[-1500:]}")
    b.res["micro"] = {"output": r.stdout, "seconds": time.perf_counter() - t0}
    log(f"micro-benchmarks: {time.perf_counter() - t0:.0f} s (build included)")
