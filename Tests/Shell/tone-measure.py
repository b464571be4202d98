#!/usr/bin/python3
"""Measures a WAV capture with numpy, for the end-to-end tests (not announce's own reader).

    tone-measure.py FILE.wav

Prints one JSON object: rate, channels, seconds (the frames over the rate) and, per channel,
the frequency of its strongest sine (Hann-windowed FFT of the middle 80%, the peak refined
by parabolic interpolation of the log magnitudes).
"""
import json
import sys
import wave

import numpy as np

with wave.open(sys.argv[1]) as capture:
    rate, channels, width = capture.getframerate(), capture.getnchannels(), capture.getsampwidth()
    frames = capture.readframes(capture.getnframes())
kinds = {1: np.uint8, 2: np.int16, 4: np.int32}
if width == 3:
    raw = np.frombuffer(frames, dtype=np.uint8).reshape(-1, 3)
    samples = (raw[:, 0].astype(np.int32) | raw[:, 1].astype(np.int32) << 8 | raw[:, 2].astype(np.int8).astype(np.int32) << 16)
else:
    samples = np.frombuffer(frames, dtype=kinds[width]).astype(np.float64)
samples = np.asarray(samples, dtype=np.float64).reshape(-1, channels)
count = samples.shape[0]
middle = samples[count // 10: count - count // 10]


def frequency(signal):
    if len(signal) < 16:
        return 0.0
    spectrum = np.abs(np.fft.rfft((signal - signal.mean()) * np.hanning(len(signal)))) + 1e-12
    peak = int(np.argmax(spectrum[1:-1])) + 1
    a, b, c = np.log(spectrum[peak - 1: peak + 2])
    offset = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c != 0 else 0.0
    return (peak + offset) * rate / len(signal)


print(json.dumps({
    "rate": rate,
    "channels": channels,
    "seconds": count / rate,
    "frequencies": [frequency(middle[:, channel]) for channel in range(channels)],
}))
