#!/usr/bin/python3
"""The order and length of tones in a raw recording, measured with numpy (not announce's reader).

    tone-sequence.py FILE.s16 RATE CHANNELS FREQUENCY...

FILE is raw signed 16-bit little-endian (parec --raw). The first channel is cut in 10 ms windows;
each window is the FREQUENCY whose Hann-windowed DFT magnitude (as a sine's amplitude) is above
0.05 and largest, or silence. Prints a JSON list of [frequency, seconds] for each run of equal
windows, silences of up to 30 ms inside a tone counted in it and longer ones left out.
"""
import json
import sys

import numpy as np

path, rate, channels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tones = [float(f) for f in sys.argv[4:]]
samples = np.fromfile(path, dtype="<i2").astype(np.float64) / 32768
samples = samples[: len(samples) // channels * channels].reshape(-1, channels)[:, 0]
window = rate // 100
count = len(samples) // window
frames = samples[: count * window].reshape(count, window)
hann = np.hanning(window)
times = np.arange(window) / rate
levels = np.array([np.abs(frames @ (np.exp(-2j * np.pi * tone * times) * hann)) * 2 / hann.sum() for tone in tones])
labels = [tones[int(np.argmax(column))] if column.max() > 0.05 else None for column in levels.T]
runs = []
for label in labels:
    if runs and runs[-1][0] == label:
        runs[-1][1] += 1
    else:
        runs.append([label, 1])
# Short silences inside a tone belong to it; longer ones are dropped.
merged = []
for label, length in runs:
    if label is None and length <= 3:
        if merged:
            merged[-1][1] += length
        continue
    if label is None:
        continue
    if merged and merged[-1][0] == label:
        merged[-1][1] += length
    else:
        merged.append([label, length])
print(json.dumps([[label, round(length / 100, 2)] for label, length in merged]))
