#!/usr/bin/env python3
"""Where announce spends its time, next to the reference players (part of `make bench`).

    profile.py ANNOUNCE_BIN CACHE_DIR > profile.md

Uses whatever of these is installed, skipping the rest with a note:
  callgrind  user-space instruction counts (all threads) on the 0.1-second and 1-minute
             files: totals, startup (the 0.1 s clip) vs per-minute cost, the announce
             functions and libraries with the most instructions;
  perf       cycles sampled in user space and the kernel on the 60-minute MP3 and the
             10-minute WAV (where system time and thread hand-offs show);
  strace     system-call counts on the same long files.
Standard library only. Prints Markdown for BENCHMARKS.md.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = 12


def demangle(names):
    """Swift names, simplified, through swift-demangle when it is around."""
    names = list(names)
    tool = shutil.which("swift-demangle")
    if not tool and shutil.which("swift"):
        cand = os.path.join(os.path.dirname(os.path.realpath(shutil.which("swift"))), "swift-demangle")
        tool = cand if os.path.exists(cand) else None
    if not tool or not names:
        return {n: n for n in names}
    joined = "\n".join(n.replace("\n", " ") for n in names) + "\n"
    try:
        out = subprocess.run([tool, "--simplified"], input=joined, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def short(name, width=110):
    name = re.sub(r"\s+", " ", name)
    return name if len(name) <= width else name[:width - 1] + "…"


def md(text):
    return text.replace("|", "\\|").replace("`", "'")


# --------------------------------------------------------------------------------------
# callgrind

def parse_callgrind(path):
    """Self instruction counts per (object, file, function), and the total."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    kind_of = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
               "cfl": "fl", "fn": "fn", "cfn": "fn"}
    cur = {"ob": "?", "fl": "?", "fn": "?"}
    fn_file = "?"
    self_cost = collections.Counter()
    total = 0
    skip_next = False
    line_re = re.compile(r"^([a-z]+)=(?:\((\d+)\))?\s*(.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                if len(parts) > 1:
                    self_cost[(cur["ob"], fn_file, cur["fn"])] += int(parts[1])
                continue
            m = line_re.match(line)
            if not m:
                if line.startswith("totals:") or line.startswith("summary:"):
                    total = max(total, int(line.split()[1]))
                continue
            key, ident, name = m.groups()
            if key == "calls":
                skip_next = True
                continue
            if key not in kind_of:
                continue
            table = names[kind_of[key]]
            if ident is not None:
                if name:
                    table[ident] = name
                value = table.get(ident, name or "?")
            else:
                value = name
            if key in ("ob", "fl", "fn"):
                cur[key] = value
                if key == "fl":
                    fn_file = value
                if key == "fn":
                    fn_file = cur["fl"]
    if total == 0:
        total = sum(self_cost.values())
    return self_cost, total


def callgrind(argv, outdir, label):
    out = os.path.join(outdir, f"{label}.callgrind")
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"callgrind failed on {' '.join(argv)}: {r.stderr[-500:]}")
    return parse_callgrind(out)


def group_of(obj, file, fn, announce_bin):
    base = os.path.basename(obj)
    if os.path.realpath(obj) == os.path.realpath(announce_bin) or base == os.path.basename(announce_bin):
        if "/Sources/" in file:
            return "announce's own code (Sources/)"
        if "swift-argument-parser" in file or "swift-log" in file or "/checkouts/" in file:
            return "announce: package dependencies"
        return "announce: Swift runtime + stdlib (static)"
    m = re.match(r"(lib[^.]+|ld-linux[^.]*)", base)
    return m.group(1) if m else base


def mi(x):
    return f"{x / 1e6:,.1f} M"


