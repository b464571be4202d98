#!/usr/bin/env python3
"""Reliability campaign for announce (issue 11 §6): `make stress`, bounded (≤ 15 min).

    scripts/stress.py BINARY [--files N] [--kills N] [--seed N] [--json OUT]

Six parts, each printing its figures and failing the run (exit 1) when a promise breaks:

  decoder   N mutated files (byte flips, truncation, huge header fields, duplicated chunks,
            inserted garbage) of every format sox/ffmpeg can write: `announce info` on each,
            and a tenth played through one daemon on ALSA `null`. 0 crashes, 0 hangs, the
            daemon alive and still the same process.
  protocol  malformed, binary, wrong-typed and huge-number lines, a 10 MB line, slow
            half-lines, 500 connections at once, on a daemon holding 10 paused items:
            an error reply each, no crash, the 10 items intact.
  kills     SIGKILL of the daemon N times at random moments, 10 items queued, one request
            being enqueued (10 files; every other kill aimed within 10 ms of its first item's
            `queued` event): every acknowledged item plays exactly once, none of a request that
            was not acknowledged plays (a client cut off sends its request once more, to the
            daemon it starts: counted, with those found restored and those discarded).
  fulldisk  the spool on a full tmpfs (root only): a clear error on enqueue, nothing queued
            lost (also across a kill and restart while full), recovery when space returns.
  users     another local user (setpriv, root only) can neither connect, read the spool,
            nor block or hijack the runtime directory (/tmp/announce-UID squatted 4 ways).
  cold      N cold starts, two at a time: a 0.1 s clip played on `null` by a client that
            starts its own daemon (a new runtime directory each), then SIGTERM: every play
            exits 0 and every daemon.log has the item's `started on` and `played` lines (a
            device open sends stderr elsewhere for a moment while other threads log).

Python 3 standard library only; sox and ffmpeg make the seed files.
"""

import argparse
import concurrent.futures
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

# The daemon's client (its socket protocol, runtime directories, starting and stopping daemons)
# is scripts/announce_tools/, the one bench.py uses too.
from announce_tools.client import Closed
from announce_tools.daemons import Runtime, lock_pid
from announce_tools.proc import run, wait_exit

RESULTS = {}
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"  FAIL: {message}", flush=True)
    return condition


# ---------------------------------------------------------------- decoder fuzz

SEED_FORMATS = ["wav", "aiff", "aifc", "au", "w64", "caf", "voc", "sf", "sph", "flac", "ogg", "mp3",
                "avr", "8svx", "wve", "sd2", "mat", "paf", "xi", "htk"]


def make_seeds(directory):
    os.makedirs(directory)
    base = os.path.join(directory, "base.wav")
    subprocess.run(["sox", "-n", "-r", "22050", "-c", "2", "-b", "16", base, "synth", "0.2", "sine", "440"], check=True)
    seeds = []
    for extension in SEED_FORMATS:
        path = os.path.join(directory, "seed." + extension)
        # cwd: libsndfile writing SD2 leaves an empty `._` (its resource fork) in the working directory.
        if subprocess.run(["sox", base, path], capture_output=True, cwd=directory).returncode == 0:
            seeds.append(path)
    for name, args in [("seed-float.wav", ["sox", base, "-e", "floating-point", "-b", "32"]),
                       ("seed-24.wav", ["sox", base, "-b", "24"]),
                       ("seed-rifx.wav", ["sox", base, "-B"]),
                       ("seed-mono.flac", ["sox", base, "-c", "1"])]:
        path = os.path.join(directory, name)
        if subprocess.run(args + [path], capture_output=True).returncode == 0:
            seeds.append(path)
    for name, codec in [("seed-ff.opus", "libopus"), ("seed-ff.mp3", "libmp3lame"), ("seed-ff.ogg", "libvorbis")]:
        path = os.path.join(directory, name)
        if subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", base, "-c:a", codec, path]).returncode == 0:
            seeds.append(path)
    return seeds


