#!/usr/bin/env python3
"""Measure players for `make bench` (Python standard library only).

    measure.py run --case NAME --file PATH [--runs N] [--warmup N] --out RESULTS.jsonl \
        --player LABEL 'COMMAND ...' [--player LABEL 'COMMAND ...' ...]
    measure.py report RESULTS.jsonl --machine MACHINE.json --markdown BENCHMARKS.md

`run` executes every player's command once unmeasured per --warmup, then --runs rounds,
interleaving the players inside each round (so drift such as CPU frequency or another
process on the machine touches all of them alike), and appends one JSON line per player
with every run and the medians.

Per run, for the child process and all of its threads:
  cpu       user + system CPU seconds, from wait4()'s rusage
  wall      seconds from fork to reaped, time.perf_counter()
  peak_rss  the child's VmHWM (peak resident set, KiB) read from /proc/PID/status at the
            moment it exits: the child runs under ptrace with PTRACE_O_TRACEEXIT, which
            stops it once on exit (after the last instruction, before its memory is freed).
  anon_kib, file_kib
            RssAnon and RssFile at that moment: heap/stacks vs mapped code and data files.
  ctxsw     voluntary + involuntary context switches (wait4 rusage)
  ru_maxrss wait4()'s ru_maxrss, also recorded but NOT used: Linux keeps the largest RSS of
            the process before exec(), i.e. this Python interpreter (~10-14 MB), so every
            small player would read the same ~14 MB floor.
If ptrace is refused (some containers), peak_rss falls back to ru_maxrss and the record
says so ("rss_method").

`report` renders the tables (stdout) and BENCHMARKS.md from the JSON lines.
"""
import argparse
import ctypes
import json
import os
import re
import shlex
import signal
import statistics
import sys
import tempfile
import time

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SETOPTIONS = 0x4200
PTRACE_O_TRACEEXIT = 0x40
PTRACE_O_EXITKILL = 0x100000
PTRACE_EVENT_EXIT = 6

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


def _ptrace(request, pid, data=0):
    return _libc.ptrace(request, pid, None, ctypes.c_void_p(data))


def _memory_kib(pid):
    """VmHWM (peak RSS) and the RssAnon / RssFile split, from /proc/PID/status."""
    found = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmHWM", "RssAnon", "RssFile"):
                    found[key] = int(line.split()[1])
    except OSError:
        pass
    return found


_ptrace_works = None


def ptrace_available():
    """Whether a traced child can be stopped at exit here (probed once with /bin/true)."""
    global _ptrace_works
    if _ptrace_works is None:
        try:
            rec = run_once(["true"], trace=True)
            _ptrace_works = rec["exit"] == 0 and rec["peak_rss_kib"] is not None
        except Exception:
            _ptrace_works = False
    return _ptrace_works


