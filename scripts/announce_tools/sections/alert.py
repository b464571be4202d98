"""alert: `announce alert` spawn to its first frame written (`started` event time), warm (the
PCM cached), cold (a new file), and the daemon alone (a request on an open connection); on
`null`, and on the paced device alone and over a playing stream. On the paced device the sink's
monitor is recorded throughout, and each warm alert's onset as heard is found in it: the time
from spawn to heard, alone and over the stream, whose difference is what the stream costs."""
import array
import os
import random
import shutil
import signal
import subprocess
import time

from ..client import item, is_event
from ..config import TMPFS, log
from ..context import write_tone
from ..daemons import Daemon
from ..proc import children_cpu, fresh_dir, pct, stats_ms
from ..servers import paced_env
from .duck import envelope

HEARD_RATE = 48000


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
    recording, recorder, heard = None, None, {}
    if paced_env(b):
        # A silent stream of another client keeps the sink running (an idle sink is suspended, and
        # so is its monitor: the recording would skip the idle time), as a desktop's sink is.
        with open("/dev/zero", "rb") as zeros:
            keeper = subprocess.Popen(["pacat", "--raw", "--format=s16le", f"--rate={HEARD_RATE}", "--channels=2",
                                       "--latency-msec=20", "--client-name=bench-keep-awake"], env=paced_env(b), stdin=zeros,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        b.cleanups.append(lambda: keeper.poll() is None and os.killpg(keeper.pid, signal.SIGTERM))
        recording = os.path.join(cold_dir, "monitor.s16")
        with open(recording, "wb") as f:
            recorder = subprocess.Popen(["parec", "--raw", "--format=s16le", f"--rate={HEARD_RATE}", "--channels=2",
                                         "--latency-msec=10", "-d", paced_env(b)["PACED_SINK"] + ".monitor"],
                                        env=paced_env(b), stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        recorded_from = time.time()
        b.cleanups.append(lambda: recorder.poll() is None and os.killpg(recorder.pid, signal.SIGTERM))
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
            return s["time"] - t0, exit_s, cpu, t0

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
                first, exit_s, cpu, spawned = command(alert)
                if recorder and device == "pulse":
                    heard.setdefault(over_stream, []).append(spawned - recorded_from)
                r["warm"].append(first)
                r["exit"].append(exit_s)
                r["cpu"].append(cpu)
                r["request"].append(request())
        d.stop()
        out.append(dict({k: dict(stats_ms(v, 90), p99=pct(v, 99) * 1e3) for k, v in r.items()}, device=device, over_stream=over_stream,
                        format=d.format))
        log(f"alert on {device}{' over a stream' if over_stream else ''}: warm p50 {out[-1]['warm']['p50']:.1f} ms")
    if recorder:
        time.sleep(0.3)
        for process in (recorder, keeper):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(5)
        onsets = heard_onsets(recording, [t for spawns in heard.values() for t in spawns])
        alone = [onsets[t] - t for t in heard.get(False, []) if t in onsets]
        over = [onsets[t] - t for t in heard.get(True, []) if t in onsets]
        b.res["alert_heard"] = dict(alone=stats_ms(alone, 90) if alone else {"n": 0}, over=stats_ms(over, 90) if over else {"n": 0},
                                    missed=len(heard.get(False, [])) + len(heard.get(True, [])) - len(alone) - len(over))
        log(f"alert as heard on pulse: alone {b.res['alert_heard']['alone']}, over a stream {b.res['alert_heard']['over']}")


def heard_onsets(recording, spawns, tone=880, window=2400, hop=48):
    """The recording time of the 880 Hz alert's onset after each spawn time (seconds from the
    recorder's launch): the middle of the first 50 ms window, a step of 1 ms, whose level at 880 Hz
    rises over half the alert's (0.3). 50 ms holds whole cycles of 880 Hz and of the stream's
    220 Hz, so the stream adds nothing to the level. The recording starts a little after its
    launch, so an onset is looked for from 250 ms before its spawn (each alert follows the last
    one's end by more): the recorder's lag is in every figure, and cancels in a difference."""
    pcm = array.array("h")
    with open(recording, "rb") as f:
        pcm.frombytes(f.read())
    level = envelope(pcm[0::2], tone, HEARD_RATE, window, hop)
    threshold = 0.15 * 32768
    onsets = {}
    for spawn in sorted(spawns):
        k = max(1, int((spawn - 0.25) * HEARD_RATE / hop))
        while k < len(level) and not (level[k - 1] < threshold <= level[k]):
            k += 1
        onset = (k * hop + window / 2) / HEARD_RATE
        if k < len(level) and onset - spawn < 1:
            onsets[spawn] = onset
    return onsets