def section_callgrind(bin_, cache, tmp):
    w = []
    if not shutil.which("valgrind"):
        return ["### Instructions (callgrind)", "", "Skipped: valgrind is not installed.", ""]
    play = [bin_, "play", "-q", "-d", "null"]
    # The first player after announce is the reference; more are extra columns. announce
    # asks libmpg123 for float samples, so mpg123 -e f32 (float output too) is shown as well.
    runs = {
        "mp3": [("announce", play), ("mpg123", ["mpg123", "-q", "-o", "alsa", "-a", "null"]),
                ("mpg123 -e f32", ["mpg123", "-e", "f32", "-q", "-o", "alsa", "-a", "null"])],
        "wav": [("announce", play), ("aplay", ["aplay", "-q", "-D", "null"])],
    }
    results = {}
    for kind, players in runs.items():
        for size in ("0.1s", "1min"):
            path = os.path.join(cache, f"{kind}-{size}.{kind}")
            for player, argv in players:
                label = re.sub(r"\W+", "_", f"{player}-{kind}-{size}")
                results[(kind, size, player)] = callgrind(argv + [path], tmp, label)

    def total(kind, size, player):
        return results[(kind, size, player)][1]

    w.append("### Instructions (callgrind, user space, all threads)")
    w.append("")
    w.append("Instructions executed (Ir), deterministic from run to run. The 0.1 s clip is almost")
    w.append("all start-up and shut-down; 1 min − 0.1 s is the cost of decoding and writing one")
    w.append("minute of audio. Kernel time (system calls, thread wake-ups) is not in these counts:")
    w.append("see perf and strace below. `mpg123 -e f32` decodes to float samples, as announce does.")
    w.append("")
    w.append("| file | announce | other player | announce ÷ other |")
    w.append("|---|---:|---:|---:|")
    for kind, players in runs.items():
        for other, _ in players[1:]:
            a0, r0 = total(kind, "0.1s", "announce"), total(kind, "0.1s", other)
            a1, r1 = total(kind, "1min", "announce"), total(kind, "1min", other)
            w.append(f"| {kind}-0.1s (start-up) | {mi(a0)} | {other}: {mi(r0)} | {a0 / r0:.2f}× |")
            w.append(f"| {kind}-1min | {mi(a1)} | {other}: {mi(r1)} | {a1 / r1:.2f}× |")
            w.append(f"| {kind}: one minute of audio (1min − 0.1s) | {mi(a1 - a0)} | {other}: {mi(r1 - r0)} | "
                     f"{(a1 - a0) / max(1, r1 - r0):.2f}× |")
    w.append("")

    for kind, players in runs.items():
        names_p = [p for p, _ in players]
        data = {p: results[(kind, "1min", p)] for p in names_p}
        atotal = data["announce"][1]
        # By library.
        groups = {p: collections.Counter() for p in names_p}
        for p in names_p:
            for (obj, file, fn), c in data[p][0].items():
                groups[p][group_of(obj, file, fn, bin_)] += c
        w.append(f"#### {kind}-1min: instructions by library")
        w.append("")
        w.append("| library | " + " | ".join(f"{p} | %" for p in names_p) + " |")
        w.append("|---|" + "---:|---:|" * len(names_p))
        allg = set().union(*groups.values())
        for g in sorted(allg, key=lambda g: -sum(groups[p][g] for p in names_p)):
            if max(groups[p][g] for p in names_p) < 0.003 * atotal:
                continue
            w.append(f"| {md(g)} | " + " | ".join(
                f"{mi(groups[p][g])} | {100 * groups[p][g] / data[p][1]:.1f}%" for p in names_p) + " |")
        w.append("")
        # Top functions of announce, with the other players' counts for the same function.
        by_fn = {p: collections.Counter() for p in names_p}
        for p in names_p:
            for (obj, file, fn), c in data[p][0].items():
                by_fn[p][(os.path.basename(obj), fn)] += c
        top = by_fn["announce"].most_common(TOP)
        names = demangle(fn for (_, fn), _ in top)
        others = names_p[1:]
        w.append(f"#### {kind}-1min: announce's top {TOP} functions (self instructions)")
        w.append("")
        w.append("| function | object | announce Ir | % of announce | " +
                 " | ".join(f"{p} Ir" for p in others) + " |")
        w.append("|---|---|---:|---:|" + "---:|" * len(others))
        for key, c in top:
            obj, fn = key
            cols = " | ".join(mi(by_fn[p][key]) if by_fn[p][key] else "—" for p in others)
            w.append(f"| `{md(short(names[fn]))}` | {md(obj)} | {mi(c)} | {100 * c / atotal:.1f}% | {cols} |")
        w.append("")
        if kind == "mp3":
            w.append("libmpg123 is stripped, so its functions show as addresses; the same address is the")
            w.append("same function in every player.")
            w.append("")
    return w


# --------------------------------------------------------------------------------------
# perf

def perf_ok(tmp):
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "record", "-q", "-o", os.path.join(tmp, "probe.data"), "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode == 0


def max_rate():
    try:
        return max(1000, min(20000, int(open("/proc/sys/kernel/perf_event_max_sample_rate").read()) - 250))
    except (OSError, ValueError):
        return 4000


def perf_profile(argv, tmp, label, freq):
    data = os.path.join(tmp, f"{label}.perf")
    r = subprocess.run(["perf", "record", "-q", "-F", str(freq), "-o", data] + argv,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perf record failed: {r.stderr[-300:]}")

    def report(sort):
        out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "--stdio"],
                             capture_output=True, text=True).stdout
        rows = []
        for line in out.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"\s*([\d.]+)%\s+(.*)$", line)
            if m:
                rows.append((float(m.group(1)), m.group(2).strip()))
        return rows
    return report("dso"), report("dso,sym")


