"""duck: another application's tone (sox | pacat, no media.role) plays on the private sound
server's sink while announce plays a 1.5 s --duck-others clip over it, round after round; the
sink's monitor is recorded throughout and the other stream's level read from it."""
import array
import itertools
import math
import os
import shutil
import signal
import statistics
import subprocess
import time

from ..config import TMPFS, log
from ..context import write_tone
from ..daemons import Daemon
from ..proc import fresh_dir, stats_ms
from ..servers import paced_env, pipewire_env, sink_input_volume


def duck(b):
    out = b.res.setdefault("duck", [])
    for name, up in (("PulseAudio", paced_env), ("PipeWire", pipewire_env)):
        env = up(b)
        if env:
            out.append(duck_on(b, name, env))
            r = out[-1]
            log(f"duck on {name}: at the duck level (1 dB) p50 {r['level_1db']['p50']:.0f} ms, "
                f"restored exactly {r['pactl_exact']}/{r['rounds']}")


def duck_on(b, server, env):
    rate, rounds, app = 48000, b.n["DUCK_ROUNDS"], f"bench-other-{os.getpid()}"
    work = fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-duck-files-{server.lower()}"))
    b.cleanups.append(lambda: shutil.rmtree(work, ignore_errors=True))
    clip = write_tone(os.path.join(work, "voice-1000.wav"), rate, 1.5, 1000, amplitude=0.3)
    recording = os.path.join(work, "monitor.s16")
    procs = []

    def start(cmd, stdout=subprocess.DEVNULL):
        p = subprocess.Popen(cmd, shell=isinstance(cmd, str), env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        procs.append(p)
        return p

    def stop_all():
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(5)
    b.cleanups.append(stop_all)
    with open(recording, "wb") as f:
        recorder = start(["parec", "--raw", "--format=s16le", f"--rate={rate}", "--channels=2", "--latency-msec=10",
                          "-d", env["PACED_SINK"] + ".monitor"], stdout=f)
    start(f"sox -q -n -r {rate} -c 2 -b 16 -e signed-integer -t raw - synth 3600 sine 440 vol 0.3 | "
          f"pacat --raw --format=s16le --rate={rate} --channels=2 --latency-msec=20 --client-name={app}")
    original = None
    for _ in range(500):
        original = sink_input_volume(env, app)
        if original and any(original):
            break
        time.sleep(0.01)
    if not original:
        raise RuntimeError(f"the other stream did not appear on {server}")
    time.sleep(1.0)  # WirePlumber sets a new stream's restored volume just after it appears
    original = sink_input_volume(env, app)
    d = Daemon(b, f"duck-{server.lower()}", device="pulse", env=env)
    after, restore_s = [], []
    for _ in range(rounds):
        time.sleep(0.8)  # the other tone alone: the level before
        d.cli("play", "-q", clip, "--duck-others")
        t0 = time.perf_counter()
        volume = sink_input_volume(env, app)
        while volume != original and time.perf_counter() - t0 < 3:
            time.sleep(0.005)
            volume = sink_input_volume(env, app)
        restore_s.append(time.perf_counter() - t0)
        time.sleep(1.4)  # the level after
        after.append(volume)
    d.stop()
    os.killpg(recorder.pid, signal.SIGTERM)
    recorder.wait(5)
    stop_all()
    r = analyse_duck(recording, rate)
    if len(r["spans"]) != rounds:
        raise RuntimeError(f"duck on {server}: announce's clip heard {len(r['spans'])} times in {rounds} rounds")

    def volume_db(v):
        return 60 * math.log10(max(v, 1) / 65536)
    pactl_db = [max(abs(volume_db(a) - volume_db(b)) for a, b in zip(v or [0], original)) for v in after]
    return {"server": server, "rounds": rounds, "original": original,
            "level_1db": stats_ms(r["level_1db"]), "level_90": stats_ms(r["level_90"]),
            "down": stats_ms(r["down"]), "up": stats_ms(r["up"]), "depth_db": r["depth_db"], "after_db": r["after_db"],
            "pactl_exact": sum(v == original for v in after), "pactl_db_max": max(pactl_db),
            "restore_seen": stats_ms(restore_s)}


def envelope(x, freq, rate, window, hop):
    """The amplitude of `freq` in x over windows of `window` samples (whole cycles of it), every `hop`."""
    table = [(math.cos(2 * math.pi * freq * i / rate), math.sin(2 * math.pi * freq * i / rate)) for i in range(window)]
    cos_sums = array.array("d", [0.0])
    sin_sums = array.array("d", [0.0])
    cos_sums.extend(itertools.accumulate(x[i] * table[i % window][0] for i in range(len(x))))
    sin_sums.extend(itertools.accumulate(x[i] * table[i % window][1] for i in range(len(x))))
    return [2 / window * math.hypot(cos_sums[k + window] - cos_sums[k], sin_sums[k + window] - sin_sums[k])
            for k in range(0, len(x) - window, hop)]


def analyse_duck(recording, rate, window=1200, hop=48):
    """Each hearing of announce's 1000 Hz clip in the monitor recording (left channel), and the other
    stream's 440 Hz around it: the time from the clip's onset to the duck level (within 1 dB, and 90 %
    of the way), the ramps' 10-90 % times, the depth and the level after, as in the duck tests."""
    pcm = array.array("h")
    with open(recording, "rb") as f:
        pcm.frombytes(f.read())
    left = pcm[0::2]
    other, voice = envelope(left, 440, rate, window, hop), envelope(left, 1000, rate, window, hop)

    def time_of(k):
        return (k * hop + window / 2) / rate

    def index(t):
        return max(0, min(len(other) - 1, int((t * rate - window / 2) / hop)))

    def median(a, b):
        return statistics.median(other[index(a):index(b) + 1])

    level = 0.5 * max(voice)
    spans, k = [], 0
    while k < len(voice):
        if voice[k] >= level:
            j = k
            while j < len(voice) and voice[j] >= level:
                j += 1
            if spans and time_of(k) - spans[-1][1] < 0.1:  # an underrun splits a clip: one span
                spans[-1] = (spans[-1][0], time_of(j - 1))
            else:
                spans.append((time_of(k), time_of(j - 1)))
            k = j
        else:
            k += 1
    r = {k: [] for k in ("level_1db", "level_90", "down", "up", "depth_db", "after_db")}
    r["spans"] = spans = [s for s in spans if s[1] - s[0] > 1.0]
    for onset, end in spans:
        before, during, after = median(onset - 0.6, onset - 0.1), median(onset + 0.5, end - 0.1), median(end + 0.9, end + 1.3)
        depth = before - during

        def first(start, test):
            return next((time_of(k) for k in range(index(start), len(other)) if test(other[k])), None)
        d10, d90 = first(onset - 0.1, lambda v: v <= before - 0.1 * depth), first(onset - 0.1, lambda v: v <= before - 0.9 * depth)
        u10, u90 = first(end - 0.1, lambda v: v >= during + 0.1 * depth), first(end - 0.1, lambda v: v >= during + 0.9 * depth)
        at = first(onset - 0.1, lambda v: v <= during * 10 ** (1 / 20))
        if None in (d10, d90, u10, u90, at):
            raise RuntimeError(f"no duck heard around {onset:.2f} s")
        r["level_1db"].append(at - onset)
        r["level_90"].append(d90 - onset)
        r["down"].append(d90 - d10)
        r["up"].append(u90 - u10)
        r["depth_db"].append(20 * math.log10(during / before))
        r["after_db"].append(20 * math.log10(after / before))
    return r