def chunks(data):
    """(offset, length) of the top-level chunks of a RIFF/RIFX/RF64/FORM file, else []."""
    if data[:4] in (b"RIFF", b"RIFX", b"FORM"):
        endian = ">" if data[:4] in (b"RIFX", b"FORM") else "<"
        found, offset = [], 12
        while offset + 8 <= len(data):
            size = struct.unpack(endian + "I", data[offset + 4:offset + 8])[0]
            length = 8 + size + (size & 1)
            found.append((offset, min(length, len(data) - offset)))
            offset += length
        return found
    return []


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.choice(["flip", "flip", "truncate", "huge", "huge", "duplicate", "insert", "mixed"])
    kinds = [rng.choice(["flip", "truncate", "huge", "duplicate", "insert"]) for _ in range(3)] if kind == "mixed" else [kind]
    for step in kinds:
        if not data:
            break
        if step == "flip":
            for _ in range(rng.randint(1, 16)):
                # Headers are where the decoders branch: bias the flips there.
                position = rng.randrange(min(len(data), 512)) if rng.random() < 0.6 else rng.randrange(len(data))
                data[position] ^= 1 << rng.randrange(8)
        elif step == "truncate":
            del data[rng.randrange(len(data)):]
        elif step == "huge":
            position = rng.randrange(0, max(1, min(len(data) - 4, 256)))
            value = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0, 0xFFFFFFFE, 0x10000000])
            data[position:position + 4] = value.to_bytes(4, rng.choice(["little", "big"]))
        elif step == "duplicate":
            found = chunks(bytes(data))
            if found:
                offset, length = rng.choice(found)
            else:
                offset = rng.randrange(len(data))
                length = min(len(data) - offset, rng.randint(16, 4096))
            copy = data[offset:offset + length]
            data[offset:offset] = copy
        else:
            position = rng.randrange(len(data) + 1)
            data[position:position] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return bytes(data), kind


def decoder_fuzz(binary, work, count, rng, workers):
    print(f"decoder fuzz: {count} mutated files", flush=True)
    seeds = make_seeds(os.path.join(work, "seeds"))
    originals = {seed: open(seed, "rb").read() for seed in seeds}
    files_dir = os.path.join(work, "mutants")
    failures_dir = os.path.join(work, "failures")
    os.makedirs(files_dir)
    os.makedirs(failures_dir)
    runtime = Runtime.isolated(binary, os.path.join(work, "rt-decoder"))
    daemon = runtime.start_daemon(os.path.join(work, "decoder-daemon.log"))
    counts = {"crash": 0, "hang": 0, "exit": {}, "kinds": {}, "formats": {}}
    plays = {"queued": 0, "refused": 0, "crash": 0, "hang": 0}

    def one(index):
        seed = rng.choice(seeds)
        data, kind = mutate(originals[seed], random.Random(rng.random()))
        extension = os.path.splitext(seed)[1]
        path = os.path.join(files_dir, f"m{index:05d}{extension}")
        with open(path, "wb") as out:
            out.write(data)
        status, _, _ = runtime.announce("info", path, timeout=10)
        played = "not played"
        if index % 10 == 0:
            played = runtime.announce("play", "--no-wait", "-q", "-d", "null", path, timeout=20)[0]
        return index, path, extension, kind, status, played

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for index, path, extension, kind, status, played in pool.map(one, range(count)):
            counts["kinds"][kind] = counts["kinds"].get(kind, 0) + 1
            counts["formats"][extension] = counts["formats"].get(extension, 0) + 1
            keep = False
            if status is None:
                counts["hang"] += 1
                keep = True
            elif status < 0 or status >= 128:
                counts["crash"] += 1
                keep = True
            else:
                counts["exit"][status] = counts["exit"].get(status, 0) + 1
                keep = status not in (0, 65, 66)
            if played != "not played":
                if played is None:
                    plays["hang"] += 1
                elif played == 0:
                    plays["queued"] += 1
                elif played < 0 or played >= 128:
                    plays["crash"] += 1
                else:
                    plays["refused"] += 1
            if keep:
                shutil.copy(path, failures_dir)
            else:
                os.unlink(path)
            if index % 1000 == 999:
                print(f"  {index + 1} files, {time.monotonic() - started:.0f} s", flush=True)
    drained = runtime.wait_drained(timeout=300)
    status = runtime.status()
    alive = daemon.poll() is None and status is not None and status["pid"] == daemon.pid
    log = open(os.path.join(work, "decoder-daemon.log"), errors="replace").read()
    runtime.stop()
    elapsed = time.monotonic() - started
    RESULTS["decoder"] = {"files": count, "seeds": len(seeds), "formats": sorted(counts["formats"]),
                          "crashes": counts["crash"], "hangs": counts["hang"],
                          "exit_codes": {str(k): v for k, v in sorted(counts["exit"].items())},
                          "mutations": counts["kinds"], "daemon_plays": plays,
                          "daemon_played": log.count(": played"), "daemon_failed": log.count(": failed"),
                          "daemon_alive": alive, "drained": drained, "seconds": round(elapsed)}
    print(f"  {json.dumps(RESULTS['decoder'])}", flush=True)
    check(counts["crash"] == 0, f"decoder: {counts['crash']} crashes (files in {failures_dir})")
    check(counts["hang"] == 0, f"decoder: {counts['hang']} hangs (files in {failures_dir})")
    check(set(counts["exit"]) <= {0, 65, 66}, f"decoder: unexpected exit codes {counts['exit']}")
    check(plays["crash"] == 0 and plays["hang"] == 0, f"decoder: plays through the daemon {plays}")
    check(alive, "decoder: the daemon did not survive")
    check(drained, "decoder: the daemon's queue did not drain within 300 s")


