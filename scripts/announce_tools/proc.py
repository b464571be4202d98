"""Processes and measurements, for bench.py and stress.py: running a command, another process's
CPU clock, context switches and memory from /proc, and the statistics the reports quote."""
import os
import resource
import shutil
import statistics
import subprocess
import time


def run(argv, env=None, timeout=20, user=None):
    """(status, stdout, stderr); status None on a timeout (the process is killed). user: a uid
    to run as (setpriv; stress's other-users part, as root)."""
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] + argv
    try:
        done = subprocess.run(argv, env=env, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as expired:
        return None, "", (expired.stderr or b"").decode(errors="replace")


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# Another process: its CPU, threads and memory.

CPUCLOCK_SCHED = 2


def proc_cpu_ns(pid):
    """The process's CPU clock (clock_getcpuclockid): every thread, those that ended included."""
    return time.clock_gettime_ns(((~pid) << 3) | CPUCLOCK_SCHED)


def switches(pid):
    """{tid: voluntary + involuntary context switches} of the live threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                out[tid] = sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass
    return out


def thread_name(pid, tid):
    try:
        return open(f"/proc/{pid}/task/{tid}/comm").read().strip()
    except OSError:
        return "?"


def switches_since(before, after):
    return sum(n - before.get(tid, 0) for tid, n in after.items())


def status_kib(pid):
    keys = ("VmHWM", "VmRSS", "RssAnon", "RssFile")
    try:
        with open(f"/proc/{pid}/status") as f:
            return {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f) if k in keys}
    except OSError:
        return {}


def reset_hwm(pid):
    """VmHWM := current RSS (clear_refs 5)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def alive(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, TypeError):
        return False


def wait_exit(pid, timeout, every=0.01):
    """True once pid has exited, False after timeout seconds. A zombie counts as exited: an
    auto-started daemon is not our child, so its parent (init) reaps it when it will."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


# Files and file systems.

def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700)
    os.chmod(path, 0o700)
    return path


def fs_type(path):
    mounts = [line.split()[1:3] for line in open("/proc/self/mounts")]
    return max((m for m in mounts if (path + "/").startswith(m[0].rstrip("/") + "/")), key=lambda m: len(m[0]))[1]


# Statistics.

def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))]


def stats_ms(values, tail=99):
    return {"n": len(values), "p50": pct(values, 50) * 1e3, f"p{tail}": pct(values, tail) * 1e3,
            "max": max(values) * 1e3}


def med(values):
    return statistics.median(values)
