#!/usr/bin/python3
"""Where each tone sounds in a raw recording, measured with numpy (not announce's own reader).

    tone-runs.py FILE.s16 RATE CHANNELS FREQUENCY...

FILE is raw signed 16-bit little-endian (parec --raw). The first channel is cut in 5 ms windows;
each window's level at each FREQUENCY is the magnitude of its Hann-windowed DFT at that
frequency, as a sine's amplitude. Prints one JSON object per frequency: its run (the longest
stretch of windows over 0.05, dips of up to 25 ms inside it included; start and end in seconds),
the windows inside the run (not its edges) below half its median level (gaps: a cut in a tone
that should be steady), the run's levels' 10th and 90th percentiles, and the times of loud windows outside the
run (blips: a click shows at every frequency).
"""
import json
import sys

import numpy as np

path, rate, channels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tones = [float(f) for f in sys.argv[4:]]
samples = np.fromfile(path, dtype="<i2").astype(np.float64) / 32768
samples = samples[: len(samples) // channels * channels].reshape(-1, channels)[:, 0]
window = rate * 5 // 1000
count = len(samples) // window
frames = samples[: count * window].reshape(count, window)
hann = np.hanning(window)
times = np.arange(window) / rate
result = []
for tone in tones:
    basis = np.exp(-2j * np.pi * tone * times) * hann
    levels = np.abs(frames @ basis) * 2 / hann.sum()
    loud = levels > 0.05
    stretches, start = [], None
    for index, on in enumerate(np.append(loud, False)):
        if on and start is None:
            start = index
        elif not on and start is not None:
            stretches.append([start, index])
            start = None
    merged = []
    for stretch in stretches:
        if merged and stretch[0] - merged[-1][1] <= 5:
            merged[-1][1] = stretch[1]
        else:
            merged.append(stretch)
    if not merged:
        result.append({"tone": tone, "start": None, "end": None, "gaps": [], "p10": 0, "p90": 0, "blips": []})
        continue
    first, end = max(merged, key=lambda m: m[1] - m[0])
    run = levels[first:end]
    half = np.median(run) / 2
    # Not its first and last windows: a tone's edges fill them only in part.
    gaps = [round((first + i) * window / rate, 3) for i in np.nonzero(run < half)[0] if 0 < i < len(run) - 1]
    blips = [round(i * window / rate, 3) for i in np.nonzero(loud)[0] if not first <= i < end]
    result.append({"tone": tone, "start": first * window / rate, "end": end * window / rate, "gaps": gaps,
                   "p10": float(np.percentile(run, 10)), "p90": float(np.percentile(run, 90)), "blips": blips})
print(json.dumps(result))
