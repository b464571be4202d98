"""BENCHMARKS.md from the results (bench.py, and bench.py --render from .bench-cache/results.json):
the machine and run, the target rows beside the previous report's, the players' table, the
instruction counts, how each figure is measured, and the micro-benchmarks' tables."""
import re

from .proc import med
from .targets import RENAMED, ratio_rows


def previous_targets(path):
    """{target: (verdict, first figure)} and the commit of the BENCHMARKS.md at path."""
    try:
        text = open(path).read()
    except OSError:
        return {}, None
    commit = re.search(r"\*\*commit\*\*: ([0-9a-f]+)", text)
    rows = {}
    for m in re.finditer(r"^\| (.+?) \| \*\*(\w+)\*\* \| (.+?) \|", text, re.M):
        rows[RENAMED[1] if m.group(1) == RENAMED[0] else m.group(1)] = (m.group(2), re.split(r" \(|;", m.group(3))[0])
    return rows, commit.group(1) if commit else None


def render(res, out):
    prev, prev_commit = res.get("previous") or ({}, None)
    mach, load = res.get("machine", {}), res.get("load")
    V = ratio_rows(res)
    w = []
    w += ["# Benchmarks", "",
          "Written by `make bench` (`scripts/bench.py`); regenerate it rather than editing it. announce,",
          "mpg123, aplay and sox play the same files to ALSA's `null` device in the same run, interleaved",
          "round by round; announce is given as a ratio of the reference player. Reliability figures are in",
          "docs/RELIABILITY.md (`make stress`).", ""]
    if res.get("smoke"):
        w += ["**Smoke run** (`--smoke`): few repetitions, short windows. Not for comparison.", ""]
    w += ["## Machine and run", ""]
    w.append(f"- **date**: {res.get('date', '?')}; **commit**: {mach.get('commit', '?')}")
    if mach:
        w.append(f"- **binary**: announce, {mach['binary_bytes'] / 1e6:.1f} MB ({mach['stripped_bytes'] / 1e6:.1f} MB stripped, "
                 "as make install installs it); `make release`")
        w.append(f"- **machine**: {mach['cpu']}, {mach['cores']} cores, {mach['memory']}; {mach['os']}, kernel {mach['kernel']}")
        w.append(f"- **tools**: {mach['swift']}; {mach['mpg123']}; {mach['aplay'].split(' by ')[0]}; {re.sub(' +', ' ', mach['sox'])}")
        w.append(f"- **alsa config**: {mach['alsa config']}")
    if load:
        quiet = load["others_cores"] < 0.1 and not load["builds_seen"]
        w.append((f"- **duration**: `make bench` took {load['make_seconds'] / 60:.1f} min, the harness {load['seconds'] / 60:.1f} min "
                  "of it" if "make_seconds" in load else f"- **duration**: {load['seconds'] / 60:.1f} min")
                 + " (the first run takes a few minutes more: the inputs, and building Benchmarks/)")
        w.append(f"- **other load**: {'quiet' if quiet else '**disturbed**'}: other processes used {load['others_cores']:.2f} "
                 f"of the {mach.get('cores', '?')} cores on average (this harness {load['own_cores']:.2f}); Swift builds "
                 f"were running in {load['builds_seen']} of {load['samples']} 5-second samples (up to "
                 f"{load['max_frontends']} compiler processes; 1-minute load average up to {load['load_max']:.1f})."
                 + ("" if quiet else " Ratios are taken round by round, so most drift cancels, but latencies and "
                    "small-file figures suffer: rerun `make bench` on a quiet machine to confirm."))
    w += ["", "## Targets", "",
          "From the issues. CPU = user + system; announce = its client (`announce play`) and its daemon",
          "together (the daemon's CPU clock from just before the client starts until it has closed the",
          "device after the item). CPU ratios are the median of per-round ratios (announce's run over the",
          "reference's run right after it), so machine drift cancels; the range over rounds follows.",
          "For WAV, where a second process's start-up outweighs the work, the target is the daemon's CPU",
          "per second of audio beyond start-up (the 60-minute file's run minus the 1-second file's, played",
          "side by side in each round). INFO rows have no target.", ""]
    pc = f" | previous run ({prev_commit})" if prev else ""
    w += [f"| target | result | figures{pc} |", "|---|---|---|" + ("---|" if prev else "")]
    for name, v, shown in V:
        p = f" | {prev[name][0]}: {prev[name][1]}" if name in prev else (" | —" if prev else "")
        w.append(f"| {name} | **{v}** | {shown}{p} |")
    w.append("")

    P = res.get("players")
    if P:
        w += ["## Players", "",
              "Medians of the counted runs (one uncounted warm-up round first; for the 60-minute MP3 the file",
              "is read once with `cat` instead). Peak RSS: the process's VmHWM at its exit (ptrace exit stop);",
              "announce's is the larger of the client's and the daemon's (its VmHWM reset before each run).",
              "Context switches: the client's and the daemon's threads'.", "",
              "| file | player | runs | CPU s | CPU min–max | wall s | peak RSS MiB | context switches | ÷ player: CPU | wall | RSS |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for case in ("mp3-60min", "mp3-1min", "mp3-0.1s", "wav-60min", "wav-10min", "wav-1min", "wav-0.1s"):
            if case not in P:
                continue
            runs = P[case]["runs"]
            m = {p: {k: med(r[k] for r in rs) for k in ("cpu", "wall", "rss_kib", "ctxsw")} for p, rs in runs.items()}
            for p, rs in runs.items():
                cpus = [r["cpu"] for r in rs]
                ratio = " |  | " if p == "announce" else " | ".join(f"{m['announce'][k] / m[p][k]:.2f}×" for k in ("cpu", "wall", "rss_kib"))
                w.append(f"| {case if p == 'announce' else ''} | {'**announce**' if p == 'announce' else p} | {len(rs)} | "
                         f"{m[p]['cpu']:.4f} | {min(cpus):.4f}–{max(cpus):.4f} | {m[p]['wall']:.3f} | {m[p]['rss_kib'] / 1024:.1f} | "
                         f"{m[p]['ctxsw']:,.0f} | {ratio} |")
        w.append("")
        w.append("announce's split (medians): " + "; ".join(
            f"{c}: client {med(r['client_cpu'] for r in P[c]['runs']['announce']) * 1e3:.1f} ms + daemon "
            f"{med(r['daemon_cpu'] for r in P[c]['runs']['announce']) * 1e3:.1f} ms CPU"
            for c in ("mp3-0.1s", "mp3-60min", "wav-0.1s", "wav-60min") if c in P) + ".")
        w += ["", "Commands (FILE is the case's file in `.bench-cache/`): " + "; ".join(sorted(
            {f"`{cmd}`" for c in P.values() for cmd in c["commands"].values()})) + ".", ""]

    C = res.get("callgrind")
    if C:
        w += ["## Instructions (callgrind)", "",
              "| file | announce M (client + daemon) | reference M | ÷ |", "|---|---:|---:|---:|"]
        w += [f"| {k} | {r['announce'] / 1e6:.1f} ({r['client'] / 1e6:.1f} + {r['daemon'] / 1e6:.1f}) | {r['reference']} "
              f"{r['ref'] / 1e6:.1f} | {r['announce'] / r['ref']:.2f}× |" for k, r in C.items()]
        for k, r in C.items():
            if k.endswith("1min"):
                gs = sorted(r["groups"], key=lambda g: -r["groups"][g])
                w += ["", f"{k}, announce by library (M): " + "; ".join(
                    f"{g} {r['groups'][g] / 1e6:.1f}" for g in gs if r["groups"][g] >= 0.003 * r["announce"]) + "."]
        w.append("")

    w += ["## How it is measured", "",
          "- **Players**: each case gets its own `announce daemon --device null` (private runtime directory);",
          "  first a 0.1 s clip of the format is played uncounted. announce's CPU = the client's rusage + the",
          "  daemon's CPU clock (`clock_getcpuclockid`, every thread) from just before the client starts",
          "  until the daemon's `device-closed` event after the item (it closes an idle device after 100 ms),",
          "  so each run pays for opening, playing and closing, like the other players.",
          "- **Tempo**: the 60-minute MP3 with `--rate 2` (libsonic on the daemon's decode thread), the same",
          "  file played plainly, and sox's WSOLA `tempo 2`, each to `null`, interleaved round by round;",
          "  announce counted as for Players. The ratios are per round.",
          "- **Enqueue**: `play` with `wait:false` of an existing file while the queue is paused, from the",
          "  send to the reply (the daemon spools the item with fsyncs), after 50 uncounted; on tmpfs",
          "  (`/dev/shm`, as `$XDG_RUNTIME_DIR`) and ext4 `/tmp`. The `--no-wait` command: spawn to exit, and",
          "  its client's user + system time, after 5 uncounted runs.",
          "- **Preemption**: a normal item loops on `null` (the player busy decoding); a random 2–12 ms after",
          "  it resumed, a 0.05 s `high` item is sent: send to its `started` event's `time` (the daemon's",
          "  clock when the first frames are written). Resumption: the high item's `finished` to the normal",
          "  item's next `started`.",
          "- **Scale**: 10,000 `play` requests of wav-0.1s.wav, 100 items a request, while paused; the daemon's",
          "  VmRSS before and after (bytes per item); 1000 single-item requests with them queued (the enqueue",
          "  round trip); then the daemon is stopped and started again over its spool five times: spawn to its",
          "  word on `--ready-fd` (it answers only once the queue is restored), and to a `status` that lists",
          "  every item; VmHWM is the peak while restoring.",
          "- **Cold start**: no daemon; `announce play -q -d null` starts one: spawn to daemon.log's",
          "  \"started on\" line. **Idle**: a fresh daemon and one that played a clip, CPU clock and context",
          "  switches of every thread. **Memory**: 0.1 s clips (WAV and MP3) in batches of 100, each played to",
          "  the end, then `/proc/PID/status`.",
          "- **Alerts**: `announce alert -q -d DEV FILE` (0.3 s, 48 kHz) with the daemon running, spawn to its",
          "  `started` event; warm = PCM cached, cold = a new copy; \"daemon alone\" = an `alert` request on an",
          "  open connection. A random 0–60 ms between alerts; each waits for the device to close again,",
          "  except over a playing stream (an ambient tone looping on the device). On `pulse` the sink's",
          "  monitor is recorded (parec, 10 ms) throughout, and each warm alert's 880 Hz onset found in it",
          "  (50 ms windows, 1 ms steps): spawn to heard, alone and over the stream; the recorder's own lag",
          "  is in both, so their difference is what the playing stream costs the alert as heard.",
          "- **Mixing**: N looping ambient streams (`announce play --no-wait --category ambient --loops -1`,",
          "  different 5 s tones) on `pulse`, the paced PulseAudio of `Tests/Shell/paced-audio.sh`; the daemon's",
          "  CPU clock over the window, 2 s after all started. 44.1 kHz streams join a device a 48 kHz stream",
          "  opened, so each is resampled. With the one 48 kHz stream, an alert then plays over it and the",
          "  window is taken again with the alert's stream kept open; once the device closed, a last window",
          "  counts the idle daemon's wake-ups. The aplay rows: one tone through the same PCM with aplay's periods,",
          "  announce's for a sound server (3 × 60 ms) and for a kernel-side PCM (4 × 20 ms).",
          "- **Ducking other applications**: another application's 440 Hz tone (`sox … | pacat`, no media.role)",
          "  plays on the private sound server's sink (PulseAudio as for Mixing; PipeWire with WirePlumber and",
          "  pipewire-pulse, `Tests/Shell/pipewire-audio.sh`) while `announce play --duck-others` plays a 1.5 s",
          "  1000 Hz clip on `pulse`, 0.8 s and more apart; the sink's monitor is recorded (parec, 10 ms) and each",
          "  tone's level read in 25 ms windows every 1 ms. From the clip's onset as heard to the other tone",
          "  within 1 dB of its duck level; the ramps' 10–90 % times; the tone's level 0.9–1.3 s after the clip",
          "  against 0.1–0.6 s before it; and the stream's volume in `pactl list sink-inputs` after each round",
          "  against before (exact means the same integers).",
          "- **Zones**: mosquitto on 127.0.0.1 at a free port (generated config, `timeout`, stopped by pid), N",
          "  `announce daemon --device null` (3, then 30, a fresh broker each), each with its own runtime directory",
          "  and config (`[mqtt]` broker, host, zones), and a sending host without a daemon; one uncounted play",
          "  first. `announce play --json --zone all` of a 0.2 s WAV (it travels in the message): from the spawn",
          "  to the last host's `started` event time (the daemon's clock when the first frames are written);",
          "  every host must play it (its `finished` event), and the client must list them all. The play as",
          "  the broker carried it (`mosquitto_sub`) gives its send time and common start time (send + 300 ms,",
          "  `ZoneLimits.startLead`), which split the figure into the client's part, the lead, and the hosts'",
          "  lateness after the common time. Spread: the latest minus",
          "  the earliest host's first frame; one machine shows the hosts' own jitter, not the clocks' offset",
          "  (NTP adds that across machines). Targets: 500 ms for 3 hosts is the lead plus 200 ms; 1 s for 30",
          "  daemons that share this machine's cores; a spread under 30 ms, as speakers in neighbouring rooms",
          "  heard less than about 30 ms apart are heard as one (the precedence effect). Idle: after the plays,",
          "  each daemon's CPU clock and context switches over the window, the bridge connected; the bridge",
          "  wakes for the keepalive (a loop timeout every 15 s, a PINGREQ every 30 s and its PINGRESP), hence",
          "  wake-ups, unlike a daemon without `[mqtt]`.",
          "- **Instructions**: callgrind, user space, every thread; announce = client + daemon from just",
          "  before the client starts until the device closed. 1 min − 0.1 s is the cost of one minute of",
          "  audio; announce's own code is told from the static Swift runtime by the mangled module name.",
          "  The client's parts: callgrind's inclusive counts for a warm `play -q --no-wait` (the daemon paused):",
          "  `AnnounceCommand.parsedDirectly` (swift-argument-parser, with the runtime's reflection and",
          "  conformance lookups it makes), `_dl_start` (the dynamic loader), `Play.run` and within it",
          "  `JSONCoding`'s encode and decode; beside a static Swift hello world's run.",
          ""]

    MI = res.get("micro")
    if MI:
        w += ["## Micro-benchmarks (ordo-one/benchmark)", "",
              "`Benchmarks/` (a package of its own: `swift build` and `make test` never build it), through the",
              "layers' public API; one iteration is one second of audio, one whole 1-minute file, 100 queue",
              "items, or one protocol line (warm: a woken control thread pays several times more). Percentiles",
              "over the iterations; allocations (malloc count) show what the real-time paths must not do.",
              "Run alone: `cd Benchmarks && swift package --disable-sandbox benchmark`.", ""]
        w += micro_tables(MI["output"]) + [""]

    for name, e in res.get("errors", {}).items():
        w += [f"**The {name} section failed** and is missing above:", "", "```", e.strip(), "```", ""]
    w += ["## Reproduce", "", "```sh",
          "make bench                                   # installs tools, builds release, runs scripts/bench.py",
          "scripts/bench.py .build/release/announce --smoke --only daemon   # quick look at one section",
          "scripts/bench.py --render                    # this file again from .bench-cache/results.json",
          "```", "",
          "Inputs are generated once into `.bench-cache/` by ffmpeg: one minute of synthesized music-like stereo,",
          "as 128 kbit/s CBR MP3 (1 and 60 minutes, one continuous encode) and 16-bit WAV (1 s, 1, 10 and 60",
          "minutes), 44.1 kHz, plus 0.1 s clips. Every figure above is in `.bench-cache/results.json`.", ""]
    text = "\n".join(w)
    with open(out, "w") as f:
        f.write(text)
    for name, v, shown in V:
        print(f"  {v:<4} {name}: {shown[:110]}")


def micro_tables(output):
    """ordo-one's markdown output (a table per benchmark, a row per metric) as one table per
    metric, a row per benchmark."""
    out, bench, rows, header = [], None, {}, None
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("### "):
            bench = line[4:].strip()
        elif line.startswith("| Metric"):
            header = cells
        elif line.startswith("| ") and bench and header:
            rows.setdefault(cells[0].rstrip(" *"), []).append((bench, dict(zip(header, cells))))
    for metric, items in rows.items():
        out += [f"| {metric} | p0 | p50 | p90 | p100 | samples |", "|---|---:|---:|---:|---:|---:|"]
        out += [f"| {b} | " + " | ".join(c.get(k, "") for k in ("p0", "p50", "p90", "p100", "Samples")) + " |" for b, c in items]
        out.append("")
    return out or ["```", output.strip(), "```"]