# ---------------------------------------------------------------- protocol fuzz

def protocol_lines(rng):
    lines = [b"", b"{", b"}", b"null", b"[]", b"42", b'"text"', b"{}", b'{"v":1}', b'{"op":"status"}',
             b'{"v":"1","op":"status"}', b'{"v":2,"op":"status"}', b'{"v":-1,"op":"status"}',
             b'{"v":1,"op":"nope"}', b'{"v":1,"op":7}', b'{"v":1,"op":null}', b'{"v":1,"op":["play"]}',
             b'{"v":1,"op":"play"}', b'{"v":1,"op":"play","items":"x"}', b'{"v":1,"op":"play","items":[]}',
             b'{"v":1,"op":"play","items":[1,2]}', b'{"v":1,"op":"play","items":[{}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":""}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"relative.wav"}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/nonexistent.wav"}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/etc/passwd"}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/dev/zero"}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":"loud"}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav"},"priority":"urgent"}]}',
             b'{"v":1,"op":"cancel","ids":"all"}', b'{"v":1,"op":"cancel","ids":[1,2,3]}',
             b'{"v":1,"op":"cancel","ids":["../../etc/passwd"]}', b'{"v":1,"op":"wait","ids":{}}',
             b'{"v":1,"op":"quiet","state":"maybe"}', b'{"v":1,"op":"quiet","state":"on","until":"soon"}',
             b'{"v":99999999999999999999999999999,"op":"status"}', b'{"v":1e308,"op":"status"}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav","gain":1e308}}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav"},"delay":1e308}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav"},"delay":-1e308}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav"},"at":99999999999999999999}]}',
             b'{"v":1,"op":"play","items":[{"clip":{"path":"/x.wav"},"expire":-5}]}',
             b'{"v":1,"op":"quiet","state":"on","until":-1e308}',
             b"[" * 100000 + b"]" * 100000, b'{"a":' * 50000 + b"1" + b"}" * 50000,
             b'{"v":1,"op":"status"' + b',"x":1' * 20000 + b"}",
             b"\xff\xfe\x00\x01", b'{"v":1,"op":"st\xc3\x28tus"}', b'{"v":1,"op":"status\x00"}',
             b'{"v":1,"op":"cancel","ids":[' + b",".join(b'"%012x"' % i for i in range(20000)) + b"]}"]
    for _ in range(200):
        lines.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000))).replace(b"\n", b" "))
    return lines


