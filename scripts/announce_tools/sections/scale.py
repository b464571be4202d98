"""scale: a queue of SCALE_ITEMS items (paused, so they stay queued): the daemon's RSS per
queued item, the enqueue round trip with them queued, and a restart that restores them from
the spool, timed from spawn to a `status` that lists them all."""
import time

from ..client import item
from ..config import TMPFS, log
from ..daemons import Daemon
from ..proc import pct, stats_ms, status_kib


def scale(b):
    count = b.n["SCALE_ITEMS"]
    d = Daemon(b, "scale", base=TMPFS, events=False)
    c = d.connect()
    c.call({"op": "pause"})
    clip = b.path("wav-0.1s.wav")
    # Warm: the allocator's arenas and the spool's directory as a busy daemon has them.
    c.call({"op": "play", "items": [item(clip) for _ in range(100)], "wait": False})
    c.call({"op": "clear"})
    before = status_kib(d.pid)
    for start in range(0, count, 100):
        c.call({"op": "play", "items": [item(clip) for _ in range(min(100, count - start))], "wait": False})
    queued = status_kib(d.pid)
    req = {"op": "play", "items": [item(clip)], "wait": False}
    lat = []
    for _ in range(b.n["ENQUEUE"]):
        t = time.perf_counter()
        c.call(req)
        lat.append(time.perf_counter() - t)
    total = count + b.n["ENQUEUE"]
    c.close()
    d.proc.terminate()
    d.proc.wait(30)
    restore = []
    for _ in range(b.n["SCALE_RESTARTS"]):
        restore.append(restart(b, d, total))
    d.stop()  # the last restart's daemon has exited: its directory goes
    per_item = (queued["VmRSS"] - before["VmRSS"]) * 1024 / count
    ready = sorted(r["ready"] * 1e3 for r in restore)
    log(f"scale: {count} items, {per_item:.0f} B per item, enqueue p99 {pct(lat, 99) * 1e3:.2f} ms, restored (ready) in "
        f"{ready[0]:.0f}-{ready[-1]:.0f} ms")
    b.res["scale"] = {"items": count, "before": before, "queued": queued, "enqueue": stats_ms(lat),
                      "restarts": restore, "total": total}


def restart(b, d, total):
    """One restart of d's daemon over its spool: spawn to ready, and to a status listing every
    item; the new daemon's VmRSS then and its VmHWM (the peak while restoring)."""
    t0 = time.perf_counter()
    proc = d.runtime.spawn(d.log, d.device, ready=30)
    ready = time.perf_counter() - t0
    c = d.connect()  # the pause is kept across restarts: nothing plays
    status = c.call({"op": "status"})["status"]
    listed = time.perf_counter() - t0
    n = len(status["queued"])
    mem = status_kib(proc.pid)
    c.close()
    proc.terminate()
    proc.wait(30)
    d.proc = proc
    if n != total:
        raise RuntimeError(f"scale: the restarted daemon listed {n} of {total} items")
    return {"ready": ready, "listed": listed, "items": n, "mem": mem}
