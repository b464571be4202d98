#!/usr/bin/env python3
"""Where announce spends its time, next to the reference players (part of `make bench`).

    profile.py ANNOUNCE_BIN CACHE_DIR > profile.md

announce is a client (`announce play`) and a daemon that decodes and plays. Its profile is
both: a daemon (`announce daemon --device null`, private runtime directory) runs for the whole
profile, each file is first played once unprofiled (the 0.1 s clip of the same format, so
first-use set-up is done), then the client runs under the profiler while the daemon is
profiled from just before the client starts until it has closed the device after the item
(callgrind: `callgrind_control --zero` / `--dump`; perf and strace: attached with `-p`). The
two are added up; the daemon's own start-up is left out, as in the timed runs.

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
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import announced  # noqa: E402

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


def callgrind(argv, outdir, label, env=None):
    out = os.path.join(outdir, f"{label}.callgrind")
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"callgrind failed on {' '.join(argv)}: {r.stderr[-500:]}")
    return parse_callgrind(out)


class Session:
    """announce's daemon for a profile; see the module's docstring."""

    def __init__(self, bin_, tmp, name, daemon_prefix=()):
        self.bin = bin_
        self.rundir = announced.fresh_dir(os.path.join(tmp, name))
        self.daemon = announced.Daemon(list(daemon_prefix) + announced.daemon_argv(bin_, "null"), self.rundir,
                                       timeout=120)
        self.env = self.daemon.env
        try:
            self.events = self.daemon.connect()
            self.events.call({"op": "events"})
        except BaseException:
            self.daemon.stop(timeout=120)
            raise

    def client(self, path):
        return [self.bin, "play", "-q", "-d", "null", path]

    def _wait_closed(self, timeout=600):
        opened = False
        deadline = time.monotonic() + timeout
        while True:
            m = self.events.next(timeout=max(0.0, deadline - time.monotonic()))
            if m is None:
                raise RuntimeError(f"the daemon did not close the device ({self.daemon.log_tail()})")
            opened = opened or m.get("event") == "device-opened"
            if opened and m.get("event") == "device-closed":
                return

    def warm(self, path):
        subprocess.run(self.client(path), env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       check=True)
        self._wait_closed()

    def play(self, run_client, path, before=lambda: None, after=lambda: None):
        """before(); run_client(argv, env); wait until the daemon closed the device; after()."""
        kind = os.path.splitext(path)[1].lstrip(".")
        self.warm(os.path.join(os.path.dirname(path), f"{kind}-0.1s.{kind}"))
        before()
        try:
            result = run_client(self.client(path), self.env)
            self._wait_closed()
        finally:
            after()
        return result

    def close(self):
        self.events.close()
        self.daemon.stop(timeout=120)


def valgrind_copy(bin_, tmp):
    """bin_, or a copy without debug info when this valgrind cannot read it (valgrind 3.19 gives up
    on DWARF 5 units such as clang's for Sources/CPosix). Function names stay (symbol table)."""
    r = subprocess.run(["valgrind", "--tool=none", bin_, "--version"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        return bin_, None
    os.makedirs(os.path.join(tmp, "nodebug"), exist_ok=True)
    copy = os.path.join(tmp, "nodebug", os.path.basename(bin_))
    subprocess.run(["strip", "--strip-debug", "-o", copy, bin_], check=True)
    why = "debug info this valgrind cannot read" if "debuginfo" in r.stderr else "valgrind failed on it"
    return copy, why


def callgrind_announce(bin_, cache, tmp, cases):
    """{(kind, size): (merged self costs, total, client total, daemon total)} for announce."""
    dout = os.path.join(tmp, "daemon.callgrind")
    sess = Session(bin_, tmp, "rt-callgrind", ["valgrind", "--tool=callgrind", f"--callgrind-out-file={dout}"])
    out = {}
    try:
        for n, (kind, size) in enumerate(cases, start=1):
            path = os.path.join(cache, f"{kind}-{size}.{kind}")
            pid = str(sess.daemon.pid)
            label = f"announce-client-{kind}-{size}".replace(".", "_")

            def control(cmd):
                subprocess.run(["callgrind_control", cmd, pid], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True)
            client = sess.play(lambda argv, env: callgrind(argv, tmp, label, env=env), path,
                               before=lambda: control("--zero"), after=lambda: control("--dump"))
            dump = f"{dout}.{n}"
            for _ in range(100):  # the dump is written asynchronously
                if os.path.exists(dump):
                    break
                time.sleep(0.05)
            daemon = parse_callgrind(dump)
            merged = collections.Counter(client[0])
            merged.update(daemon[0])
            out[(kind, size)] = (merged, client[1] + daemon[1], client[1], daemon[1])
    finally:
        sess.close()
    return out


OWN_MODULES = ("13AnnounceModel", "14AnnounceSystem", "15AnnounceSources", "14AnnounceOutput", "14AnnounceEngine", "14AnnounceDaemon", "14AnnounceClient", "8announce", "announce_")  # Swift mangled module names; CPosix's C functions
DEP_MODULES = ("14ArgumentParser", "7Logging", "10HeapModule", "15InternalCollectionsUtilities")


def group_of(obj, file, fn, announce_bin):
    base = os.path.basename(obj)
    if os.path.realpath(obj) == os.path.realpath(announce_bin) or base == os.path.basename(announce_bin):
        if "/Sources/" in file:
            return "announce's own code (Sources/)"
        if "swift-argument-parser" in file or "swift-log" in file or "/checkouts/" in file:
            return "announce: package dependencies"
        if file in ("?", "???", ""):  # no debug info (stripped copy): go by the symbol's module
            head = fn[:40]
            if any(m in head for m in OWN_MODULES):
                return "announce's own code (Sources/)"
            if any(m in head for m in DEP_MODULES):
                return "announce: package dependencies"
            if "20FoundationEssentials" in head:
                return "announce: FoundationEssentials (static)"
        return "announce: Swift runtime + stdlib (static)"
    m = re.match(r"(lib[^.]+|ld-linux[^.]*)", base)
    return m.group(1) if m else base


def mi(x):
    return f"{x / 1e6:,.1f} M"


def section_callgrind(bin_, cache, tmp):
    w = []
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        return ["### Instructions (callgrind)", "", "Skipped: valgrind (callgrind_control) is not installed.", ""]
    vbin, why = valgrind_copy(bin_, tmp)
    play = None  # announce: client + daemon, see callgrind_announce
    # The first player after announce is the reference; more are extra columns. announce
    # asks libmpg123 for float samples, so mpg123 -e f32 (float output too) is shown as well.
    runs = {
        "mp3": [("announce", play), ("mpg123", ["mpg123", "-q", "-o", "alsa", "-a", "null"]),
                ("mpg123 -e f32", ["mpg123", "-e", "f32", "-q", "-o", "alsa", "-a", "null"])],
        "wav": [("announce", play), ("aplay", ["aplay", "-q", "-D", "null"])],
    }
    results = {}
    parts = {}
    mine = callgrind_announce(vbin, cache, tmp, [(k, z) for k in runs for z in ("0.1s", "1min")])
    for kind, players in runs.items():
        for size in ("0.1s", "1min"):
            path = os.path.join(cache, f"{kind}-{size}.{kind}")
            for player, argv in players:
                if player == "announce":
                    merged, total_, c, d = mine[(kind, size)]
                    results[(kind, size, player)] = (merged, total_)
                    parts[(kind, size)] = (c, d)
                    continue
                label = re.sub(r"\W+", "_", f"{player}-{kind}-{size}")
                results[(kind, size, player)] = callgrind(argv + [path], tmp, label)
    bin_ = vbin

    def total(kind, size, player):
        return results[(kind, size, player)][1]

    w.append("### Instructions (callgrind, user space, all threads)")
    w.append("")
    w.append("Instructions executed (Ir), deterministic from run to run. The 0.1 s clip is almost")
    w.append("all start-up and shut-down; 1 min − 0.1 s is the cost of decoding and writing one")
    w.append("minute of audio. Kernel time (system calls, thread wake-ups) is not in these counts:")
    w.append("see perf and strace below. `mpg123 -e f32` decodes to float samples, as announce does.")
    w.append("announce = the client `announce play` + the daemon from just before the client starts until")
    w.append("it has closed the device (its start-up is not included; the split is under the table).")
    if why:
        w.append(f"announce was run from a copy without debug info ({why}), so its own code is told")
        w.append("from the Swift runtime by the module in each function's mangled name.")
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
    w.append("announce's split: " + "; ".join(
        f"{kind}-{size}: client {mi(parts[(kind, size)][0])} + daemon {mi(parts[(kind, size)][1])}"
        for kind in runs for size in ("0.1s", "1min")) + ".")
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


def perf_report(data):
    """(event count, [(pct, dso)], [(pct, "dso [.] sym")]) of one perf.data file."""
    count = 0

    def report(sort):
        nonlocal count
        out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "--stdio"],
                             capture_output=True, text=True).stdout
        rows = []
        for line in out.splitlines():
            m = re.match(r"# Event count \(approx\.\): (\d+)", line)
            if m:
                count = int(m.group(1))
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"\s*([\d.]+)%\s+(.*)$", line)
            if m:
                rows.append((float(m.group(1)), m.group(2).strip()))
        return rows
    dso, sym = report("dso"), report("dso,sym")
    return count, dso, sym