def protocol_fuzz(binary, work, rng, clip):
    print("protocol fuzz", flush=True)
    runtime = Runtime.isolated(binary, os.path.join(work, "rt-protocol"))
    daemon = runtime.start_daemon(os.path.join(work, "protocol-daemon.log"))
    runtime.announce("pause")
    for _ in range(10):
        check(runtime.announce("play", "--no-wait", "-d", "null", clip)[0] == 0, "protocol: enqueue failed")
    before = [item["id"] for item in runtime.pending()]
    figures = {"lines": 0, "error_replies": 0, "ok_replies": 0, "no_reply": []}

    for line in protocol_lines(rng):
        figures["lines"] += 1
        reply = runtime.request(line, timeout=10)
        if reply is None:
            figures["no_reply"].append(line[:60].decode(errors="replace"))
        elif reply.get("ok"):
            figures["ok_replies"] += 1  # e.g. unknown keys are ignored, unknown ids cancel nothing
            figures.setdefault("accepted", []).append(line[:60].decode(errors="replace"))
        else:
            figures["error_replies"] += 1

    # A 10 MB line: an error reply, then the daemon closes the connection.
    with runtime.connect(timeout=30) as client:
        try:
            client.send_raw(b'{"v":1,"op":"status","x":"' + b"a" * (10 << 20) + b'"}\n')
        except OSError:
            pass  # the daemon may close before taking it all
        reply = client.line()
        figures["10MB_line"] = json.loads(reply).get("error", {}).get("message") if reply else "connection closed"

    # Slow half-lines: 20 clients dribble a status request a few bytes at a time; meanwhile a
    # normal client is answered at once.
    slow = []
    for _ in range(20):
        client = runtime.connect(timeout=30)
        client.send_raw(b'{"v":1,"op":')
        slow.append(client)
    started = time.monotonic()
    answered_meanwhile = runtime.status() is not None
    figures["answer_during_half_lines_ms"] = round((time.monotonic() - started) * 1000)
    for piece in [b'"sta', b'tus"', b"}", b"\n"]:
        for client in slow:
            client.send_raw(piece)
        time.sleep(0.05)
    figures["slow_replies_ok"] = sum(1 for client in slow if json.loads(client.line()).get("ok"))
    for client in slow:
        client.close()

    # 500 connections at once, each asking for the status.
    many = []
    for _ in range(500):
        many.append(runtime.connect(timeout=60))
    for client in many:
        client.send_raw(b'{"v":1,"op":"status"}\n')
    figures["500_connections_ok"] = sum(1 for client in many if json.loads(client.line() or b"{}").get("ok"))
    for client in many:
        client.close()

    after = [item["id"] for item in (runtime.pending() or [])]
    status = runtime.status()
    figures["daemon_alive"] = daemon.poll() is None and status is not None and status["pid"] == daemon.pid
    figures["queued_before"], figures["queued_after_intact"] = len(before), after == before
    runtime.stop()
    RESULTS["protocol"] = figures
    print(f"  {json.dumps(figures)}", flush=True)
    check(not figures["no_reply"], f"protocol: lines without a reply: {figures['no_reply'][:5]}")
    check(figures["10MB_line"] != "connection closed", "protocol: no reply to a 10 MB line")
    check(answered_meanwhile and figures["slow_replies_ok"] == 20, "protocol: slow half-lines")
    check(figures["500_connections_ok"] == 500, f"protocol: {figures['500_connections_ok']} of 500 connections answered")
    check(figures["daemon_alive"], "protocol: the daemon did not survive")
    check(figures["queued_after_intact"], f"protocol: queue changed: {before} -> {after}")