def section_perf(bin_, cache, tmp):
    w = ["### Cycles, user and kernel (perf, long files)", ""]
    if not perf_ok(tmp):
        return w + ["Skipped: perf is missing or not permitted here.", ""]
    w.append("Sampled CPU time of every thread, kernel included. `[kernel.kallsyms]` is system")
    w.append("time: reads, futex wake-ups between the decode and playback threads, scheduling.")
    w.append("Percentages are of each player's own samples (its CPU time is in the tables above).")
    w.append("")
    # Sampling rates: ~6,000 samples for the 3-second MP3 runs, as many as perf allows
    # (perf_event_max_sample_rate, often 10 kHz) for the WAV runs that last ~20 ms.
    cases = [("mp3-60min.mp3", 2000, [("announce", [bin_, "play", "-q", "-d", "null"]),
                                ("mpg123", ["mpg123", "-q", "-o", "alsa", "-a", "null"])]),
             ("wav-10min.wav", max_rate(), [("announce", [bin_, "play", "-q", "-d", "null"]),
                                            ("aplay", ["aplay", "-q", "-D", "null"])])]
    for file, freq, players in cases:
        path = os.path.join(cache, file)
        res = {p: perf_profile(argv + [path], tmp, f"{p}-{file}", freq) for p, argv in players}
        ref = players[1][0]
        w.append(f"#### {file}: share of samples by object")
        w.append("")
        w.append(f"| object | announce | {ref} |")
        w.append("|---|---:|---:|")
        a = dict((name, pct) for pct, name in res["announce"][0])
        r = dict((name, pct) for pct, name in res[ref][0])
        for name in sorted(set(a) | set(r), key=lambda n: -(a.get(n, 0) + r.get(n, 0))):
            if max(a.get(name, 0), r.get(name, 0)) >= 0.3:
                w.append(f"| {md(name)} | {a.get(name, 0):.1f}% | {r.get(name, 0):.1f}% |")
        w.append("")
        for p in ("announce", ref):
            agg = collections.Counter()
            for pct, rest in res[p][1]:
                parts = rest.split(None, 2)  # dso, [k]/[.], symbol
                dso, sym = parts[0], (parts[2] if len(parts) > 2 else rest)
                if re.fullmatch(r"0x[0-9a-f]+", sym):
                    sym = "(stripped: no symbols)"
                agg[(dso, sym)] += pct
            rows = agg.most_common(TOP)
            names = demangle(sym for (_, sym), _ in rows)
            w.append(f"#### {file}: {p}'s top symbols")
            w.append("")
            w.append("| % of samples | object | symbol |")
            w.append("|---:|---|---|")
            for (dso, sym), pct in rows:
                w.append(f"| {pct:.1f}% | {md(dso)} | `{md(short(names[sym]))}` |")
            w.append("")
    return w


# --------------------------------------------------------------------------------------
# strace

def strace_counts(argv, tmp, label):
    out = os.path.join(tmp, f"{label}.strace")
    subprocess.run(["strace", "-f", "-c", "-o", out] + argv, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    counts = {}
    for line in open(out):
        parts = line.split()
        if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1] != "total":
            counts[parts[-1]] = int(parts[3])
    return counts


def section_strace(bin_, cache, tmp):
    w = ["### System calls (strace -f -c)", ""]
    if not shutil.which("strace"):
        return w + ["Skipped: strace is not installed.", ""]
    w.append("Calls made by every thread (strace slows the run; only the counts matter here).")
    w.append("")
    cases = [("mp3-1min.mp3", "mpg123", [bin_, "play", "-q", "-d", "null"], ["mpg123", "-q", "-o", "alsa", "-a", "null"]),
             ("wav-10min.wav", "aplay", [bin_, "play", "-q", "-d", "null"], ["aplay", "-q", "-D", "null"])]
    for file, ref, a_argv, r_argv in cases:
        path = os.path.join(cache, file)
        try:
            a = strace_counts(a_argv + [path], tmp, f"a-{file}")
            r = strace_counts(r_argv + [path], tmp, f"r-{file}")
        except (subprocess.CalledProcessError, OSError) as e:
            w += [f"{file}: strace failed ({e}).", ""]
            continue
        w.append(f"#### {file}")
        w.append("")
        w.append(f"| system call | announce | {ref} |")
        w.append("|---|---:|---:|")
        for name in sorted(set(a) | set(r), key=lambda n: -(a.get(n, 0) + r.get(n, 0)))[:8]:
            w.append(f"| {name} | {a.get(name, 0):,} | {r.get(name, 0):,} |")
        w.append(f"| all | {sum(a.values()):,} | {sum(r.values()):,} |")
        w.append("")
    return w


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: profile.py ANNOUNCE_BIN CACHE_DIR")
    bin_, cache = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    w = ["## Where the time goes (profile)", "",
         "Made by `scripts/bench/profile.py` in the same `make bench` run (`BENCH_PROFILE=0` skips it).", ""]
    with tempfile.TemporaryDirectory(prefix="announce-profile-") as tmp:
        for section in (section_callgrind, section_perf, section_strace):
            try:
                w += section(bin_, cache, tmp)
            except Exception as e:  # a profiler failing must not lose the benchmark
                w += [f"({section.__name__[8:]} failed: {md(str(e))[:300]})", ""]
    print("\n".join(w))


if __name__ == "__main__":
    main()