def perf_merge(parts):
    """Rows of several perf.data files as shares of their summed event counts."""
    total = sum(c for c, _, _ in parts) or 1
    out = []
    for i in (1, 2):
        acc = collections.Counter()
        for c, *rows in parts:
            for pct, name in rows[i - 1]:
                acc[name] += pct * c / total
        out.append([(pct, name) for name, pct in acc.most_common()])
    return out[0], out[1]


def perf_profile(argv, tmp, label, freq, env=None):
    data = os.path.join(tmp, f"{label}.perf")
    r = subprocess.run(["perf", "record", "-q", "-F", str(freq), "-o", data] + argv, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perf record failed: {r.stderr[-300:]}")
    return perf_report(data)


class Attached:
    """A profiler attached to the running daemon (perf record -p / strace -p) between before()
    and after()."""

    def __init__(self, argv, ready=None):
        self.argv, self.ready, self.proc = argv, ready, None

    def before(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        if self.ready:  # strace says when it is attached
            for line in self.proc.stderr:
                if self.ready in line:
                    break
        else:
            time.sleep(0.5)  # perf record -p gives no sign; it attaches well within this

    def after(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise RuntimeError(f"{self.argv[0]} did not stop after SIGINT")


def perf_announce(sess, path, tmp, label, freq):
    data = os.path.join(tmp, f"{label}-daemon.perf")
    att = Attached(["perf", "record", "-q", "-F", str(freq), "-p", str(sess.daemon.pid), "-o", data])
    client = sess.play(lambda argv, env: perf_profile(argv, tmp, f"{label}-client", freq, env=env), path,
                       before=att.before, after=att.after)
    daemon = perf_report(data)
    return perf_merge([client, daemon]) + ((client[0], daemon[0]),)


def section_perf(bin_, cache, tmp):
    w = ["### Cycles, user and kernel (perf, long files)", ""]
    if not perf_ok(tmp):
        return w + ["Skipped: perf is missing or not permitted here.", ""]
    w.append("Sampled CPU time of every thread, kernel included. `[kernel.kallsyms]` is system")
    w.append("time: reads, futex wake-ups between the decode and playback threads, scheduling.")
    w.append("Percentages are of each player's own samples (its CPU time is in the tables above);")
    w.append("announce's are of the client's and the daemon's together (weighted by their event counts).")
    w.append("")
    # Sampling rates: ~6,000 samples for the 3-second MP3 runs, as many as perf allows
    # (perf_event_max_sample_rate, often 10 kHz) for the WAV runs that last ~20 ms.
    cases = [("mp3-60min.mp3", 2000, [("announce", None),
                                ("mpg123", ["mpg123", "-q", "-o", "alsa", "-a", "null"])]),
             ("wav-10min.wav", max_rate(), [("announce", None),
                                            ("aplay", ["aplay", "-q", "-D", "null"])])]
    sess = Session(bin_, tmp, "rt-perf")
    try:
        res = {}
        for file, freq, players in cases:
            path = os.path.join(cache, file)
            res[file] = {p: (perf_announce(sess, path, tmp, f"{p}-{file}", freq) if argv is None
                             else perf_profile(argv + [path], tmp, f"{p}-{file}", freq)[1:])
                         for p, argv in players}
    finally:
        sess.close()
    for file, freq, players in cases:
        ref = players[1][0]
        res_f = res[file]
        c_events, d_events = res_f["announce"][2]
        w.append(f"{file}: announce's cycles were {100 * c_events / max(1, c_events + d_events):.1f}% client, "
                 f"{100 * d_events / max(1, c_events + d_events):.1f}% daemon.")
        w.append("")
        w.append(f"#### {file}: share of samples by object")
        w.append("")
        w.append(f"| object | announce | {ref} |")
        w.append("|---|---:|---:|")
        a = dict((name, pct) for pct, name in res_f["announce"][0])
        r = dict((name, pct) for pct, name in res_f[ref][0])
        for name in sorted(set(a) | set(r), key=lambda n: -(a.get(n, 0) + r.get(n, 0))):
            if max(a.get(name, 0), r.get(name, 0)) >= 0.3:
                w.append(f"| {md(name)} | {a.get(name, 0):.1f}% | {r.get(name, 0):.1f}% |")
        w.append("")
        for p in ("announce", ref):
            agg = collections.Counter()
            for pct, rest in res_f[p][1]:
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

def strace_counts(argv, tmp, label, env=None):
    out = os.path.join(tmp, f"{label}.strace")
    subprocess.run(["strace", "-f", "-c", "-o", out] + argv, stdin=subprocess.DEVNULL, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return strace_read(out)


def strace_read(out):
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
    w.append("Calls made by every thread (strace slows the run; only the counts matter here). announce =")
    w.append("the client + the daemon (strace attached from just before the client starts until the")
    w.append("daemon has closed the device).")
    w.append("")
    cases = [("mp3-1min.mp3", "mpg123", ["mpg123", "-q", "-o", "alsa", "-a", "null"]),
             ("wav-10min.wav", "aplay", ["aplay", "-q", "-D", "null"])]
    sess = Session(bin_, tmp, "rt-strace")
    try:
        for file, ref, r_argv in cases:
            path = os.path.join(cache, file)
            try:
                dout = os.path.join(tmp, f"a-daemon-{file}.strace")
                att = Attached(["strace", "-f", "-c", "-p", str(sess.daemon.pid), "-o", dout], ready="attached")
                c = sess.play(lambda argv, env: strace_counts(argv, tmp, f"a-client-{file}", env=env), path,
                              before=att.before, after=att.after)
                d = strace_read(dout)
                r = strace_counts(r_argv + [path], tmp, f"r-{file}")
            except (subprocess.CalledProcessError, OSError) as e:
                w += [f"{file}: strace failed ({e}).", ""]
                continue
            a = collections.Counter(c)
            a.update(d)
            w.append(f"#### {file}")
            w.append("")
            w.append(f"| system call | announce | client | daemon | {ref} |")
            w.append("|---|---:|---:|---:|---:|")
            for name in sorted(set(a) | set(r), key=lambda n: -(a.get(n, 0) + r.get(n, 0)))[:10]:
                w.append(f"| {name} | {a.get(name, 0):,} | {c.get(name, 0):,} | {d.get(name, 0):,} | {r.get(name, 0):,} |")
            w.append(f"| all | {sum(a.values()):,} | {sum(c.values()):,} | {sum(d.values()):,} | {sum(r.values()):,} |")
            w.append("")
    finally:
        sess.close()
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
