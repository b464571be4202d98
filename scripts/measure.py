#!/usr/bin/env python3
"""Measure players for `make bench` (Python standard library only).

    measure.py run --case NAME --file PATH [--runs N] [--warmup N] --out RESULTS.jsonl \
        --player LABEL 'COMMAND ...' [--player LABEL 'COMMAND ...' ...]
    measure.py report RESULTS.jsonl --machine MACHINE.json --markdown BENCHMARKS.md

`run` executes every player's command once unmeasured per --warmup, then --runs rounds,
interleaving the players inside each round (so drift such as CPU frequency or another
process on the machine touches all of them alike), and appends one JSON line per player
with every run and the medians. With --short FILE each player also plays FILE (its argument
--file replaced) right before each of its runs: the difference is the cost per second of
audio without the start-up (the "marginal" cost), from runs made side by side.

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
import announced  # noqa: E402  (scripts/bench/announced.py)

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


def run_once(argv, trace=True, env=None):
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
            if env is None:
                os.execvp(argv[0], argv)
            else:
                os.execvpe(argv[0], argv, env)
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


class DaemonUnderTest:
    """The announce daemon a player's client commands talk to, started for one case in a
    private runtime directory. Around every run of that player it reads the daemon's CPU
    clock, /proc/PID/stat ticks, per-thread context switches and VmHWM (reset before the run
    with clear_refs), and it waits until the daemon has closed the device again (the
    `device-closed` event on an `events` connection), so each run pays for opening, playing
    and closing the device, as the other players do."""

    def __init__(self, cmd, rundir, warmup_argv=None):
        announced.fresh_dir(rundir)
        self.cmd = cmd
        self.daemon = announced.Daemon(shlex.split(cmd), rundir)
        try:
            self._setup(warmup_argv)
        except BaseException:
            self.daemon.stop()
            raise

    def _setup(self, warmup_argv):
        self.pid = self.daemon.pid
        self.env = self.daemon.env
        self.events = self.daemon.connect()
        self.events.call({"op": "events"})
        self.open = set()
        self.opened = 0
        self.started_cpu = announced.proc_cpu_ns(self.pid)
        self.started_rss = announced.status_kib(self.pid)
        self.hwm_reset = announced.reset_hwm(self.pid)
        self.warmup = None
        if warmup_argv:
            # One uncounted play first, so first-use set-up (ALSA's configuration, the decoder
            # library) is not in the case's first counted run when the case has no warm-up round.
            self.before()
            rec = run_once(warmup_argv, trace=False, env=self.env)
            if rec["exit"] != 0:
                sys.exit(f"measure.py: the daemon warm-up {shlex.join(warmup_argv)} exited {rec['exit']}\n"
                         f"{rec['stderr']}")
            self.warmup = {"command": shlex.join(warmup_argv), "daemon_cpu": self.after()["cpu"]}
        self.counted_cpu = 0

    def _absorb(self, events):
        for e in events:
            kind = e.get("event")
            if kind == "device-opened":
                self.open.add(e.get("device"))
                self.opened += 1
            elif kind == "device-closed":
                self.open.discard(e.get("device"))

    def before(self):
        self.opened = 0
        self._absorb(self.events.pending())
        if self.open:
            sys.exit(f"measure.py: the bench daemon still has {sorted(self.open)} open before a run")
        if self.hwm_reset:
            announced.reset_hwm(self.pid)
        self.b_cpu = announced.proc_cpu_ns(self.pid)
        self.b_ticks = announced.stat_ticks(self.pid)
        self.b_sw = announced.tasks_ctxsw(self.pid)

    def after(self, timeout=10.0):
        """Right after the client exited, then once the device is closed again."""
        m_cpu = announced.proc_cpu_ns(self.pid)
        m_sw = announced.tasks_ctxsw(self.pid)
        m_mem = announced.status_kib(self.pid)
        t_exit = time.perf_counter()
        deadline = time.monotonic() + timeout
        self._absorb(self.events.pending())
        while self.opened == 0 or self.open:
            left = deadline - time.monotonic()
            msg = self.events.next(timeout=left) if left > 0 else None
            if msg is None:
                sys.exit(f"measure.py: the bench daemon did not {'close' if self.opened else 'open'} the device "
                         f"within {timeout} s of the client's exit (log: {self.daemon.log_tail()})")
            self._absorb([msg])
        tail_wall = time.perf_counter() - t_exit
        a_cpu = announced.proc_cpu_ns(self.pid)
        a_ticks = announced.stat_ticks(self.pid)
        a_mem = announced.status_kib(self.pid)
        if not announced.alive(self.pid):
            sys.exit("measure.py: the bench daemon died during a run")
        tick = 1 / announced.CLK_TCK
        return {
            "cpu": (a_cpu - self.b_cpu) / 1e9,
            "cpu_to_exit": (m_cpu - self.b_cpu) / 1e9,
            "cpu_tail": (a_cpu - m_cpu) / 1e9,
            "user": (a_ticks[0] - self.b_ticks[0]) * tick,
            "sys": (a_ticks[1] - self.b_ticks[1]) * tick,
            "peak_rss_kib": a_mem.get("VmHWM"),
            "anon_kib": m_mem.get("RssAnon"),
            "file_kib": m_mem.get("RssFile"),
            "ctxsw": announced.ctxsw_delta(self.b_sw, m_sw),
            "tail_wall": tail_wall,
        }

    def stop(self):
        before = announced.proc_cpu_ns(self.pid)
        self.events.close()
        code, ru, secs = self.daemon.stop()
        return {
            "command": re.sub(r"^\S*/announce ", "announce ", self.cmd),
            "startup_cpu": self.started_cpu / 1e9,
            "startup_rss_kib": self.started_rss.get("VmRSS"),
            "lifetime_cpu_clock": before / 1e9,
            "lifetime_rusage_cpu": (ru.ru_utime + ru.ru_stime) if ru else None,
            "exit": code,
            "hwm_reset": self.hwm_reset,
            "warmup": self.warmup,
        }


def _combine(client, daemon):
    """One announce run = the client process + what the daemon did for it."""
    rec = dict(client)
    rec["client"] = {k: client[k] for k in ("cpu", "user", "sys", "wall", "peak_rss_kib", "anon_kib", "file_kib",
                                            "ctxsw")}
    rec["daemon"] = daemon
    for k in ("cpu", "user", "sys", "ctxsw"):
        rec[k] = client[k] + daemon[k]
    rec["peak_rss_kib"] = max(client["peak_rss_kib"] or 0, daemon["peak_rss_kib"] or 0)
    rec["sum_rss_kib"] = (client["peak_rss_kib"] or 0) + (daemon["peak_rss_kib"] or 0)
    # anon / file: the daemon's at the client's exit (it holds the decoder and the buffers).
    rec["anon_kib"], rec["file_kib"] = daemon["anon_kib"], daemon["file_kib"]
    return rec


def cmd_run(args):
    players = [(label, shlex.split(cmd)) for label, cmd in args.player]
    trace = ptrace_available()
    daemons = {}
    for label, cmd in args.daemon or []:
        if not args.daemon_dir:
            sys.exit("measure.py: --daemon needs --daemon-dir")
        if label not in dict(players):
            sys.exit(f"measure.py: --daemon {label}: no such --player")
        daemons[label] = DaemonUnderTest(cmd, args.daemon_dir,
                                         shlex.split(args.daemon_warmup) if args.daemon_warmup else None)
    rounds = {label: [] for label, _ in players}

    def measured(label, argv):
        d = daemons.get(label)
        if d:
            d.before()
        rec = run_once(argv, trace=trace, env=d.env if d else None)
        if rec["exit"] != 0:
            sys.exit(f"measure.py: {label} on {args.case} exited {rec['exit']}: "
                     f"{shlex.join(argv)}\n{rec['stderr']}")
        if d:
            if not trace:
                rec["peak_rss_kib"] = rec["ru_maxrss_kib"]
                rec["anon_kib"] = rec["file_kib"] = 0
            rec = _combine(rec, d.after())
        return rec

    try:
        for i in range(args.warmup + args.runs):
            for label, argv in players:
                short = None
                if args.short:
                    short = measured(label, [args.short if a == args.file else a for a in argv])
                rec = measured(label, argv)
                if short:
                    rec["short"] = {"cpu": short["cpu"]}
                    if "daemon" in short:
                        rec["short"]["daemon_cpu"] = short["daemon"]["cpu"]
                        rec["short"]["client_cpu"] = short["client"]["cpu"]
                if i >= args.warmup:
                    rounds[label].append(rec)
                    if label in daemons:
                        daemons[label].counted_cpu += rec["daemon"]["cpu"]
    finally:
        daemon_info = {}
        for label, d in daemons.items():
            daemon_info[label] = d.stop()
            daemon_info[label]["counted_runs_cpu"] = d.counted_cpu
    size = os.path.getsize(args.file) if args.file else None
    keys = ("cpu", "user", "sys", "wall", "peak_rss_kib", "anon_kib", "file_kib", "ctxsw")
    with open(args.out, "a") as out:
        for label, argv in players:
            runs = rounds[label]
            if not trace and label not in daemons:
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
                "median": {k: statistics.median(r[k] for r in runs) for k in keys},
                "min": {k: min(r[k] for r in runs) for k in ("cpu", "wall", "peak_rss_kib")},
                "max": {k: max(r[k] for r in runs) for k in ("cpu", "wall", "peak_rss_kib")},
                "all": [{k: r[k] for k in keys + ("ru_maxrss_kib",)} for r in runs],
            }
            if args.short:
                summary["short"] = {"file": args.short, "seconds": args.short_seconds,
                                    "cpu": statistics.median(r["short"]["cpu"] for r in runs)}
                for r, a in zip(runs, summary["all"]):
                    a["short"] = r["short"]
            if label in daemons:
                dkeys = ("cpu", "cpu_to_exit", "cpu_tail", "user", "sys", "peak_rss_kib", "anon_kib", "file_kib",
                         "ctxsw", "tail_wall")
                summary["via_daemon"] = dict(daemon_info[label])
                summary["median"]["sum_rss_kib"] = statistics.median(r["sum_rss_kib"] for r in runs)
                summary["parts"] = {
                    "client": {k: statistics.median(r["client"][k] for r in runs) for k in keys},
                    "daemon": {k: statistics.median(r["daemon"][k] for r in runs) for k in dkeys},
                }
                for r, a in zip(runs, summary["all"]):
                    a["client"] = r["client"]
                    a["daemon"] = r["daemon"]
            out.write(json.dumps(summary) + "\n")
            m = summary["median"]
            extra = ""
            if label in daemons:
                c, d = summary["parts"]["client"], summary["parts"]["daemon"]
                extra = (f"  [client {c['cpu']:.3f} s + daemon {d['cpu']:.3f} s; "
                         f"RSS client {c['peak_rss_kib'] / 1024:.1f} / daemon {d['peak_rss_kib'] / 1024:.1f} MiB]")
            print(f"  {args.case:<12} {label:<10} cpu {m['cpu']:8.3f} s  wall {m['wall']:8.3f} s  "
                  f"peak RSS {m['peak_rss_kib'] / 1024:6.1f} MiB  (median of {len(runs)}){extra}", flush=True)


# ---------------------------------------------------------------------------------------
# report

# The issue's targets. "20 MB" is checked as 20 × 10^6 bytes of VmHWM; "the same for a 1-minute and a
# 60-minute file" as at most 2 MiB more peak RSS on the long file than on the short one.
MP3_CPU_VS_MPG123 = 1.05
# Issue 11: the daemon's CPU per second of WAV beyond start-up (60-minute file minus 1-second file)
# at most aplay's. Whole WAV runs (client start-up included) are shown without a target.
WAV_MARGINAL_VS_APLAY = 1.0
RSS_MB = 20.0  # 20 × 10^6 bytes
RSS_GROWTH_MIB = 2.0
REFERENCE = {"mp3": "mpg123", "wav": "aplay"}
CASE_ORDER = ["mp3-60min", "mp3-1min", "mp3-0.1s", "wav-60min", "wav-10min", "wav-1min", "wav-0.1s"]


def _mib(kib):
    return kib / 1024


def _ratio_text(x):
    return "—" if x is None else f"{x:.2f}×"


def _duration_text(secs):
    if secs is None:
        return "?"
    secs = float(secs)
    return f"{secs:.2f} s" if secs < 60 else f"{secs / 60:.1f} min"


def _announce_parts(rec):
    """The client / daemon breakdown of one case's announce median."""
    c, d, info = rec["parts"]["client"], rec["parts"]["daemon"], rec["via_daemon"]
    m = rec["median"]
    rows = [
        "| announce = client + daemon (medians) | CPU s | user s | sys s | peak RSS MiB | anon / file MiB "
        "| context switches | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| client: `announce play` | {c['cpu']:.4f} | {c['user']:.3f} | {c['sys']:.3f} | "
        f"{_mib(c['peak_rss_kib'] or 0):.1f} | {_mib(c['anon_kib'] or 0):.1f} / {_mib(c['file_kib'] or 0):.1f} | "
        f"{c['ctxsw']:,.0f} | {c['wall']:.3f} |",
        f"| daemon, until the client exited | {d['cpu_to_exit']:.4f} | | | | "
        f"{_mib(d['anon_kib'] or 0):.1f} / {_mib(d['file_kib'] or 0):.1f} | {d['ctxsw']:,.0f} | |",
        f"| daemon, closing the device afterwards | {d['cpu_tail']:.4f} | | | | | | {d['tail_wall']:.3f} |",
        f"| daemon, whole run | {d['cpu']:.4f} | {d['user']:.2f} (ticks) | {d['sys']:.2f} (ticks) | "
        f"{_mib(d['peak_rss_kib'] or 0):.1f} | | | |",
        f"| **announce** (row above) | {m['cpu']:.4f} | | | {_mib(m['peak_rss_kib']):.1f} (larger of the two; "
        f"together {_mib(m.get('sum_rss_kib') or 0):.1f}) | | {m['ctxsw']:,.0f} | {m['wall']:.3f} |",
        "",
        f"The daemon (`{info['command']}`) took {info['startup_cpu'] * 1e3:.1f} ms CPU to start and had "
        f"{_mib(info['startup_rss_kib'] or 0):.1f} MiB resident once ready (not in the runs); over the case it used "
        f"{info['lifetime_cpu_clock']:.3f} s CPU, {info['counted_runs_cpu']:.3f} s of it in the counted runs "
        f"(the rest: start-up, " + ("a warm-up play of the 0.1 s clip, " if info.get("warmup") else "") +
        "any warm-up round, shutdown).",
    ]
    return "\n".join(rows)


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
        """limit None: shown as INFO."""
        pr = paired(case, "announce", ref, "cpu")
        kind = case.split('-')[0].upper()
        name = f"{kind} CPU ≤ {limit:g}× {ref} ({case}{note})" if limit else f"{kind} CPU ÷ {ref}, whole runs ({case})"
        if pr is None:
            verdicts.append((name, "SKIP", "not measured"))
            return
        r = statistics.median(pr)
        verdicts.append((name, "INFO" if limit is None else "PASS" if r <= limit else "FAIL",
                         f"{r:.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {med(case, 'announce', 'cpu'):.3f} s "
                         f"vs {med(case, ref, 'cpu'):.3f} s)"))

    def marginal_target(case, ref, limit):
        """The daemon's CPU beyond start-up (the case's file minus its --short file, both played in
        each round) over the reference's, per round. Returns the per-second figures for the text."""
        ra, rb = by.get(case, {}).get("announce"), by.get(case, {}).get(ref)
        if not (ra and rb and ra.get("short") and rb.get("short")):
            verdicts.append((f"WAV: daemon's CPU per second of audio ≤ {limit:.1f}× {ref}'s ({case})", "SKIP",
                             "not measured"))
            return None
        short = os.path.basename(ra["short"]["file"]).rsplit(".", 1)[0]
        seconds = float(ra["seconds"]) - float(ra["short"]["seconds"])
        daemon = [x["daemon"]["cpu"] - x["short"]["daemon_cpu"] for x in ra["all"]]
        both = [x["cpu"] - x["short"]["cpu"] for x in ra["all"]]
        other = [y["cpu"] - y["short"]["cpu"] for y in rb["all"]]
        pr = [x / y for x, y in zip(daemon, other) if y > 0]
        per_s = {k: statistics.median(v) / seconds * 1e6 for k, v in
                 (("daemon", daemon), ("client + daemon", both), (ref, other))}
        r = statistics.median(pr)
        verdicts.append((f"WAV: daemon's CPU per second of audio ≤ {limit:.1f}× {ref}'s ({case} minus {short})",
                         "PASS" if r <= limit else "FAIL",
                         f"{r:.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; per second of audio: daemon "
                         f"{per_s['daemon']:.2f} µs, {ref} {per_s[ref]:.2f} µs; client + daemon "
                         f"{statistics.median(x / y for x, y in zip(both, other) if y > 0):.3f}× {ref})"))
        return {"case": case, "per_s": per_s}

    cpu_target("mp3-60min", "mpg123", MP3_CPU_VS_MPG123)
    cpu_target("mp3-1min", "mpg123", MP3_CPU_VS_MPG123, ", informative")
    marginal = marginal_target("wav-60min", "aplay", WAV_MARGINAL_VS_APLAY)
    cpu_target("wav-10min", "aplay", None)
    cpu_target("wav-1min", "aplay", None)
    for case in ("mp3-1min", "mp3-60min", "wav-1min", "wav-60min"):
        kib = med(case, "announce", "peak_rss_kib")
        name = f"announce peak RSS ≤ {RSS_MB:g} MB ({case})"
        if kib is None:
            verdicts.append((name, "SKIP", "not measured"))
        else:
            mb = kib * 1024 / 1e6
            shown = f"{mb:.1f} MB ({_mib(kib):.1f} MiB)"
            parts = by[case]["announce"].get("parts")
            if parts:
                c, d = parts["client"]["peak_rss_kib"], parts["daemon"]["peak_rss_kib"]
                both = by[case]["announce"]["median"].get("sum_rss_kib", c + d)
                shown += (f": the larger of client {c * 1024 / 1e6:.1f} MB and daemon {d * 1024 / 1e6:.1f} MB "
                          f"(together {both * 1024 / 1e6:.1f} MB, the shared binary counted twice)")
            verdicts.append((name, "PASS" if mb <= RSS_MB else "FAIL", shown))
    for short_, long_ in (("mp3-1min", "mp3-60min"), ("wav-1min", "wav-60min")):
        a, b = med(short_, "announce", "peak_rss_kib"), med(long_, "announce", "peak_rss_kib")
        name = f"peak RSS does not grow with length ({short_} → {long_}: ≤ +{RSS_GROWTH_MIB:g} MiB)"
        if a is None or b is None:
            verdicts.append((name, "SKIP", "not measured"))
        else:
            growth = _mib(b - a)
            verdicts.append((name, "PASS" if growth <= RSS_GROWTH_MIB else "FAIL",
                             f"{_mib(a):.1f} → {_mib(b):.1f} MiB ({growth:+.1f} MiB)"))

    daemon = json.load(open(args.daemon)) if args.daemon and os.path.exists(args.daemon) else None
    if daemon:
        verdicts += [tuple(v) for v in daemon["verdicts"]]
    # Further sections (scripts/bench/alert.py, mixing.py): their verdicts, then their text after the daemon's.
    sections = [json.load(open(p)) for p in (args.section or []) if os.path.exists(p)]
    for sec in sections:
        verdicts += [tuple(v) for v in sec["verdicts"]]

    lines = []
    w = lines.append
    w("# Benchmarks")
    w("")
    w("Written by `make bench` (`scripts/bench.sh`); regenerate it rather than editing it.")
    w("announce, mpg123, aplay and sox play the same files to ALSA's `null` device in the same")
    w("run; announce is given as a ratio of each of them.")
    w("Reliability figures (fuzzing, crashes, full disk, other users) are in docs/RELIABILITY.md (`make stress`).")
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
    w("From the issues: MP3 CPU ≤ 1.05× mpg123 (CPU = user + system), peak RSS ≤ 20 MB, and the same")
    w("for a 1-minute and a 60-minute file; announce's figures are its client and its daemon together")
    w("(see \"How announce is counted\" below). For WAV, where a second process's start-up outweighs")
    w("the work, the target is the daemon's CPU per second of audio beyond start-up: the 60-minute")
    w("file's run minus the 1-second file's, played side by side in each round, ≤ 1.0× aplay's same")
    w("difference; whole WAV runs are shown as INFO.")
    if daemon:
        w("The daemon's own targets (rows starting \"daemon:\"): enqueue round trip p99 ≤ 5 ms,")
        w("preemption to first frame p99 ≤ 20 ms, idle CPU < 1 ms per 10 s with no wake-ups; INFO rows")
        w("have no target. The client (row starting \"client:\"): a warm `announce play -q --no-wait` uses")
        w("≤ 10 ms CPU (median). Details in [The daemon](#the-daemon).")
    if any(v[0].startswith("alert:") for v in verdicts):
        w("Alerts (rows starting \"alert:\"): a warm `announce alert` reaches its first frame written in")
        w("p50 ≤ 15 ms; see [Alert latency](#alert-latency).")
    if any(v[0].startswith("mixing:") for v in verdicts):
        w("Mixing (rows starting \"mixing:\"): the daemon's steady CPU < 0.5% of one core per stream on")
        w("the paced device; see [Mixing CPU](#mixing-cpu).")
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
        if marginal and marginal["case"] == case:
            sh = players["announce"]["short"]
            shorts = [f"{p} {players[p]['short']['cpu'] * 1e3:.1f} ms" for p in order if p in players]
            w("")
            w(f"Each round also played `{os.path.basename(sh['file'])}` ({_duration_text(sh['seconds'])}) with each player right")
            w(f"before its run here (medians: {', '.join(shorts)}, announce's client and daemon together). CPU per")
            w("second of audio beyond start-up, this file's run minus that one's (medians of the rounds'")
            w("differences): " + ", ".join(f"{k} {v:.2f} µs" for k, v in marginal["per_s"].items()) + ".")
        if "announce" in players and players["announce"].get("parts"):
            w("")
            w(_announce_parts(players["announce"]))
        w("")

    if "wav-0.1s" in by or "mp3-0.1s" in by:
        w("### Start-up cost")
        w("")
        w("On the 0.1-second clips nearly all the work is starting (loading, dynamic linking,")
        w("runtime set-up, opening the device) and exiting; for announce that is the client's start")
        w("and exit plus the running daemon's work for one item (spooling it, opening the file and")
        w("the device, playing, closing):")
        w("")
        for case in ("mp3-0.1s", "wav-0.1s"):
            ref = REFERENCE[case.split("-")[0]]
            a, b = med(case, "announce", "cpu"), med(case, ref, "cpu")
            if a is not None and b is not None:
                w(f"- {case}: announce {a * 1e3:.1f} ms CPU / {med(case, 'announce', 'wall') * 1e3:.1f} ms wall; "
                  f"{ref} {b * 1e3:.1f} ms CPU / {med(case, ref, 'wall') * 1e3:.1f} ms wall: "
                  f"announce costs {(a - b) * 1e3:+.1f} ms CPU more per start.")
        w("")

    if daemon:
        w(daemon["markdown"].rstrip())
        w("")
    for sec in sections:
        w(sec["markdown"].rstrip())
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
    if any(r.get("parts") for r in recs):
        d = next(r for r in recs if r.get("parts"))["via_daemon"]
        w("**How announce is counted.** `announce play` is a client: it checks the file, hands it to the")
        w("user's daemon over a Unix socket and waits for the outcome; the daemon decodes and plays.")
        w(f"For each case `make bench` starts a daemon of its own (`{d['command']}`, in a private")
        w("0700 runtime directory under `.bench-cache/`, `ANNOUNCE_RUNTIME_DIR`), and every announce run")
        w("counts both processes:")
        w("")
        w("- CPU = the client's user + system time (`wait4` rusage) + the daemon's CPU during the run:")
        w("  the difference of the daemon's process CPU clock (`clock_gettime` on")
        w("  `clock_getcpuclockid(pid)`, nanoseconds, every thread including threads that ended) read")
        w("  just before the client is started and again once the daemon has closed the device after")
        w("  the item (the `device-closed` event; the daemon closes an idle device after 100 ms, so each")
        w("  run pays for opening, playing and closing, like the other players). The per-thread sums of")
        w("  `/proc/PID/task/*/schedstat` read the same counter but lose the playback thread, which")
        w("  ends when the device closes; `/proc/PID/stat` utime + stime are only 10 ms ticks.")
        w("- user s / sys s of announce = the client's exact figures + the daemon's `/proc/PID/stat`")
        w("  utime / stime deltas, in 10 ms ticks: they need not add up to the CPU column.")
        w("- peak RSS = the larger of the client's VmHWM at exit and the daemon's VmHWM over the run")
        w("  (reset to its current RSS with `/proc/PID/clear_refs` before each run" +
          ("" if d.get("hwm_reset") else "; **refused on this machine, so it is the daemon's peak since it started**") +
          "); both are in the breakdown under each table. anon / file are the daemon's at the client's exit.")
        w("- context switches = the client's (`wait4`) + the daemon's live threads' `voluntary` +")
        w("  `nonvoluntary` counts between the run's start and the client's exit.")
        w("- wall = the client's fork to exit (the item has been played by then; the device close after")
        w("  it is not in wall but is in CPU).")
        w("- Not counted in any run: the daemon's own start-up and one play of the 0.1 s clip of the")
        w("  case's format right after it (once per case, so first-use set-up such as reading ALSA's")
        w("  configuration is not in a case's first run; shown in the breakdown).")
        w("- Counted although not needed by `announce play`: the few `send()` calls per run the daemon")
        w("  makes to the bench's `events` connection.")
        w("")
        w("For the other players, and for announce's client process:")
        w("")
    w("- **CPU** = user + system seconds of the process and all its threads (`wait4` rusage);")
    w("  **CPU min–max** is the spread over the counted runs.")
    w("- **wall** = seconds from fork to exit. With more than one thread a player can use more CPU than wall.")
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
    w("(1 second, 1, 10 and 60 minutes: 635 MB), plus 0.1-second clips of each. Delete `.bench-cache/`")
    w("to regenerate. `BENCH_RUNS` (default 5), `BENCH_RUNS_LONG` (60-minute MP3, 5), `BENCH_RUNS_TINY`")
    w("(0.1 s clips, 20), `BENCH_RUNS_MARGINAL` (rounds of the WAV target, 15) set the counted runs;")
    w("`BENCH_PROFILE=0` skips the profile, `BENCH_DAEMON=0` the daemon")
    w("section, `BENCH_ALERT=0` the alert latency, `BENCH_MIXING=0` the mixing CPU, `BENCH_PACED=0` the")
    w("paced PulseAudio both use (`Tests/Shell/paced-audio.sh`; without it there is no mixing section and no")
    w("`pulse` alert rows). Every run's raw figures are in `.bench-cache/results.jsonl` (announce's with the")
    w("client and daemon parts of each run), `.bench-cache/daemon.json`, `alert.json` and `mixing.json`.")
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
    r.add_argument("--daemon", nargs=2, action="append", metavar=("LABEL", "DAEMON-COMMAND"),
                   help="LABEL's command is a client of this daemon (e.g. 'announce daemon --device null'): "
                        "started for this case in --daemon-dir, and its CPU, RSS and context switches "
                        "during each run are added to LABEL's")
    r.add_argument("--daemon-dir", help="runtime directory for --daemon (emptied, 0700)")
    r.add_argument("--daemon-warmup", metavar="COMMAND",
                   help="a client command run once, uncounted, after the daemon starts (e.g. a 0.1 s clip)")
    r.add_argument("--short", metavar="FILE",
                   help="also run every command on FILE (in place of --file) just before each run: the "
                        "difference is the cost per second of audio beyond start-up")
    r.add_argument("--short-seconds", type=float, help="audio length of --short")
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("--machine")
    p.add_argument("--markdown")
    p.add_argument("--notes", help="markdown appended before 'Reproduce' (e.g. profiling notes)")
    p.add_argument("--daemon", help="scripts/bench/daemon.py's JSON: its verdicts and section are included")
    p.add_argument("--section", action="append",
                   help="a further section's JSON ({verdicts, markdown}: scripts/bench/alert.py, mixing.py), "
                        "included after the daemon's; may be given more than once")
    args = ap.parse_args()
    if args.cmd == "run":
        cmd_run(args)
    else:
        sys.exit(cmd_report(args))


if __name__ == "__main__":
    main()
