"""bench.py's settings: where it works, the toolchain, and how many repetitions of each kind."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(ROOT, ".bench-cache")
# The toolchain `make bench` builds with (its SWIFT), for the micro-benchmarks too.
SWIFT = os.environ.get("SWIFT", "swift")
TMPFS, DISK = "/dev/shm", "/tmp"

# Repetitions: (full run, --smoke).
COUNTS = {
    "RUNS": (5, 1),            # counted runs per player, 1- and 10-minute files
    "RUNS_LONG": (9, 1),       # 60-minute MP3
    "RUNS_TEMPO": (5, 1),      # 60-minute MP3 at --rate 2, plain, and through sox's tempo
    "RUNS_TINY": (20, 3),      # 0.1 s clips
    "RUNS_MARGINAL": (15, 3),  # rounds of the WAV target (1 s and 60 min each)
    "ENQUEUE": (1000, 100),    # enqueue round trips per row
    "CLI": (200, 20),          # `announce play --no-wait` commands per filesystem
    "PREEMPT": (200, 20),      # preemptions over a looping WAV
    "PREEMPT_MP3": (100, 10),  # ... over a looping MP3
    "SCALE_ITEMS": (10000, 1000),  # items queued for the scale section
    "SCALE_RESTARTS": (5, 2),  # restarts that restore them
    "COLD": (10, 2),           # cold starts per row
    "IDLE": (10, 2),           # seconds idle
    "PLAYS": (1000, 100),      # plays for the daemon's memory target
    "PLAYS_MORE": (5000, 200),  # ... and on to this many
    "ALERT_ROUNDS": (10, 2),   # rounds of 1 cold + 5 warm + 5 daemon-alone alerts on null
    "ALERT_ROUNDS_PACED": (4, 1),
    "SAY": (60, 6),
    "LOUDNESS": (12, 2),       # plays per clip and case of the loudness stage (never measured, cached, off)            # `announce say` commands per case (fresh text, cached text)
    "URL": (60, 6),            # `announce play URL` and the same file by path, to the first frame
    "RUNS_URL": (5, 1),        # the 60-minute MP3 over http: announce and mpg123
    "MIX_SECONDS": (10, 2),    # mixing window
    "DUCK_ROUNDS": (15, 3),    # --duck-others clips over another application's tone, per sound server
    "ZONE_ROUNDS": (40, 4),    # `play --zone all` on 3 hosts
    "ZONE_ROUNDS_MANY": (30, 3),  # ... on 30 hosts
    "ZONE_IDLE": (30, 5),      # seconds idle with the bridge connected (it wakes every 15 s for the keepalive)
    "MICRO_SECONDS": (2, 1),   # ordo-one/benchmark: at most this long per benchmark
}

# Targets (the issues'). "20 MB" is 20 × 10^6 bytes of VmHWM.
MP3_VS_MPG123, WAV_MARGINAL_VS_APLAY, RSS_MB, RSS_GROWTH_MIB = 1.05, 1.0, 20.0, 2.0
ENQUEUE_P99_MS, CLIENT_CPU_MS, PREEMPT_P99_MS, IDLE_CPU_MS = 5.0, 10.0, 20.0, 1.0


def log(msg):
    print(f"bench: {msg}", flush=True)
