"""The figures as target rows: [(target, verdict, figures)], PASS or FAIL against the issues'
targets, INFO where none is set."""
import math

from .proc import med

# Targets (the issues'). "20 MB" is 20 × 10^6 bytes of VmHWM.
MP3_VS_MPG123, WAV_MARGINAL_VS_APLAY, RSS_MB, RSS_GROWTH_MIB = 1.02, 1.0, 20.0, 2.0
ENQUEUE_P99_MS, CLIENT_CPU_MS, PREEMPT_P99_MS, IDLE_CPU_MS = 5.0, 5.0, 2.0, 1.0
ALERT_P50_MS, MIX_PER_STREAM_PCT = 15.0, 0.5
# An alert over a playing item, spawn to its first frame as the daemon counts it (issue 30).
ALERT_OVER_P50_MS, ALERT_OVER_P99_MS = 10.0, 20.0
# Scale (issue 30): SCALE_ITEMS queued; a restart restores them; bytes of VmRSS per queued item.
SCALE_RESTORE_S, SCALE_BYTES_PER_ITEM = 0.5, 1000
ALERT_HEARD_P50_MS, ALERT_HEARD_P90_MS = 5.0, 15.0  # an alert over a playing stream, as heard, beyond alone (issue 30)
SAY_P50_MS = 60.0
# Loudness: a never-measured 30 s clip's first frame at most this much later than with loudness
# off (p50), a measured one's under LOUDNESS_CACHED_MS later; analysis CPU below ffmpeg's.
LOUDNESS_FRESH_MS, LOUDNESS_CACHED_MS = 30.0, 1.0
# Zones: spawn of `play --zone all` to the first frame on every host, p99, by number of hosts (the
# 300 ms common start lead included); the hosts' start spread, p99 (3 hosts); idle wake-ups a minute.
ZONE_ALL_P99_MS, ZONE_SPREAD_P99_MS, ZONE_WAKEUPS_PER_MIN = {3: 500.0, 30: 1000.0}, 30.0, 10

# Rows renamed since an earlier report: (old name, new name), for the previous-run column.
RENAMED = ("MP3 CPU ≤ 1.05× mpg123 (mp3-1min, informative)", "MP3 CPU ÷ mpg123, start-up included (mp3-1min)")