# ---------------------------------------------------------------- kills

def played_paths(runtime, logs):
    """path -> number of times a daemon log says it played; plus paths with a played outcome."""
    counts = {}
    for log in logs:
        if not os.path.exists(log):
            continue
        for line in open(log, errors="replace"):
            if line.rstrip().endswith(": played") and " info: " in line:
                path = line.split(" info: ", 1)[1].split(" ", 1)[1].rsplit(": played", 1)[0]
                counts[path] = counts.get(path, 0) + 1
    outcomes = set()
    directory = os.path.join(runtime.path, "outcomes")
    for name in os.listdir(directory) if os.path.isdir(directory) else []:
        try:
            event = json.load(open(os.path.join(directory, name)))
        except (OSError, ValueError):
            continue
        if event.get("outcome", {}).get("kind") == "played":
            outcomes.add(event.get("path"))
    return counts, outcomes


def kill_campaign(binary, work, rng, rounds, clip):
    print(f"kills: SIGKILL x{rounds}", flush=True)
    runtime = Runtime.isolated(binary, os.path.join(work, "rt-kills"))
    files = os.path.join(work, "kill-clips")
    os.makedirs(files)
    fg_log = os.path.join(work, "kills-daemon.log")
    acknowledged, refused = [], []
    serial = 0

    def clips(n):
        nonlocal serial
        paths = []
        for _ in range(n):
            serial += 1
            path = os.path.join(files, f"c{serial:04d}.wav")
            os.link(clip, path)
            paths.append(path)
        return paths

    moments, answers = [], []
    for round_index in range(rounds):
        status = runtime.status()
        if status is None:
            runtime.start_daemon(fg_log)
            status = runtime.status()
        pid = status["pid"]
        runtime.request(b'{"v":1,"op":"pause"}')
        while len(runtime.pending() or []) < 10:
            batch = clips(2)
            code = runtime.announce("play", "--no-wait", "-d", "null", *batch)[0]
            (acknowledged if code == 0 else refused).extend(batch)
        # A request of 10 being enqueued and the queue playing when the kill comes: at a random
        # moment after the resume (even rounds), or within 10 ms of the daemon announcing the
        # request's first item queued, while it spools the rest (odd rounds).
        batch = clips(10)
        events = runtime.connect(timeout=30)
        events.send({"op": "events"})
        events.line()
        enqueue = subprocess.Popen([binary, "play", "--no-wait", "-d", "null", *batch], env=runtime.env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        runtime.request(b'{"v":1,"op":"resume"}')
        if round_index % 2:
            try:  # the first event that names the request's first item: its `queued`
                while events.next().get("path") != batch[0]:
                    pass
            except Closed:
                pass  # the daemon is gone already
            moment = rng.uniform(0, 0.01)
        else:
            moment = rng.uniform(0, 0.25)
        moments.append(moment)
        time.sleep(moment)
        os.kill(pid, signal.SIGKILL)
        events.close()
        out, err = enqueue.communicate(timeout=60)
        (acknowledged if enqueue.returncode == 0 else refused).extend(batch)
        if enqueue.returncode != 0:
            answers.append(f"{enqueue.returncode}: {err.decode(errors='replace').strip()}")
        wait_exit(pid, 5)  # until the kernel has reaped it (it may not be our child)
        for daemon in runtime.daemons:
            daemon.poll()
    # Whatever answers now (restarted by us, or auto-started by a client) plays the rest.
    if runtime.status() is None:
        runtime.start_daemon(fg_log)
    runtime.request(b'{"v":1,"op":"resume"}')
    drained = runtime.wait_drained(timeout=300)
    logs = [fg_log, os.path.join(runtime.path, "daemon.log")]
    counts, outcomes = played_paths(runtime, logs)
    runtime.stop()
    text = "".join(open(path, errors="replace").read() for path in logs if os.path.exists(path))
    lost = [p for p in acknowledged if counts.get(p, 0) == 0 and p not in outcomes]
    twice = [p for p in acknowledged + refused if counts.get(p, 0) > 1]
    ghosts = [p for p in refused if counts.get(p, 0) > 0 or p in outcomes]
    figures = {"kills": rounds, "acknowledged": len(acknowledged), "not_acknowledged": len(refused),
               "lost": len(lost), "played_twice": len(twice), "unacknowledged_played": len(ghosts),
               "enqueue_clients_failed": len(answers),
               "requests_sent_again_found_restored": text.count("a play request sent again after a restart"),
               "requests_discarded_at_restart": text.count("of a request interrupted before it was accepted"), "unacknowledged_answers": sorted(set(answers)), "drained": drained, "kill_moments_s": [round(m, 3) for m in moments]}
    RESULTS["kills"] = figures
    print(f"  {json.dumps(figures)}", flush=True)
    check(not lost, f"kills: lost {lost[:5]}")
    check(not twice, f"kills: played twice {twice[:5]}")
    check(not ghosts, f"kills: played though not acknowledged {ghosts[:5]}")
    check(drained, "kills: the queue did not drain")


# ---------------------------------------------------------------- full disk

def full_disk(binary, work, clip):
    print("full disk", flush=True)
    if os.geteuid() != 0:
        RESULTS["fulldisk"] = "skipped: needs root to mount a small tmpfs"
        print("  skipped: needs root to mount a small tmpfs", flush=True)
        return
    mount = os.path.join(work, "fullfs")
    os.makedirs(mount)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mount], check=True)
    figures = {}
    try:
        runtime = Runtime.isolated(binary, os.path.join(mount, "rt"))
        log = os.path.join(work, "fulldisk-daemon.log")
        daemon = runtime.start_daemon(log)
        runtime.announce("pause")
        before = []
        for _ in range(5):
            status, out, _ = runtime.announce("play", "--no-wait", "-d", "null", clip)
            before += out.split()
        filler = os.path.join(mount, "filler")
        descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        for size in (4096, 1):  # whole pages, then the last bytes
            try:
                while os.write(descriptor, b"\0" * size) > 0:
                    pass
            except OSError:
                pass
        os.close(descriptor)
        status, out, err = runtime.announce("play", "--no-wait", "-d", "null", clip)
        figures["enqueue_when_full"] = {"exit": status, "stderr": err.strip()}
        figures["queued_intact_when_full"] = [i["id"] for i in runtime.pending() or []] == before
        # Killed and restarted while the disk is still full: nothing queued is lost.
        daemon.kill()
        daemon.wait()
        try:
            runtime.start_daemon(log)
            figures["restart_when_full"] = "ok"
            figures["queued_intact_after_restart"] = sorted(i["id"] for i in runtime.pending() or []) == sorted(before)
        except RuntimeError as error:
            figures["restart_when_full"] = str(error)
            figures["queued_intact_after_restart"] = False
        os.unlink(filler)
        if runtime.status() is None:
            runtime.start_daemon(log)
        status, out, _ = runtime.announce("play", "--no-wait", "-d", "null", clip)
        figures["enqueue_after_space_returns"] = status
        runtime.announce("resume")
        figures["drained"] = runtime.wait_drained(timeout=120)
        figures["played"] = open(log, errors="replace").read().count(": played")
    finally:
        runtime.stop()
        subprocess.run(["umount", mount])
    RESULTS["fulldisk"] = figures
    print(f"  {json.dumps(figures)}", flush=True)
    check(figures["enqueue_when_full"]["exit"] not in (0, None) and "No space left" in figures["enqueue_when_full"]["stderr"],
          f"fulldisk: enqueue on a full disk: {figures['enqueue_when_full']}")
    check(figures["queued_intact_when_full"], "fulldisk: queued items changed when the disk filled")
    check(figures["queued_intact_after_restart"], f"fulldisk: restart while full: {figures['restart_when_full']}")
    check(figures["enqueue_after_space_returns"] == 0, "fulldisk: no recovery when space returned")
    check(figures["drained"] and figures["played"] == 6, f"fulldisk: {figures['played']} of 6 played")


