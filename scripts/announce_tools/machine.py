"""Set-up and the run's circumstances: the ALSA configuration every player reads, the machine
and tools, and what else ran meanwhile (Load)."""
import os
import platform
import resource
import subprocess
import tempfile
import threading
import time

from .config import CACHE, ROOT, SWIFT


def pin_alsa():
    """Every player reads alsa.conf without its conf.d / asound.conf / asoundrc hooks, so plugins
    installed on the machine (e.g. PulseAudio's, which loads libpulse into every ALSA client) do
    not move the figures. BENCH_ALSA_CONFIG=system keeps the machine's."""
    hooks = len([f for f in os.listdir("/etc/alsa/conf.d") if f.endswith(".conf")]) if os.path.isdir("/etc/alsa/conf.d") else 0
    if os.environ.get("BENCH_ALSA_CONFIG") == "system":
        return f"the machine's ({hooks} files in /etc/alsa/conf.d)"
    src = open("/usr/share/alsa/alsa.conf").read()
    i = src.find("\n@hooks [")
    j = src.find("\n]\n", i) if i >= 0 else -1
    if i >= 0 and j >= 0:
        src = src[:i] + "\n# scripts/bench.py: conf.d / asound.conf / asoundrc hooks removed\n" + src[j + 3:]
    open(os.path.join(CACHE, "alsa.conf"), "w").write(src)
    os.environ["ALSA_CONFIG_PATH"] = os.path.join(CACHE, "alsa.conf")
    return (f"pinned: /usr/share/alsa/alsa.conf without its conf.d/asoundrc hooks (BENCH_ALSA_CONFIG=system "
            f"uses the machine's; this machine has {hooks} files in /etc/alsa/conf.d)")


def first_line(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        return "?"


def machine(binary, alsa):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                      capture_output=True, text=True).stdout.strip():
        commit += " + uncommitted changes in Sources/ or Package.swift"
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["strip", "-o", f"{d}/s", binary], check=True)
        stripped = os.path.getsize(f"{d}/s")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    osname = next((line.split("=", 1)[1].strip().strip('"') for line in open("/etc/os-release")
                   if line.startswith("PRETTY_NAME=")), "?")
    return {"commit": commit or "unknown", "binary_bytes": os.path.getsize(binary), "stripped_bytes": stripped,
            "cpu": cpu, "cores": os.cpu_count(), "memory": f"{mem / 1048576:.1f} GiB", "kernel": platform.release(),
            "os": osname, "swift": first_line([SWIFT, "--version"]), "mpg123": first_line(["mpg123", "--version"]),
            "aplay": first_line(["aplay", "--version"]), "sox": first_line(["sox", "--version"]), "alsa config": alsa}


class Load:
    """What else ran during the bench: the machine's busy time (/proc/stat) against this
    process's and its children's, and other builds (swift-frontend processes) seen, every 5 s."""

    def __init__(self):
        self.t0, self.busy0, self.own0 = time.time(), self.busy(), self.own()
        self.samples, self.stop, self.own_build = [], threading.Event(), False
        threading.Thread(target=self.sample, daemon=True).start()

    @staticmethod
    def busy():
        v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def own():
        a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

    def sample(self):
        while not self.stop.wait(5):
            n = 0
            for pid in filter(str.isdigit, [] if self.own_build else os.listdir("/proc")):
                try:
                    n += open(f"/proc/{pid}/comm").read().strip() in ("swift-frontend", "swift-build", "swiftc")
                except OSError:
                    pass
            self.samples.append((float(open("/proc/loadavg").read().split()[0]), n))

    def result(self):
        self.stop.set()
        wall = time.time() - self.t0
        busy, own = self.busy() - self.busy0, self.own() - self.own0
        return {"seconds": wall, "busy_cores": busy / wall, "own_cores": own / wall,
                "others_cores": max(0.0, busy - own) / wall,
                "builds_seen": sum(1 for _, n in self.samples if n), "samples": len(self.samples),
                "max_frontends": max((n for _, n in self.samples), default=0),
                "load_max": max((x for x, _ in self.samples), default=0.0)}
