"""What bench.py's sections share (Bench): the binary, the counts, the results being filled,
the clean-ups to run at the end; and the inputs, generated once into .bench-cache/."""
import array
import math
import os
import subprocess
import time
import wave

from .config import CACHE, log

FILES = ["wav-0.1s.wav", "mp3-0.1s.mp3", "wav-1s.wav", "wav-1min.wav", "mp3-1min.mp3", "wav-10min.wav",
         "wav-60min.wav", "mp3-60min.mp3"]
INPUTS_GEN = "2"


class Bench:
    """The run's state. Each section is a function of it (sections/) that stores its raw
    figures in res[SECTION]; report.py turns them into rows."""

    def __init__(self, binary, n, res):
        self.bin, self.n, self.res = binary, n, res
        self.cleanups = []
        self.dur = {}
        self.paced, self.pulse_pid = False, None  # servers.paced_env: not tried yet

    def path(self, name):
        return os.path.join(CACHE, name)

    # Inputs: one minute of synthesized music-like stereo (a plucked melody, a bass line, a pad
    # with vibrato, noise), as 128 kbit/s CBR MP3 (libmp3lame) and 16-bit WAV, 44.1 kHz.

    def inputs(self):
        ok = open(self.path("inputs.gen")).read().strip() == INPUTS_GEN if os.path.exists(self.path("inputs.gen")) else False
        if not ok or not all(os.path.getsize(self.path(f)) if os.path.exists(self.path(f)) else 0 for f in FILES):
            t0 = time.perf_counter()
            log("generating inputs in .bench-cache (once, about a minute)...")
            note, bass = "pow(2,mod(floor(t*4)*7,12)/12)", "pow(2,mod(floor(t/2)*5,12)/12)"
            mel = f"0.25*exp(-4*mod(t,0.25))*(sin(2*PI*t*440*{note})+0.4*sin(4*PI*t*440*{note}))"
            low = f"0.2*(sin(2*PI*t*55*{bass})+0.3*sin(6*PI*t*55*{bass}))"
            pad = "0.12*sin(2*PI*t*330*(1+0.003*sin(2*PI*5*t)))*(0.6+0.4*sin(2*PI*0.1*t))"
            left, right = f"{mel}*0.8+{low}+{pad}+0.05*(2*random(0)-1)", f"{mel}*0.5+{low}+{pad}*0.7+0.05*(2*random(1)-1)"
            ff = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
            exact = ["-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"]
            mp3, wav = ["-c:a", "libmp3lame", "-b:a", "128k", "-ar", "44100", "-ac", "2"], ["-c:a", "pcm_s16le", "-ar", "44100", "-ac", "2"]
            src = self.path("source.wav")
            subprocess.run(ff + ["-f", "lavfi", "-i", f"aevalsrc=exprs='{left}|{right}':s=44100:d=60"] + wav + exact + [src], check=True)
            long = subprocess.Popen(ff + ["-stream_loop", "59", "-i", src] + mp3 + exact + [self.path("mp3-60min.mp3")])
            for name, pre, post in [("mp3-1min.mp3", [], mp3), ("mp3-0.1s.mp3", [], ["-t", "0.1"] + mp3),
                                    ("wav-1min.wav", [], wav), ("wav-0.1s.wav", [], ["-t", "0.1"] + wav),
                                    ("wav-1s.wav", [], ["-t", "1"] + wav), ("wav-10min.wav", ["-stream_loop", "9"], wav),
                                    ("wav-60min.wav", ["-stream_loop", "59"], wav)]:
                subprocess.run(ff + pre + ["-i", src] + post + exact + [self.path(name)], check=True)
            if long.wait() != 0:
                raise RuntimeError("ffmpeg failed on mp3-60min.mp3")
            os.remove(src)
            open(self.path("inputs.gen"), "w").write(INPUTS_GEN)
            log(f"inputs generated in {time.perf_counter() - t0:.0f} s")
        for f in FILES:
            self.dur[f] = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of",
                                                "csv=p=0", self.path(f)], capture_output=True, text=True).stdout)
        # wav-0.05s.wav: the preempting clip, the first 0.05 s of wav-0.1s.wav.
        if not os.path.exists(self.path("wav-0.05s.wav")):
            with wave.open(self.path("wav-0.1s.wav")) as src:
                params, frames = src.getparams(), src.readframes(2205)
            with wave.open(self.path("wav-0.05s.wav"), "wb") as dst:
                dst.setparams(params)
                dst.writeframes(frames)


def write_tone(path, rate, seconds, freq, amplitude=0.1, fade=0.01):
    """A 16-bit stereo WAV of a sine (right channel a fifth higher), made once per path."""
    if os.path.exists(path):
        return path
    n = int(round(rate * seconds))
    periodic = fade == 0 and float(freq).is_integer() and float(freq * 1.5).is_integer()
    m, ramp, full = (min(n, rate) if periodic else n), max(1, int(rate * fade)), 32767 * amplitude
    pcm = array.array("h", bytes(4 * m))
    for i in range(m):
        g = full if fade == 0 else full * min(1.0, i / ramp, (n - 1 - i) / ramp)
        pcm[2 * i] = int(g * math.sin(2 * math.pi * freq * i / rate))
        pcm[2 * i + 1] = int(g * math.sin(2 * math.pi * freq * 1.5 * i / rate))
    one = pcm.tobytes()
    with wave.open(path + ".tmp", "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(one * (n // m) + one[:4 * (n % m)])
    os.replace(path + ".tmp", path)
    return path