# ---------------------------------------------------------------- cold starts

def cold_starts(binary, work, count, workers):
    print(f"cold starts: {count}, {workers} at a time", flush=True)
    clip = os.path.join(work, "cold.wav")
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", clip, "synth", "0.1", "sine", "440"], check=True)

    def one(index):
        directory = os.path.join(work, f"rt-cold-{index}")
        status, _, err = Runtime(binary, directory).announce("play", "-q", "-d", "null", clip, timeout=30)
        log_path = os.path.join(directory, "daemon.log")
        try:
            pid = lock_pid(directory)
            os.kill(pid, signal.SIGTERM)
            wait_exit(pid, 5)  # until it has exited (a zombie: not our child, init reaps it)
        except (OSError, ValueError):
            pass
        log = open(log_path, errors="replace").read() if os.path.exists(log_path) else ""
        problem = None
        if status != 0:
            problem = f"exit {status}: {err.strip()}"
        elif ": started on null" not in log or ": played" not in log:
            problem = "daemon.log lacks a line: " + " | ".join(log.splitlines())
        if problem is None:
            shutil.rmtree(directory, ignore_errors=True)
        return problem

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        problems = [p for p in pool.map(one, range(count)) if p]
    figures = {"starts": count, "failed": len(problems), "seconds": round(time.monotonic() - started)}
    for problem in problems[:5]:
        check(False, f"cold starts: {problem}")
    RESULTS["cold"] = figures
    print(f"  {json.dumps(figures)}", flush=True)