def ratio_rows(res):
    """[(target, verdict, figures)] of every measured target and informative row."""
    V = []
    P = res.get("players", {})

    def paired(case, ref, key="cpu"):
        a, b = P[case]["runs"]["announce"], P[case]["runs"][ref]
        return [x[key] / y[key] for x, y in zip(a, b) if y[key] > 0]

    def cpu_row(case, ref, limit, name):
        if case not in P:
            return
        pr = paired(case, ref)
        a, b = (med(r["cpu"] for r in P[case]["runs"][p]) for p in ("announce", ref))
        V.append((name, "INFO" if limit is None else "PASS" if med(pr) <= limit else "FAIL",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s)"))

    cpu_row("mp3-60min", "mpg123", MP3_VS_MPG123, f"MP3 CPU ≤ {MP3_VS_MPG123:.2f}× mpg123 (mp3-60min)")
    cpu_row("mp3-1min", "mpg123", None, RENAMED[1])
    if "wav-60min" in P:
        a, b = P["wav-60min"]["runs"]["announce"], P["wav-60min"]["runs"]["aplay"]
        secs = P["wav-60min"]["seconds"] - 1.0
        daemon = [x["daemon_cpu"] - x["short"]["daemon_cpu"] for x in a]
        both = [x["cpu"] - x["short"]["cpu"] for x in a]
        other = [y["cpu"] - y["short"]["cpu"] for y in b]
        pr = [x / y for x, y in zip(daemon, other) if y > 0]
        V.append(("WAV: daemon's CPU per second of audio ≤ 1.0× aplay's (wav-60min minus wav-1s)",
                  "PASS" if med(pr) <= WAV_MARGINAL_VS_APLAY else "FAIL",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; per second of audio: daemon "
                  f"{med(daemon) / secs * 1e6:.2f} µs, aplay {med(other) / secs * 1e6:.2f} µs; client + daemon "
                  f"{med(x / y for x, y in zip(both, other) if y > 0):.3f}× aplay)"))
    for case in ("wav-10min", "wav-1min"):
        cpu_row(case, "aplay", None, f"WAV CPU ÷ aplay, whole runs ({case})")
    for case in ("mp3-1min", "mp3-60min", "wav-1min", "wav-60min"):
        if case in P:
            a = P[case]["runs"]["announce"]
            kib = med(r["rss_kib"] for r in a)
            c, d = med(r["client_rss_kib"] for r in a), med(r["daemon_rss_kib"] for r in a)
            V.append((f"announce peak RSS ≤ 20 MB ({case})", "PASS" if kib * 1024 / 1e6 <= RSS_MB else "FAIL",
                      f"{kib * 1024 / 1e6:.1f} MB ({kib / 1024:.1f} MiB): the larger of client {c * 1024 / 1e6:.1f} MB "
                      f"and daemon {d * 1024 / 1e6:.1f} MB"))
    for s, l in (("mp3-1min", "mp3-60min"), ("wav-1min", "wav-60min")):
        if s in P and l in P:
            a, b = (med(r["rss_kib"] for r in P[c]["runs"]["announce"]) / 1024 for c in (s, l))
            V.append((f"peak RSS does not grow with length ({s} → {l}: ≤ +2 MiB)",
                      "PASS" if b - a <= RSS_GROWTH_MIB else "FAIL", f"{a:.1f} → {b:.1f} MiB ({b - a:+.1f} MiB)"))

    T = res.get("tempo")
    if T:
        runs = T["runs"]
        for ref, what in (("announce", "plain playback"), ("sox tempo 2", "`sox FILE -t alsa null tempo 2`")):
            pr = [x["cpu"] / y["cpu"] for x, y in zip(runs["announce --rate 2"], runs[ref]) if y["cpu"] > 0]
            a, b = (med(r["cpu"] for r in runs[p]) for p in ("announce --rate 2", ref))
            V.append((f"tempo: `announce play --rate 2` CPU ÷ {what} (mp3-60min → null)", "INFO",
                      f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s); no target set"))

    D = res.get("daemon")
    if D:
        for r in D.get("enqueue", []):
            for key, what in (("one", "one connection"), ("each", "a connection per request")):
                s = r[key]
                V.append((f"daemon: enqueue round trip p99 ≤ 5 ms ({what}, runtime dir on {r['fs']} {r['dir']})",
                          "PASS" if s["p99"] <= ENQUEUE_P99_MS else "FAIL",
                          f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} requests)"))
        for s in [r["cli_cpu"] for r in D.get("enqueue", [])[:1]]:
            V.append((f"client: warm `announce play -q --no-wait` CPU ≤ {CLIENT_CPU_MS:g} ms (median; runtime dir on tmpfs)",
                      "PASS" if s["p50"] <= CLIENT_CPU_MS else "FAIL",
                      f"p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.2f} ms ({s['n']} runs; user + system "
                      "of the client process)"))
        for r in D.get("enqueue", []):
            s = r["cli"]
            V.append((f"daemon: `announce play --no-wait` wall, process start to exit (runtime dir on {r['fs']})", "INFO",
                      f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms ({s['n']} runs); no target set"))
        for r in D.get("preempt", []):
            s = r["latency"]
            V.append((f"daemon: preemption to first frame p99 ≤ {PREEMPT_P99_MS:g} ms (`null`, normal {r['normal']} looping)",
                      "PASS" if s["p99"] <= PREEMPT_P99_MS else "FAIL",
                      f"p99 {s['p99']:.2f} ms (p50 {s['p50']:.2f}, max {s['max']:.2f}; {s['n']} preemptions; "
                      + ", ".join(f"{k} {v}" for k, v in r["outcomes"].items()) + ")"))
        for r in D.get("preempt", []):
            s = r["resume"]
            V.append((f"daemon: resumption after the preempting item, to its `started` event (normal {r['normal']})",
                      "INFO", f"p50 {s['p50']:.1f} ms, p99 {s['p99']:.1f} ms, max {s['max']:.1f} ms; no target set"))
        for r in D.get("cold", []):
            s, e = r["first"], r["exit"]
            V.append((f"daemon: cold `announce play` with auto-start to first frame ({r['file']}, runtime dir on {r['fs']})",
                      "INFO", f"p50 {s['p50']:.1f} ms, max {s['max']:.1f} ms ({s['n']} runs; client exit p50 "
                      f"{e['p50']:.1f} ms); no target set"))
        for name, r in D.get("idle", {}).items():
            V.append((f"daemon: idle CPU < 1 ms over {r['seconds']:.0f} s ({name})",
                      "PASS" if r["cpu_us"] < IDLE_CPU_MS * 1e3 else "FAIL",
                      f"{r['cpu_us']:.0f} µs (the process's CPU clock, every thread)"))
            V.append((f"daemon: idle wake-ups = 0 over {r['seconds']:.0f} s ({name})", "PASS" if r["wakeups"] == 0 else "FAIL",
                      f"{r['wakeups']} context switches, {r['threads']} threads"))
        for m in [D["memory"]] if "memory" in D else []:
            s10, s1k, more = (m["snapshots"][k] for k in ("10", str(m["plays"]), str(m["more"])))
            V.append((f"daemon: VmHWM ≤ 20 MB after {m['plays']} plays", "PASS" if s1k["VmHWM"] * 1024 / 1e6 <= RSS_MB else "FAIL",
                      f"{s1k['VmHWM'] * 1024 / 1e6:.1f} MB ({s1k['VmHWM'] / 1024:.1f} MiB)"))
            g = (s1k["VmRSS"] - s10["VmRSS"]) / 1024
            V.append((f"daemon: VmRSS does not grow with plays (10 → {m['plays']}: ≤ +2 MiB)", "PASS" if g <= RSS_GROWTH_MIB else "FAIL",
                      f"{s10['VmRSS'] / 1024:.1f} → {s1k['VmRSS'] / 1024:.1f} MiB ({g:+.2f} MiB, {g * 1024 / (m['plays'] - 10):+.2f} "
                      "KiB per play)"))
            g2 = (more["VmRSS"] - s1k["VmRSS"]) / 1024
            V.append((f"daemon: VmRSS beyond {m['plays']} plays", "INFO",
                      f"{m['plays']} → {m['more']}: {g2:+.2f} MiB ({g2 * 1024 / (m['more'] - m['plays']):+.2f} KiB per play); "
                      f"VmRSS {more['VmRSS'] / 1024:.1f} MiB, VmHWM {more['VmHWM'] / 1024:.1f} MiB after {m['more']} "
                      f"(outcomes: " + ", ".join(f"{k} {v}" for k, v in m["outcomes"].items()) + "); no target set"))

    Z = res.get("scale")
    if Z:
        n, e = Z["items"], Z["enqueue"]
        per = (Z["queued"]["VmRSS"] - Z["before"]["VmRSS"]) * 1024 / n
        V.append((f"scale: enqueue round trip p99 ≤ {ENQUEUE_P99_MS:g} ms with {n} items queued", "PASS" if e["p99"] <= ENQUEUE_P99_MS else "FAIL",
                  f"p99 {e['p99']:.2f} ms (p50 {e['p50']:.2f}, max {e['max']:.2f}; {e['n']} requests)"))
        V.append((f"scale: daemon VmRSS per queued item ≤ {SCALE_BYTES_PER_ITEM} bytes ({n} items)",
                  "PASS" if per <= SCALE_BYTES_PER_ITEM else "FAIL",
                  f"{per:.0f} bytes ({Z['before']['VmRSS'] / 1024:.1f} → {Z['queued']['VmRSS'] / 1024:.1f} MiB)"))
        ready = [r["ready"] for r in Z["restarts"]]
        listed = [r["listed"] for r in Z["restarts"]]
        V.append((f"scale: a restart restores the queue ≤ {SCALE_RESTORE_S:g} s ({Z['total']} items; start to ready, "
                  "the socket answering)", "PASS" if max(ready) <= SCALE_RESTORE_S else "FAIL",
                  f"max {max(ready):.3f} s, median {med(ready):.3f} s ({len(ready)} restarts); to a `status` listing every "
                  f"item: median {med(listed):.3f} s"))
        peak = max(r["mem"]["VmHWM"] for r in Z["restarts"]) / 1024
        after = med(r["mem"]["VmRSS"] for r in Z["restarts"]) / 1024
        V.append((f"scale: daemon memory after restoring {Z['total']} items", "INFO",
                  f"VmHWM {peak:.1f} MiB, VmRSS {after:.1f} MiB after its `status`; no target set"))

    for r in res.get("alert", []):
        where = f"`{r['device']}`" + (", over a playing stream" if r["over_stream"] else "")
        w, c = r["warm"], r["cold"]
        if r["device"] == "null":
            V.append((f"alert: warm `announce alert` to first frame p50 ≤ 15 ms ({where})",
                      "PASS" if w["p50"] <= ALERT_P50_MS else "FAIL",
                      f"p50 {w['p50']:.1f} ms, p90 {w['p90']:.1f} ms, max {w['max']:.1f} ms ({w['n']} alerts); the daemon "
                      f"alone (request to first frame) p50 {r['request']['p50']:.2f} ms; client CPU p50 {r['cpu']['p50']:.1f} ms"))
        elif r["over_stream"]:
            ok = w["p50"] <= ALERT_OVER_P50_MS and w.get("p99", math.inf) <= ALERT_OVER_P99_MS
            V.append((f"alert: warm `announce alert` to first frame p50 ≤ {ALERT_OVER_P50_MS:g} ms, p99 ≤ "
                      f"{ALERT_OVER_P99_MS:g} ms ({where})", "PASS" if ok else "FAIL",
                      f"p50 {w['p50']:.1f} ms, p99 {w.get('p99', math.nan):.1f} ms, max {w['max']:.1f} ms ({w['n']} alerts; "
                      f"the daemon alone p50 {r['request']['p50']:.2f} ms)"))
        else:
            V.append((f"alert: warm `announce alert` to first frame ({where})", "INFO",
                      f"p50 {w['p50']:.1f} ms, p90 {w['p90']:.1f} ms, max {w['max']:.1f} ms ({w['n']} alerts; the daemon "
                      f"alone p50 {r['request']['p50']:.2f} ms); no target set"))
        V.append((f"alert: cold `announce alert` (a file not yet cached) to first frame ({where})", "INFO",
                  f"p50 {c['p50']:.1f} ms, p90 {c['p90']:.1f} ms, max {c['max']:.1f} ms ({c['n']} alerts); no target set"))

    H = res.get("alert_heard")
    if H and H["alone"].get("n") and H["over"].get("n"):
        d50, d90 = H["over"]["p50"] - H["alone"]["p50"], H["over"]["p90"] - H["alone"]["p90"]
        V.append(("alert: as heard on the sink's monitor, over a playing stream vs alone: p50 ≤ +5 ms, p90 ≤ +15 ms (`pulse`)",
                  "PASS" if d50 <= ALERT_HEARD_P50_MS and d90 <= ALERT_HEARD_P90_MS else "FAIL",
                  f"p50 {d50:+.1f} ms, p90 {d90:+.1f} ms (spawn to heard: alone p50 {H['alone']['p50']:.1f} / p90 "
                  f"{H['alone']['p90']:.1f} ms, over the stream p50 {H['over']['p50']:.1f} / p90 {H['over']['p90']:.1f} ms; "
                  f"{H['alone']['n']} + {H['over']['n']} alerts, {H['missed']} not found; the recorder's lag is in both)"))

    S = res.get("speech")
    if S:
        f, k, e = S["fresh"], S["cached"], S["espeak"]
        V.append(("speech: warm `announce say` (a new sentence, espeak-ng) to first frame p50 ≤ 60 ms (`null`)",
                  "PASS" if f["p50"] <= SAY_P50_MS else "FAIL",
                  f"p50 {f['p50']:.1f} ms, p90 {f['p90']:.1f} ms, max {f['max']:.1f} ms ({f['n']} utterances); "
                  f"espeak-ng alone, spawn to its first sample: p50 {e['p50']:.1f} ms ({f['p50'] / e['p50']:.2f}×); "
                  f"client CPU p50 {S['cpu']['p50']:.1f} ms"))
        V.append(("speech: `announce say` of a sentence just said (the render cache) to first frame (`null`)", "INFO",
                  f"p50 {k['p50']:.1f} ms, p90 {k['p90']:.1f} ms, max {k['max']:.1f} ms; no engine runs; no target set"))

    L = res.get("loudness")
    if L:
        for f in L["first"]:
            fresh, cached, off = (f[k]["p50"] for k in ("fresh", "cached", "off"))
            what = f"{f['kind'].upper()} {f['seconds']} s"
            V.append((f"loudness: a {what} clip never measured, first frame later than with loudness off (p50)"
                      + (f" ≤ {LOUDNESS_FRESH_MS:.0f} ms" if f["seconds"] == 30 else ""),
                      "PASS" if f["seconds"] == 30 and fresh - off <= LOUDNESS_FRESH_MS else "FAIL" if f["seconds"] == 30 else "INFO",
                      f"+{fresh - off:.1f} ms (p50 {fresh:.1f} ms, p90 {f['fresh']['p90']:.1f} ms; off {off:.1f} ms; {f['fresh']['n']} plays)"))
            V.append((f"loudness: the {what} clip measured (the cache), first frame later than with loudness off (p50) < {LOUDNESS_CACHED_MS:.0f} ms",
                      "PASS" if cached - off < LOUDNESS_CACHED_MS else "FAIL",
                      f"{cached - off:+.2f} ms (p50 {cached:.2f} ms, off {off:.2f} ms)"))
        for a in L["analysis"]:
            cpu = a["per_minute_s"]
            V.append((f"loudness: the stage's CPU per minute of audio (measuring, gain, limiter) ÷ `ffmpeg -af ebur128=peak=true`'s < 1 ({a['file']})",
                      "PASS" if cpu["stage"] < cpu["ffmpeg"] else "FAIL",
                      f"{cpu['stage'] / cpu['ffmpeg']:.2f}× ({cpu['stage'] * 1e3:.0f} ms vs {cpu['ffmpeg'] * 1e3:.0f} ms per minute)"))
            V.append((f"loudness: `announce info` (integrated, range and true peak) CPU per minute ÷ ffmpeg's ({a['file']})", "INFO",
                      f"{cpu['info'] / cpu['ffmpeg']:.2f}× ({cpu['info'] * 1e3:.0f} ms vs {cpu['ffmpeg'] * 1e3:.0f} ms per minute); no target set"))

    N = res.get("network")
    if N:
        u, q = N["url"], N["path"]
        V.append((f"network: `announce play http://127.0.0.1/…` to first frame on loopback ({N['file']}, `null`)", "INFO",
                  f"p50 {u['p50']:.1f} ms, p99 {u['p99']:.1f} ms, max {u['max']:.1f} ms ({u['n']} plays); the same file "
                  f"by path p50 {q['p50']:.1f} ms, p99 {q['p99']:.1f} ms; no target set"))
        runs = N["stream"]["runs"]
        pr = [x["cpu"] / y["cpu"] for x, y in zip(runs["announce"], runs["mpg123"]) if y["cpu"] > 0]
        a, b = (med(r["cpu"] for r in runs[p]) for p in ("announce", "mpg123"))
        V.append(("network: the 60-minute MP3 over http, CPU ÷ `mpg123 -o alsa -a null http://…`", "INFO",
                  f"{med(pr):.3f}× (rounds {min(pr):.3f}–{max(pr):.3f}×; medians {a:.3f} s vs {b:.3f} s; announce: client "
                  f"+ daemon, its download included); no target set"))

    M = res.get("mixing")
    if M:
        by = {}
        for r in M["cases"]:
            per = r["cpu_pct"] / r["streams"]
            by[(r["rate"], r["streams"])] = r
            what = f"{r['streams']} stream{'s' if r['streams'] > 1 else ''} at {r['rate'] / 1000:g} kHz"
            shown = (f"{per:.3f}% per stream ({r['cpu_pct']:.2f}% in all over {r['seconds']:.0f} s; PulseAudio server "
                     f"{r['pulseaudio_pct']:.2f}% besides; {r['ctxsw_per_s']:.0f} context switches/s; underruns: "
                     f"{'; '.join(r['underruns']) or 'none'})")
            if r["rate"] == 48000:
                V.append((f"mixing: daemon CPU < 0.5% of a core per stream ({what}, paced `pulse`)",
                          "PASS" if per < MIX_PER_STREAM_PCT else "FAIL", shown))
            else:
                V.append((f"mixing: daemon CPU per stream ({what}, resampled to 48 kHz, paced `pulse`)", "INFO",
                          shown + "; no target set"))
        for rate in (48000, 44100):
            if (rate, 4) in by and (rate, 16) in by:
                V.append((f"mixing: marginal daemon CPU per added stream ({rate / 1000:g} kHz, 4 → 16 streams)", "INFO",
                          f"{(by[(rate, 16)]['cpu_pct'] - by[(rate, 4)]['cpu_pct']) / 12:.3f}% of a core per stream "
                          "(the device's fixed cost left out); no target set"))
        for r in [by.get((48000, 1))] if by.get((48000, 1), {}).get("kept_alert") else []:
            k = r["kept_alert"]
            V.append(("alert: the alert's stream kept open beside a playing one, its cost (1 stream at 48 kHz, paced `pulse`)",
                      "INFO", f"daemon {k['cpu_pct']:.2f}% of a core, {k['ctxsw_per_s']:.0f} context switches/s, PulseAudio "
                      f"{k['pulseaudio_pct']:.2f}%; the stream alone: {r['cpu_pct']:.2f}%, {r['ctxsw_per_s']:.0f}/s, "
                      f"{r['pulseaudio_pct']:.2f}%; no target set"))
        if "idle_after" in M:
            i = M["idle_after"]
            V.append(("mixing: idle wake-ups = 0 once the device closed after the streams and an alert (paced `pulse`)",
                      "PASS" if i["ctxsw_per_s"] == 0 else "FAIL",
                      f"{i['ctxsw_per_s']:.1f} context switches/s, {i['cpu_pct']:.3f}% of a core over {i['seconds']:.0f} s"))
        if M["references"]:
            V.append(("mixing: reference, one stream through ALSA `pulse` by aplay", "INFO",
                      "; ".join(f"`{r['command']}` {r['cpu_pct']:.2f}%" for r in M["references"]) + "; no target set"))

    for r in res.get("duck", []):
        on = f"{r['server']}, {r['rounds']} rounds"
        V.append((f"duck others: announce's clip heard → another application's stream at the duck level ({r['server']})", "INFO",
                  f"p50 {r['level_1db']['p50']:.0f} ms, p99 {r['level_1db']['p99']:.0f} ms to within 1 dB of it (90 % of "
                  f"the way: p50 {r['level_90']['p50']:.0f} ms, p99 {r['level_90']['p99']:.0f} ms; {on}); no target set"))
        V.append((f"duck others: ramps, 10–90 % ({r['server']})", "INFO",
                  f"down p50 {r['down']['p50']:.0f} ms (max {r['down']['max']:.0f}), up p50 {r['up']['p50']:.0f} ms "
                  f"(max {r['up']['max']:.0f}); depth {min(r['depth_db']):.2f} to {max(r['depth_db']):.2f} dB for -12 dB; "
                  f"raised cosines of 150 and 400 ms: 88 and 236 ms; no target set"))
        V.append((f"duck others: restored exactly ({r['server']})", "PASS" if r["pactl_exact"] == r["rounds"] else "FAIL",
                  f"pactl's volume after = before in {r['pactl_exact']}/{r['rounds']} rounds (largest difference "
                  f"{r['pactl_db_max']:.3f} dB; seen back {r['restore_seen']['p50']:.0f} ms after the play returned, p50); "
                  f"level after vs before on the monitor {min(r['after_db']):+.3f} to {max(r['after_db']):+.3f} dB"))

    for r in res.get("zones", []):
        n, lead = r["hosts"], r["lead"] * 1e3
        a, sp, late, dl = r["all"], r["spread"], r["late"], r["delivery"]
        limit = ZONE_ALL_P99_MS.get(n)
        V.append((f"zones: `play --zone all` → first frame on every host p99 ≤ {limit:.0f} ms ({n} hosts, the "
                  f"{lead:.0f} ms common start lead included)", "PASS" if a["p99"] <= limit else "FAIL",
                  f"p99 {a['p99']:.0f} ms (p50 {a['p50']:.0f}, max {a['max']:.0f}; {a['n']} plays); without the lead: "
                  f"p50 {a['p50'] - lead:.0f} ms, p99 {a['p99'] - lead:.0f} ms = the client to its send (p50 "
                  f"{r['client']['p50']:.0f} ms: connect, read the statuses) + the last host's first frame after the "
                  f"common start time (p50 {late['p50']:.1f} ms, p99 {late['p99']:.1f} ms); client exit p50 "
                  f"{r['exit']['p50']:.0f} ms"))
        V.append((f"zones: `play --zone all` reports every host ({n} hosts)", "PASS" if min(r["reported"]) == n else "FAIL",
                  f"{min(r['reported'])} of {n} hosts in its worst play ({sum(x == n for x in r['reported'])} of "
                  f"{len(r['reported'])} plays complete); every host played every play (its own events)"))
        V.append((f"zones: the play queued on every host within the {lead:.0f} ms lead, p99 ({n} hosts)",
                  "PASS" if dl["p99"] < lead else "FAIL",
                  f"p99 {dl['p99']:.0f} ms (p50 {dl['p50']:.0f}, max {dl['max']:.0f}) from the send (the play's `sent`) "
                  f"to the last host's `queued` event: through the broker, stored and spooled"))
        shown = (f"p99 {sp['p99']:.1f} ms (p50 {sp['p50']:.1f}, max {sp['max']:.1f}; {sp['n']} plays): max − min of "
                 f"the hosts' first frames, one machine and one clock, so the hosts' own jitter, not clock error")
        if n <= 3:
            V.append((f"zones: start spread between hosts p99 ≤ {ZONE_SPREAD_P99_MS:.0f} ms ({n} hosts)",
                      "PASS" if sp["p99"] <= ZONE_SPREAD_P99_MS else "FAIL", shown))
        else:
            V.append((f"zones: start spread between hosts ({n} hosts)", "INFO",
                      shown + f" ({n} daemons woken at once on this machine's cores); no target set"))
        idle = r["idle"]
        secs, cpu, wk = idle["seconds"], idle["cpu_us"], idle["wakeups"]
        V.append((f"zones: idle CPU < 1 ms per daemon over {secs:.0f} s, the bridge connected ({n} hosts)",
                  "PASS" if max(cpu) < IDLE_CPU_MS * 1e3 else "FAIL",
                  f"at most {max(cpu):.0f} µs (median {med(cpu):.0f} µs, the {n} together {sum(cpu):.0f} µs; each process's CPU clock, every thread)"))
        limit = max(2, math.ceil(ZONE_WAKEUPS_PER_MIN * secs / 60))
        threads = sorted(idle["by_thread"].items(), key=lambda t: -t[1])
        V.append((f"zones: idle wake-ups ≤ {ZONE_WAKEUPS_PER_MIN} a minute per daemon, the bridge connected ({n} hosts)",
                  "PASS" if max(wk) <= limit else "FAIL",
                  f"at most {max(wk)} in {secs:.0f} s (limit {limit}; median {med(wk):g}); by thread, all daemons: "
                  + (", ".join(f"{k} {v}" for k, v in threads) or "none")))

    C = res.get("callgrind")
    for kind in ("mp3", "wav"):
        if f"{kind}-1min" in (C or {}):
            a, b = C[f"{kind}-0.1s"], C[f"{kind}-1min"]
            V.append((f"instructions per minute of {kind.upper()} audio ÷ {a['reference']} (callgrind, 1min − 0.1s)", "INFO",
                      f"{(b['announce'] - a['announce']) / max(1, b['ref'] - a['ref']):.2f}× ({(b['announce'] - a['announce']) / 1e6:.1f} M "
                      f"vs {(b['ref'] - a['ref']) / 1e6:.1f} M); start-up {a['announce'] / 1e6:.1f} M vs {a['ref'] / 1e6:.1f} M "
                      "(the 0.1 s clip); no target set"))
    K = res.get("client_cost")
    if K:
        c, h = K["client"], K["hello"]
        json = c["json_encode"] + c["json_decode"]
        rest = c["total"] - c["parser"] - c["loader"] - c["run"]
        V.append(("client: a warm `announce play -q --no-wait`, instructions by part (callgrind, inclusive)", "INFO",
                  f"{c['total'] / 1e6:.1f} M: swift-argument-parser parsing `play`'s options {c['parser'] / 1e6:.1f} M "
                  f"({c['parser'] / c['total']:.0%}); the dynamic loader {c['loader'] / 1e6:.1f} M (a static Swift hello "
                  f"world's whole run {h['total'] / 1e6:.1f} M, its loader {h['loader'] / 1e6:.1f} M); the request "
                  f"(Play.run) {c['run'] / 1e6:.1f} M, of which FoundationEssentials' JSON {json / 1e6:.1f} M; the rest "
                  f"{rest / 1e6:.1f} M; no target set"))
    mach = res.get("machine")
    if mach:
        V.append(("binary: stripped size, as `make install` installs it", "INFO",
                  f"{mach['stripped_bytes'] / 1e6:.1f} MB ({mach['binary_bytes'] / 1e6:.1f} MB unstripped); no target set"))
    return V