def run_once(argv, trace=True):
    """Fork, exec argv with stdin/stdout on /dev/null, and measure it."""
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.dup2(err.fileno(), 2)
            if trace and _ptrace(PTRACE_TRACEME, 0) != 0:
                os._exit(126)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    mem = {}
    traced = False
    while True:
        _, status, ru = os.wait4(pid, 0)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            t1 = time.perf_counter()
            break
        if not os.WIFSTOPPED(status):
            continue
        sig = os.WSTOPSIG(status)
        event = status >> 16
        if not traced and sig == signal.SIGTRAP and event == 0:
            # The stop after a successful exec: ask for a stop at exit too.
            _ptrace(PTRACE_SETOPTIONS, pid, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
            traced = True
            _ptrace(PTRACE_CONT, pid, 0)
        elif sig == signal.SIGTRAP and event == PTRACE_EVENT_EXIT:
            mem = _memory_kib(pid)
            _ptrace(PTRACE_CONT, pid, 0)
        else:
            _ptrace(PTRACE_CONT, pid, sig)  # deliver the signal the child was stopped for
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    err.close()
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return {
        "exit": code,
        "user": ru.ru_utime,
        "sys": ru.ru_stime,
        "cpu": ru.ru_utime + ru.ru_stime,
        "wall": t1 - t0,
        "peak_rss_kib": mem.get("VmHWM"),
        "anon_kib": mem.get("RssAnon"),
        "file_kib": mem.get("RssFile"),
        "ru_maxrss_kib": ru.ru_maxrss,
        "ctxsw": ru.ru_nvcsw + ru.ru_nivcsw,
        "stderr": stderr[-2000:],
    }


def cmd_run(args):
    players = [(label, shlex.split(cmd)) for label, cmd in args.player]
    trace = ptrace_available()
    rounds = {label: [] for label, _ in players}
    for i in range(args.warmup + args.runs):
        for label, argv in players:
            rec = run_once(argv, trace=trace)
            if rec["exit"] != 0:
                sys.exit(f"measure.py: {label} on {args.case} exited {rec['exit']}: "
                         f"{shlex.join(argv)}\n{rec['stderr']}")
            if i >= args.warmup:
                rounds[label].append(rec)
    size = os.path.getsize(args.file) if args.file else None
    with open(args.out, "a") as out:
        for label, argv in players:
            runs = rounds[label]
            if not trace:
                for r in runs:
                    r["peak_rss_kib"] = r["ru_maxrss_kib"]
                    r["anon_kib"] = r["file_kib"] = 0
            summary = {
                "case": args.case,
                "file": args.file,
                "bytes": size,
                "seconds": args.seconds,
                "player": label,
                "command": shlex.join(argv),
                "runs": len(runs),
                "rss_method": "VmHWM at exit (ptrace)" if trace else "ru_maxrss (floored by Python)",
                "median": {k: statistics.median(r[k] for r in runs)
                           for k in ("cpu", "user", "sys", "wall", "peak_rss_kib", "anon_kib", "file_kib",
                                     "ctxsw")},
                "min": {k: min(r[k] for r in runs) for k in ("cpu", "wall", "peak_rss_kib")},
                "max": {k: max(r[k] for r in runs) for k in ("cpu", "wall", "peak_rss_kib")},
                "all": [{k: r[k] for k in ("cpu", "user", "sys", "wall", "peak_rss_kib", "anon_kib", "file_kib",
                                          "ru_maxrss_kib", "ctxsw")}
                        for r in runs],
            }
            out.write(json.dumps(summary) + "\n")
            m = summary["median"]
            print(f"  {args.case:<12} {label:<10} cpu {m['cpu']:8.3f} s  wall {m['wall']:8.3f} s  "
                  f"peak RSS {m['peak_rss_kib'] / 1024:6.1f} MiB  (median of {len(runs)})", flush=True)


# ---------------------------------------------------------------------------------------
# report

# The issue's targets. "20 MB" is checked as 20 × 10^6 bytes of VmHWM; "the same for a 1-minute and a
# 60-minute file" as at most 2 MiB more peak RSS on the long file than on the short one.
MP3_CPU_VS_MPG123 = 1.05
WAV_CPU_VS_APLAY = 1.2
RSS_MB = 20.0  # 20 × 10^6 bytes
RSS_GROWTH_MIB = 2.0
REFERENCE = {"mp3": "mpg123", "wav": "aplay"}
CASE_ORDER = ["mp3-60min", "mp3-1min", "mp3-0.1s", "wav-10min", "wav-1min", "wav-0.1s"]


def _mib(kib):
    return kib / 1024


def _ratio_text(x):
    return "—" if x is None else f"{x:.2f}×"


def _duration_text(secs):
    if secs is None:
        return "?"
    secs = float(secs)
    return f"{secs:.2f} s" if secs < 60 else f"{secs / 60:.1f} min"


def cmd_report(args):
    recs = [json.loads(line) for line in open(args.results) if line.strip()]
    machine = json.load(open(args.machine)) if args.machine else {}
    by = {}
    for r in recs:
        by.setdefault(r["case"], {})[r["player"]] = r
    cases = [c for c in CASE_ORDER if c in by] + [c for c in by if c not in CASE_ORDER]

    def med(case, player, key):
        r = by.get(case, {}).get(player)
        return None if r is None else r["median"][key]

    def ratio(case, a, b, key):
        x, y = med(case, a, key), med(case, b, key)
        return None if x is None or y is None or y == 0 else x / y

    # Verdicts
    verdicts = []

    def paired(case, a, b, key):
        """announce/reference per round: runs of one round ran back to back, so drift cancels."""
        ra, rb = by.get(case, {}).get(a), by.get(case, {}).get(b)
        if ra is None or rb is None:
            return None
        return [x[key] / y[key] for x, y in zip(ra["all"], rb["all"]) if y[key] > 0] or None

    def cpu_target(case, ref, limit, note=""):
        pr = paired(case, "announce", ref, "cpu")
        name = f"{case.split('-')[0].upper()} CPU ≤ {limit:g}× {ref} ({case}{note})"
        if pr is None:
            verdicts.append((name, "SKIP", "not measured"))
            return
        r = statistics.median(pr)
        verdicts.append((name, "PASS" if r <= limit else "FAIL",
                         f"{r:.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {med(case, 'announce', 'cpu'):.3f} s "
                         f"vs {med(case, ref, 'cpu'):.3f} s)"))

    cpu_target("mp3-60min", "mpg123", MP3_CPU_VS_MPG123)
    cpu_target("mp3-1min", "mpg123", MP3_CPU_VS_MPG123, ", informative")
    cpu_target("wav-10min", "aplay", WAV_CPU_VS_APLAY)
    cpu_target("wav-1min", "aplay", WAV_CPU_VS_APLAY, ", informative")
    for case in ("mp3-1min", "mp3-60min", "wav-1min", "wav-10min"):
        kib = med(case, "announce", "peak_rss_kib")
        name = f"announce peak RSS ≤ {RSS_MB:g} MB ({case})"
        if kib is None:
            verdicts.append((name, "SKIP", "not measured"))
        else:
            mb = kib * 1024 / 1e6
            verdicts.append((name, "PASS" if mb <= RSS_MB else "FAIL", f"{mb:.1f} MB ({_mib(kib):.1f} MiB)"))
    for short_, long_ in (("mp3-1min", "mp3-60min"), ("wav-1min", "wav-10min")):
        a, b = med(short_, "announce", "peak_rss_kib"), med(long_, "announce", "peak_rss_kib")
        name = f"peak RSS does not grow with length ({short_} → {long_}: ≤ +{RSS_GROWTH_MIB:g} MiB)"
        if a is None or b is None:
            verdicts.append((name, "SKIP", "not measured"))
        else:
            growth = _mib(b - a)
            verdicts.append((name, "PASS" if growth <= RSS_GROWTH_MIB else "FAIL",
                             f"{_mib(a):.1f} → {_mib(b):.1f} MiB ({growth:+.1f} MiB)"))

    lines = []
    w = lines.append
    w("# Benchmarks")
    w("")
    w("Written by `make bench` (`scripts/bench.sh`); regenerate it rather than editing it.")
    w("announce, mpg123, aplay and sox play the same files to ALSA's `null` device in the same")
    w("run; announce is given as a ratio of each of them.")
    w("")
    w("## Machine and build")
    w("")
    for k in ("date", "commit", "binary", "cpu", "cores", "memory", "kernel", "os",
              "swift", "mpg123", "aplay", "sox", "alsa-lib", "alsa config", "inputs"):
        if k in machine:
            w(f"- **{k}**: {machine[k]}")
    w("")
    w("## Targets")
    w("")
    w("From the issue: MP3 CPU ≤ 1.05× mpg123 and WAV CPU ≤ 1.2× aplay (CPU = user + system),")
    w("peak RSS ≤ 20 MB, and the same for a 1-minute and a 60-minute file.")
    w("")
    w("CPU targets are judged on the median of the per-round ratios (announce's run over the")
    w("reference's run right after it, so machine drift cancels); the range over rounds follows.")
    w("")
    w("| target | result | figures |")
    w("|---|---|---|")
    for name, v, shown in verdicts:
        w(f"| {name} | **{v}** | {shown} |")
    w("")
    w("## Results")
    w("")
    w("Medians of the counted runs; **announce ÷ player** is announce's median over that")
    w("player's (below 1.00× announce is cheaper).")
    w("")
    for case in cases:
        players = by[case]
        any_rec = next(iter(players.values()))
        kind = case.split("-")[0]
        ref = REFERENCE.get(kind)
        size = any_rec.get("bytes") or 0
        w(f"### {case}: {_duration_text(any_rec.get('seconds'))}, {size / 1e6:.1f} MB")
        w("")
        w("| player | runs | CPU s | CPU min–max | user s | sys s | wall s | peak RSS MiB | anon / file MiB "
          "| context switches | announce ÷ player: CPU | wall | peak RSS |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        order = ["announce"] + [p for p in ("mpg123", "aplay", "sox") if p in players] + \
                [p for p in players if p not in ("announce", "mpg123", "aplay", "sox")]
        for p in order:
            if p not in players:
                continue
            m = players[p]["median"]
            lo, hi = players[p]["min"]["cpu"], players[p]["max"]["cpu"]
            if p == "announce":
                name, rc, rw, rr = "**announce**", "", "", ""
            else:
                name = p
                rc = _ratio_text(ratio(case, "announce", p, "cpu"))
                rw = _ratio_text(ratio(case, "announce", p, "wall"))
                rr = _ratio_text(ratio(case, "announce", p, "peak_rss_kib"))
            w(f"| {name} | {players[p]['runs']} | {m['cpu']:.3f} | {lo:.3f}–{hi:.3f} | {m['user']:.3f} | "
              f"{m['sys']:.3f} | {m['wall']:.3f} | {_mib(m['peak_rss_kib']):.1f} | "
              f"{_mib(m.get('anon_kib') or 0):.1f} / {_mib(m.get('file_kib') or 0):.1f} | {m.get('ctxsw', 0):,.0f} | "
              f"{rc} | {rw} | {rr} |")
        secs = float(any_rec.get("seconds") or 0)
        if "announce" in players and secs >= 10:
            parts = [f"announce {players['announce']['median']['cpu'] / secs * 1e3:.3f} ms"]
            parts += [f"{p} {players[p]['median']['cpu'] / secs * 1e3:.3f} ms" for p in order[1:] if p in players]
            w("")
            w("CPU per second of audio: " + ", ".join(parts) + ".")
        w("")

    if "wav-0.1s" in by or "mp3-0.1s" in by:
        w("### Start-up cost")
        w("")
        w("On the 0.1-second clips nearly all the work is starting (loading, dynamic linking,")
        w("runtime set-up, opening the device) and exiting:")
        w("")
        for case in ("mp3-0.1s", "wav-0.1s"):
            ref = REFERENCE[case.split("-")[0]]
            a, b = med(case, "announce", "cpu"), med(case, ref, "cpu")
            if a is not None and b is not None:
                w(f"- {case}: announce {a * 1e3:.1f} ms CPU / {med(case, 'announce', 'wall') * 1e3:.1f} ms wall; "
                  f"{ref} {b * 1e3:.1f} ms CPU / {med(case, ref, 'wall') * 1e3:.1f} ms wall: "
                  f"announce costs {(a - b) * 1e3:+.1f} ms CPU more per start.")
        w("")

    w("## What is measured")
    w("")
    w("Every player decodes the file and writes it to ALSA's `null` PCM, which discards samples")
    w("without pacing them: a run lasts as long as the player's own work, so a 60-minute file")
    w("takes seconds. Commands (FILE is the case's file in `.bench-cache/`):")
    w("")
    seen = set()
    for r in recs:
        key = (r["player"], r["case"].split("-")[0])
        if key in seen:
            continue
        seen.add(key)
        cmd = r["command"].replace(shlex.quote(r["file"]), "FILE").replace(r["file"], "FILE")
        cmd = re.sub(r"^\S*/announce ", "announce ", cmd)
        w(f"- {key[1].upper()}, {r['player']}: `{cmd}`")
    w("")
    w("- **CPU** = user + system seconds of the process and all its threads (`wait4` rusage);")
    w("  **CPU min–max** is the spread over the counted runs.")
    w("- **wall** = seconds from fork to exit. With two threads announce can use more CPU than wall.")
    w("- **peak RSS** = the process's `VmHWM` from `/proc/PID/status`, read at its exit (a ptrace")
    w("  exit stop). `ru_maxrss` is not used: after exec Linux keeps counting the forking Python's")
    w("  RSS, which floors every small player at the same ~14 MB. **anon / file** splits the RSS")
    w("  at exit into anonymous memory (heap, stacks: what grows with buffering) and pages")
    w("  mapped from files (the executable's and libraries' code and data, shared between")
    w("  processes).")
    w("- **context switches** = voluntary + involuntary, all threads (`wait4` rusage).")
    w("- Runs are interleaved (announce, reference, sox, announce, …) so drift hits all players alike.")
    w("  One uncounted warm-up round precedes each case (for the 60-minute MP3 the file is read")
    w("  once with `cat` instead), so inputs come from the page cache.")
    if any("floored" in r["rss_method"] for r in recs):
        w("- **Warning:** ptrace was refused on this machine, so peak RSS here is `ru_maxrss`")
        w("  and values below ~14 MB are the measuring Python's, not the player's.")
    w("")

    if args.notes and os.path.exists(args.notes):
        w(open(args.notes).read().rstrip())
        w("")

    w("## Reproduce")
    w("")
    w("```sh")
    w("make bench                          # installs tools, builds release, runs scripts/bench.sh")
    w("scripts/bench.sh path/to/announce   # the same against any announce binary")
    w("```")
    w("")
    w("Inputs are generated once into `.bench-cache/` by ffmpeg (about a minute): one minute of")
    w("synthesized music-like stereo (a plucked melody, a bass line, a vibrato pad and noise),")
    w("encoded with libmp3lame at 128 kbit/s CBR, 44.1 kHz stereo (1 minute, and 60 minutes as")
    w("one continuous encode of the minute looped) and written as 16-bit 44.1 kHz stereo WAV")
    w("(1 and 10 minutes), plus 0.1-second clips of each. Delete `.bench-cache/` to regenerate.")
    w("`BENCH_RUNS` (default 5), `BENCH_RUNS_LONG` (60-minute MP3, 5), `BENCH_RUNS_TINY` (0.1 s clips,")
    w("20) set the counted runs; `BENCH_PROFILE=0` skips the profile. Every run's raw figures are")
    w("in `.bench-cache/results.jsonl`.")
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    start = text.index("## Targets")
    print(text[start:text.index("## What is measured")].rstrip())
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--case", required=True)
    r.add_argument("--file", required=True)
    r.add_argument("--seconds", type=float, help="audio length of the file, for per-second figures")
    r.add_argument("--runs", type=int, default=5)
    r.add_argument("--warmup", type=int, default=1)
    r.add_argument("--out", required=True)
    r.add_argument("--player", nargs=2, action="append", metavar=("LABEL", "COMMAND"), required=True)
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("--machine")
    p.add_argument("--markdown")
    p.add_argument("--notes", help="markdown appended before 'Reproduce' (e.g. profiling notes)")
    args = ap.parse_args()
    if args.cmd == "run":
        cmd_run(args)
    else:
        sys.exit(cmd_report(args))


if __name__ == "__main__":
    main()