# ---------------------------------------------------------------- other users

def other_users(binary, work, clip):
    print("other local users", flush=True)
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        RESULTS["users"] = "skipped: needs root and setpriv to act as two other users"
        print("  skipped: needs root and setpriv", flush=True)
        return
    victim, attacker = 61001, 61002
    shared = os.path.join(work, "shared")  # the binary and a clip every user can read
    os.makedirs(shared)
    os.chmod(work, 0o755)
    os.chmod(shared, 0o755)
    binary_copy = shutil.copy(binary, os.path.join(shared, "announce"))
    clip_copy = shutil.copy(clip, os.path.join(shared, "clip.wav"))
    os.chmod(clip_copy, 0o644)
    home = os.path.join(work, "home-victim")
    os.makedirs(home, mode=0o700)
    os.chown(home, victim, victim)
    env = {"PATH": "/usr/bin:/bin", "HOME": home}
    squat = f"/tmp/announce-{victim}"
    trap = f"/tmp/announce-stress-attacker-{os.getpid()}"
    figures = {}
    check(not os.path.exists(f"/run/user/{victim}"), "users: /run/user/61001 exists; the test needs it absent")

    def as_attacker(*argv):
        return run(list(argv), env={"PATH": "/usr/bin:/bin"}, user=attacker)

    def victim_daemon_pid():
        for directory in (squat, os.path.join(home, ".cache/announce")):
            for root, _, names in os.walk(directory) if os.path.isdir(directory) and not os.path.islink(directory) else []:
                if "daemon.lock" in names:
                    try:
                        return lock_pid(root)
                    except ValueError:
                        pass
        return None

    try:
        for kind in ["directory", "file", "fifo", "symlink"]:
            shutil.rmtree(trap, ignore_errors=True)
            as_attacker("mkdir", "-m", "777", trap)
            setup = {"directory": ["mkdir", "-m", "777", squat], "file": ["touch", squat],
                     "fifo": ["mkfifo", "-m", "666", squat], "symlink": ["ln", "-s", trap, squat]}[kind]
            as_attacker(*setup)
            status, _, err = run([binary_copy, "play", "-d", "null", clip_copy], env=env, user=victim, timeout=60)
            again, _, err_again = run([binary_copy, "play", "-d", "null", clip_copy], env=env, user=victim, timeout=60)
            figures[kind] = {"exit": status, "warning": err.strip(), "second_exit": again,
                             "second_stderr": err_again.strip(), "trap_entries": os.listdir(trap)}
            check(status == 0 and again == 0, f"users: squatted by a {kind}: exit {status}, {again}: {err} {err_again}")
            check(err.count("\n") == 1 and "taken by" in err, f"users: squatted by a {kind}: warning {err!r}")
            check(err_again == "", f"users: squatted by a {kind}: the second call warned again: {err_again!r}")
            check(not os.listdir(trap), f"users: squatted by a {kind}: the victim wrote into the attacker's directory")
            # The victim's runtime directory: the attacker can neither connect nor read nor write.
            runtime_dir = os.path.join(home, ".cache/announce", os.listdir(os.path.join(home, ".cache/announce"))[0])
            probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\n"
                     "try:\n s.connect(sys.argv[1]); print('connected')\nexcept OSError as e: print(e.errno)")
            figures[kind]["attacker_connect"] = as_attacker("python3", "-c", probe, os.path.join(runtime_dir, "socket"))[1].strip()
            figures[kind]["attacker_list_spool"] = as_attacker("ls", os.path.join(runtime_dir, "spool"))[0]
            figures[kind]["attacker_create"] = as_attacker("touch", os.path.join(runtime_dir, "x"))[0]
            check(figures[kind]["attacker_connect"] != "connected", "users: the attacker connected to the victim's daemon")
            check(figures[kind]["attacker_list_spool"] != 0 and figures[kind]["attacker_create"] != 0,
                  "users: the attacker reached into the victim's runtime directory")
            pid = victim_daemon_pid()
            if pid:
                os.kill(pid, signal.SIGTERM)
            as_attacker("rm", "-rf", squat)
            shutil.rmtree(os.path.join(home, ".cache"), ignore_errors=True)
    finally:
        pid = victim_daemon_pid()
        if pid:
            os.kill(pid, signal.SIGTERM)
        subprocess.run(["rm", "-rf", squat, trap])
    RESULTS["users"] = figures
    print(f"  {json.dumps(figures)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--files", type=int, default=10000, help="mutated files for the decoder fuzz")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--cold", type=int, default=5000, help="cold starts")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="decoder,protocol,kills,fulldisk,users,cold")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    rng = random.Random(args.seed)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
    work = tempfile.mkdtemp(prefix="announce-stress-")
    os.chmod(work, 0o755)
    print(f"announce stress: seed {args.seed}, work in {work}", flush=True)
    clip = os.path.join(work, "clip.wav")
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", clip, "synth", "0.3", "sine", "660"], check=True)
    started = time.monotonic()
    parts = {"decoder": lambda: decoder_fuzz(binary, work, args.files, rng, args.workers),
             "protocol": lambda: protocol_fuzz(binary, work, rng, clip),
             "kills": lambda: kill_campaign(binary, work, rng, args.kills, clip),
             "fulldisk": lambda: full_disk(binary, work, clip),
             "users": lambda: other_users(binary, work, clip),
             "cold": lambda: cold_starts(binary, work, args.cold, args.workers)}
    for name in args.only.split(","):
        part_started = time.monotonic()
        try:
            parts[name]()
        except Exception as error:  # a broken part is a failed run, and the others still go
            check(False, f"{name}: {type(error).__name__}: {error}")
        RESULTS.setdefault("seconds", {})[name] = round(time.monotonic() - part_started)
    RESULTS["seed"], RESULTS["total_seconds"] = args.seed, round(time.monotonic() - started)
    RESULTS["failures"] = FAILURES
    if args.json:
        with open(args.json, "w") as out:
            json.dump(RESULTS, out, indent=2)
    print(f"\n{len(FAILURES)} failure(s) in {RESULTS['total_seconds']} s" + (f"; kept in {work}" if FAILURES else ""))
    if not FAILURES:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
