"""network: `play http://127.0.0.1/…` to the first frame (beside the same file by path), and
the CPU of the 60-minute MP3 over http beside `mpg123 http://…`, from Tests/Servers/httpd.py
(Python's http.server; its own CPU is nobody's) on loopback."""
import os
import random
import shlex
import subprocess
import sys
import time

from ..client import is_event
from ..config import CACHE, ROOT, log
from ..daemons import Daemon
from ..proc import med, stats_ms
from ..runners import REFERENCE, Counted, interleaved


def network(b):
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/Servers/httpd.py"), CACHE, "3600"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    b.cleanups.append(server.kill)
    port = int(server.stdout.readline())
    env = dict(os.environ, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    d = Daemon(b, "network", env=env)
    rng = random.Random(5)

    def first_frame(target):
        d.drain()
        d.wait_closed()
        time.sleep(rng.uniform(0, 0.060))
        t0 = time.time()
        ident = d.cli("play", "--no-wait", "-d", "null", target)
        s = d.until(lambda m: m.get("event") == "started" and m.get("id") == ident, "start of the play")
        d.until(is_event("finished", ident), "end of the play")
        if d.finished[ident].get("outcome", {}).get("kind") != "played":
            raise RuntimeError(f"{target}: {d.finished[ident]}")
        return s["time"] - t0

    name = "mp3-1min.mp3"
    url = f"http://127.0.0.1:{port}/{name}"
    first_frame(url)  # libcurl loaded, the file in the page cache
    by_url, by_path = [], []
    for _ in range(b.n["URL"]):
        by_url.append(first_frame(url))
        by_path.append(first_frame(b.path(name)))
    d.stop()
    b.cleanups.remove(d.stop)
    out = {"url": stats_ms(by_url), "path": stats_ms(by_path), "file": name}

    long = f"http://127.0.0.1:{port}/mp3-60min.mp3"
    cmds = {"announce": [b.bin, "play", "-q", "-d", "null", long], "mpg123": REFERENCE["mp3"] + [long]}
    counted = Counted(b, b.path("mp3-0.1s.mp3"))
    counted.env.update(no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    subprocess.run(["cat", b.path("mp3-60min.mp3")], stdout=subprocess.DEVNULL)
    try:
        runs = interleaved(b, cmds, counted, b.n["RUNS_URL"], env)
    finally:
        server.kill()
        server.wait()
        b.cleanups.remove(server.kill)
    out["stream"] = {"seconds": b.dur["mp3-60min.mp3"], "runs": runs,
                     "commands": {p: shlex.join(a).replace(long, "http://127.0.0.1/FILE").replace(b.bin, "announce")
                                  for p, a in cmds.items()}}
    b.res["network"] = out
    log(f"network: URL to first frame p50 {out['url']['p50']:.1f} ms (by path {out['path']['p50']:.1f} ms); 60-min MP3 "
        "over http: " + ", ".join(f"{p} {med(r['cpu'] for r in rs):.3f} s" for p, rs in runs.items()) + " CPU")
