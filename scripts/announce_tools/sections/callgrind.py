"""callgrind: instructions (user space, all threads) of announce (client + daemon from just
before the client starts until the device is closed) and of the reference player."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from ..client import is_event
from ..config import SWIFT, TMPFS, log
from ..daemons import Runtime, lock_pid
from ..proc import fresh_dir
from ..runners import REFERENCE

OWN_MODULES = ("13AnnounceModel", "14AnnounceSystem", "15AnnounceSources", "14AnnounceOutput", "14AnnounceEngine",
               "14AnnounceDaemon", "14AnnounceClient", "8announce", "announce_")  # Swift mangled module names; CPosix
DEP_MODULES = ("14ArgumentParser", "7Logging", "10HeapModule", "15InternalCollectionsUtilities")


def group(obj, fn):
    if os.path.basename(obj) == "announce":
        head = fn[:40]
        if any(m in head for m in OWN_MODULES):
            return "announce's own code (Sources/)"
        if any(m in head for m in DEP_MODULES):
            return "announce: package dependencies"
        if "20FoundationEssentials" in head:
            return "announce: FoundationEssentials (static)"
        return "announce: Swift runtime + stdlib (static)"
    m = re.match(r"(lib[^.]+|ld-linux[^.]*)", os.path.basename(obj))
    return m.group(1) if m else os.path.basename(obj)


def parse_callgrind(path):
    """Self instructions per (object, function)."""
    names, cur, cost, skip = {}, {"ob": "?", "fn": "?"}, {}, False
    for line in open(path, errors="replace"):
        if line[:1].isdigit() or line[:1] in "+-*":
            if not skip and len(parts := line.split()) > 1:
                key = (cur["ob"], cur["fn"])
                cost[key] = cost.get(key, 0) + int(parts[1])
            skip = False
            continue
        m = re.match(r"^(c?ob|c?fn|calls)=(?:\((\d+)\))?\s*(.*)$", line.rstrip("\n"))
        if not m:
            continue
        key, ident, name = m.groups()
        if key == "calls":
            skip = True
            continue
        table = names.setdefault(key.lstrip("c"), {})
        if ident is not None and name:
            table[ident] = name
        value = table.get(ident, name) if ident is not None else name
        if key in ("ob", "fn"):
            cur[key] = value
    return cost


def callgrind(b):
    if not shutil.which("valgrind"):
        log("callgrind skipped: valgrind is not installed")
        return
    tmp = tempfile.mkdtemp(prefix="announce-callgrind.")
    b.cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    # valgrind 3.19 cannot read clang's DWARF 5: a copy without debug info (the symbols stay).
    vbin = os.path.join(tmp, "announce")
    subprocess.run(["strip", "--strip-debug", "-o", vbin, b.bin], check=True)
    out = b.res.setdefault("callgrind", {})
    runtime = Runtime(vbin, fresh_dir(os.path.join(TMPFS, f"ab{os.getpid()}-cg")))
    rundir, env = runtime.path, runtime.env
    dout = os.path.join(tmp, "daemon.out")
    try:
        daemon = runtime.spawn(None, ready=120, wrap=["valgrind", "--tool=callgrind", f"--callgrind-out-file={dout}"])
    except RuntimeError:
        raise RuntimeError("the daemon under callgrind did not start") from None
    pid = lock_pid(rundir)
    ev = runtime.connect()
    ev.call({"op": "events"})

    def closed():
        ev.until(is_event("device-opened"), "device-opened", 120)
        ev.until(is_event("device-closed"), "device-closed", 120)

    def cg(argv, label, env=None):
        f = os.path.join(tmp, label)
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"] + argv, env=env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return parse_callgrind(f)

    try:
        b.res["client_cost"] = client_cost(b, tmp, vbin, env)
        dumps = 0
        for kind, ref in (("mp3", REFERENCE["mp3"]), ("wav", REFERENCE["wav"])):
            for size in ("0.1s", "1min"):
                path = b.path(f"{kind}-{size}.{kind}")
                subprocess.run([vbin, "play", "-q", "-d", "null", b.path(f"{kind}-0.1s.{kind}")], env=env, check=True)
                closed()
                subprocess.run(["callgrind_control", "--zero", str(pid)], capture_output=True, check=True)
                client = cg([vbin, "play", "-q", "-d", "null", path], f"client-{kind}-{size}", env)
                closed()
                subprocess.run(["callgrind_control", "--dump", str(pid)], capture_output=True, check=True)
                dumps += 1
                dcost = parse_callgrind(wait_for_dump(f"{dout}.{dumps}"))
                groups = {}
                for (obj, fn), n in list(client.items()) + list(dcost.items()):
                    g = group(obj, fn)
                    groups[g] = groups.get(g, 0) + n
                rcost = cg(ref + [path], f"ref-{kind}-{size}")
                rgroups = {}
                for (obj, fn), n in rcost.items():
                    g = group(obj, fn)
                    rgroups[g] = rgroups.get(g, 0) + n
                out[f"{kind}-{size}"] = {"announce": sum(groups.values()), "client": sum(client.values()),
                                         "daemon": sum(dcost.values()), "reference": ref[0],
                                         "ref": sum(rgroups.values()), "groups": groups, "ref_groups": rgroups}
                log(f"callgrind {kind}-{size}: announce {out[f'{kind}-{size}']['announce'] / 1e6:.1f} M, "
                    f"{ref[0]} {out[f'{kind}-{size}']['ref'] / 1e6:.1f} M instructions")
    finally:
        ev.close()
        os.kill(pid, signal.SIGTERM)
        daemon.wait(120)
        shutil.rmtree(rundir, ignore_errors=True)


# Where a warm `announce play -q --no-wait`'s instructions go (issue 30: its CPU, profiled):
# callgrind's inclusive counts of these functions (mangled name prefixes).
CLIENT_PARTS = {
    "main": "announce_main",
    "loader": "_dl_start",
    "parser": "$s8announce15AnnounceCommandV14parsedDirectly",
    "run": "$s8announce4PlayV3runyyKF",
    "json_encode": "$s13AnnounceModel10JSONCodingO6encodeySays5UInt8VGSgxSERzlFZ",
    "json_decode": "$s13AnnounceModel10JSONCodingO6decode_4fromxxm_q_tKSeRzSlR_s5UInt8V7ElementRt_r0_lFZ",
}


def client_cost(b, tmp, vbin, env):
    """The client's instructions by part, beside a static Swift hello world's (the language's floor:
    the loader and the runtime's start-up)."""
    hello_src, hello = os.path.join(tmp, "hello.swift"), os.path.join(tmp, "hello")
    with open(hello_src, "w") as f:
        f.write('print("hello")\n')
    swiftc = os.path.join(os.path.dirname(shutil.which(SWIFT) or "swift"), "swiftc")
    subprocess.run([swiftc, "-O", "-static-stdlib", hello_src, "-o", hello], check=True, capture_output=True)
    subprocess.run([vbin, "pause", "-q"], env=env, check=True)
    argv = [vbin, "play", "-q", "--no-wait", b.path("wav-0.1s.wav")]
    subprocess.run(argv, env=env, check=True)  # warm: the page cache and the daemon's caches
    out = {}
    for name, command in (("client", argv), ("hello", [hello])):
        f = os.path.join(tmp, f"parts-{name}")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"] + command, env=env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f], capture_output=True,
                              text=True, check=True).stdout
        inclusive = {}
        for line in text.splitlines():
            m = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?:\S*:)?(\S+)", line)
            if m:
                inclusive.setdefault(m.group(2), int(m.group(1).replace(",", "")))
        total = inclusive.get("PROGRAM", 0)
        out[name] = dict({"total": total}, **{k: next((v for fn, v in inclusive.items() if fn.startswith(p)), 0)
                                               for k, p in CLIENT_PARTS.items()})
    subprocess.run([vbin, "clear", "-q"], env=env, check=True)
    subprocess.run([vbin, "resume", "-q"], env=env, check=True)
    c = out["client"]
    log(f"client instructions: {c['total'] / 1e6:.1f} M, the parser {c['parser'] / 1e6:.1f} M, the loader "
        f"{c['loader'] / 1e6:.1f} M, Play.run {c['run'] / 1e6:.1f} M; hello world {out['hello']['total'] / 1e6:.1f} M")
    return out


def wait_for_dump(path, limit=30.0):
    """A callgrind dump once it is whole (its last line is `totals:`): under load the daemon
    may still be writing it when it appears, and a half-read dump undercounts silently."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, "rb") as f:
                if b"\ntotals:" in f.read():
                    return path
        time.sleep(0.05)
    raise RuntimeError(f"callgrind dump {path} not complete after {limit:.0f} s")
