#!/usr/bin/env bash
# make bench: announce against mpg123, aplay and sox on the same files, in the same run,
# all playing to ALSA's `null` PCM, then the daemon's own figures. Writes BENCHMARKS.md at the
# repo root. announce's rows count its client (`announce play`) and its daemon together: each
# case runs against a daemon started for it (scripts/measure.py --daemon).
#
#   scripts/bench.sh PATH-TO-announce
#
# Environment:
#   BENCH_RUNS=5        counted runs per player on the 1-minute and 10-minute files
#   BENCH_RUNS_LONG=5   counted runs per player on the 60-minute MP3
#   BENCH_RUNS_TINY=20  counted runs per player on the 0.1-second clips
#   BENCH_RUNS_MARGINAL=15  rounds of the WAV target: announce and aplay each play the 1-second and
#                       the 60-minute WAV (the difference is the cost per second beyond start-up)
#   BENCH_CASES=REGEX   only the player cases whose name matches (e.g. 'wav' or 'wav-60min'); the
#                       report marks the others' targets SKIP
#   BENCH_PROFILE=1     also profile announce next to the reference players
#                       (scripts/bench/profile.py: callgrind, perf, strace, whichever are
#                       installed; about 30 s); 0 skips
#   BENCH_DAEMON=1      also measure the daemon (scripts/bench/daemon.py: enqueue round trip,
#                       preemption, cold start, idle cost, memory over 1000 plays; about a
#                       minute); 0 skips
#   BENCH_ALERT=1       also measure `announce alert` from the command's start to the first frame
#                       written, warm (PCM cached) and cold (scripts/bench/alert.py; ALSA null,
#                       and the paced device when it is up; about a minute); 0 skips
#   BENCH_MIXING=1      also measure the daemon's steady CPU while it mixes 1, 4 and 16 looping
#                       streams at 48 and 44.1 kHz on the paced device (scripts/bench/mixing.py;
#                       about 2 minutes); 0 skips
#   BENCH_PACED=1       for those two: start a private real-time PulseAudio with a 48 kHz null
#                       sink (Tests/Shell/paced-audio.sh; ALSA PCM "pulse"); 0 does not (the mixing
#                       section and alert's paced rows are then left out)
#   BENCH_OUT=FILE      where to write the report (default: BENCHMARKS.md at the repo root)
#   ANNOUNCE_COMMIT=..  how to name the build in the report (default: git describe --dirty)
#   BENCH_ALSA_CONFIG=pinned (default): every player reads the system's alsa.conf without its
#                       conf.d/asoundrc hooks, so plugins installed on the machine (e.g. the
#                       PulseAudio hook, which loads libpulse into every ALSA client) do not
#                       move the figures; =system uses the machine's configuration as it is
set -euo pipefail

usage() { echo "usage: $0 PATH-TO-announce" >&2; exit 64; }
[ $# -eq 1 ] || usage
bin=$1
if [ ! -e "$bin" ]; then
  echo "bench.sh: announce binary '$bin' does not exist (build it with: make release)" >&2
  exit 66
fi
if [ ! -x "$bin" ] || [ -d "$bin" ]; then
  echo "bench.sh: '$bin' is not an executable file" >&2
  exit 66
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache=$root/.bench-cache
out=${BENCH_OUT:-$root/BENCHMARKS.md}
runs=${BENCH_RUNS:-5}
runs_long=${BENCH_RUNS_LONG:-5}
runs_tiny=${BENCH_RUNS_TINY:-20}
runs_marginal=${BENCH_RUNS_MARGINAL:-15}
profile=${BENCH_PROFILE:-1}
daemon_section=${BENCH_DAEMON:-1}
alert_section=${BENCH_ALERT:-1}
mixing_section=${BENCH_MIXING:-1}
paced=${BENCH_PACED:-1}

missing=()
for tool in python3 ffmpeg ffprobe mpg123 aplay sox; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench.sh: missing tools: ${missing[*]} (make deps-bench installs them)" >&2
  exit 69
fi
# (Outputs are captured first: with pipefail, grep -q closing the pipe early would fail it.)
encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null || true)
if ! grep -q libmp3lame <<<"$encoders"; then
  echo "bench.sh: this ffmpeg has no libmp3lame encoder" >&2; exit 69
fi
soxhelp=$(sox -h 2>/dev/null || true)
if ! grep -A3 'AUDIO FILE FORMATS' <<<"$soxhelp" | grep -qw mp3; then
  echo "bench.sh: sox cannot read MP3 (install libsox-fmt-mp3 or libsox-fmt-all: make deps-bench)" >&2; exit 69
fi
if ! grep -A3 'AUDIO DEVICE DRIVERS' <<<"$soxhelp" | grep -qw alsa; then
  echo "bench.sh: sox has no ALSA driver (install libsox-fmt-alsa or libsox-fmt-all: make deps-bench)" >&2; exit 69
fi

mkdir -p "$cache"
# The user's own announce config (quiet hours, device) must not reach the measured plays.
mkdir -p "$cache/config"
export XDG_CONFIG_HOME=$cache/config

# ---------------------------------------------------------------------------------------
# Inputs, generated once. Bump GEN when the recipe changes so old caches are regenerated.
GEN=2
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
# Bit-exact output: no encoder/version tags, so the same ffmpeg makes the same bytes.
ffx=(-fflags +bitexact -flags:a +bitexact -map_metadata -1)
mp3=(-c:a libmp3lame -b:a 128k -ar 44100 -ac 2)
wav=(-c:a pcm_s16le -ar 44100 -ac 2)

generate() {
  local t0=$SECONDS tmp=$cache/tmp
  rm -rf "$tmp"; mkdir -p "$tmp"
  echo "bench: generating inputs in $cache (once)..."
  # One minute of music-like stereo: a plucked melody stepping through a scale four times a
  # second (with its octave), a bass line changing every two seconds (with its 3rd harmonic),
  # a pad with vibrato and a slow swell, and white noise peaking at -26 dBFS, different per channel,
  # so every MP3 band carries something and the decoder does real work.
  local note='pow(2,mod(floor(t*4)*7,12)/12)' bass='pow(2,mod(floor(t/2)*5,12)/12)'
  local mel="0.25*exp(-4*mod(t,0.25))*(sin(2*PI*t*440*$note)+0.4*sin(4*PI*t*440*$note))"
  local low="0.2*(sin(2*PI*t*55*$bass)+0.3*sin(6*PI*t*55*$bass))"
  local pad='0.12*sin(2*PI*t*330*(1+0.003*sin(2*PI*5*t)))*(0.6+0.4*sin(2*PI*0.1*t))'
  local left="$mel*0.8+$low+$pad+0.05*(2*random(0)-1)"
  local right="$mel*0.5+$low+$pad*0.7+0.05*(2*random(1)-1)"
  ff -f lavfi -i "aevalsrc=exprs='$left|$right':s=44100:d=60" "${wav[@]}" "${ffx[@]}" "$tmp/source.wav"

  # The 60-minute MP3 is one continuous encode of the minute looped 60 times (a valid CBR
  # stream with one Info header and no joins); it takes longest, so it runs alongside the rest.
  ff -stream_loop 59 -i "$tmp/source.wav" "${mp3[@]}" "${ffx[@]}" "$tmp/mp3-60min.mp3" &
  local long=$!
  trap 'kill "$long" 2>/dev/null || true' EXIT
  ff -i "$tmp/source.wav" "${mp3[@]}" "${ffx[@]}" "$tmp/mp3-1min.mp3"
  ff -i "$tmp/source.wav" -t 0.1 "${mp3[@]}" "${ffx[@]}" "$tmp/mp3-0.1s.mp3"
  ff -i "$tmp/source.wav" "${wav[@]}" "${ffx[@]}" "$tmp/wav-1min.wav"
  ff -i "$tmp/source.wav" -t 0.1 "${wav[@]}" "${ffx[@]}" "$tmp/wav-0.1s.wav"
  ff -i "$tmp/source.wav" -t 1 "${wav[@]}" "${ffx[@]}" "$tmp/wav-1s.wav"
  ff -stream_loop 9 -i "$tmp/source.wav" "${wav[@]}" "${ffx[@]}" "$tmp/wav-10min.wav"
  ff -stream_loop 59 -i "$tmp/source.wav" "${wav[@]}" "${ffx[@]}" "$tmp/wav-60min.wav"  # 635 MB
  wait "$long"
  trap - EXIT
  rm "$tmp/source.wav"
  mv "$tmp"/* "$cache/"
  rmdir "$tmp"
  echo "$GEN" >"$cache/inputs.gen"
  echo "bench: inputs generated in $((SECONDS - t0)) s"
}

files=(wav-0.1s.wav mp3-0.1s.mp3 wav-1s.wav wav-1min.wav mp3-1min.mp3 wav-10min.wav wav-60min.wav mp3-60min.mp3)
need=0
[ "$(cat "$cache/inputs.gen" 2>/dev/null || true)" = "$GEN" ] || need=1
for f in "${files[@]}"; do [ -s "$cache/$f" ] || need=1; done
[ "$need" = 0 ] || generate

duration() { ffprobe -v error -show_entries format=duration -of csv=p=0 "$1"; }
for f in "${files[@]}"; do
  declare "dur_${f//[.-]/_}=$(duration "$cache/$f")"
done

# ---------------------------------------------------------------------------------------
# ALSA configuration every player reads.
alsa_mode=${BENCH_ALSA_CONFIG:-pinned}
hooks=$(ls /etc/alsa/conf.d 2>/dev/null | grep -c '\.conf$' || true)
pulse_hook=no
if grep -qs libasound_module_conf_pulse /etc/alsa/conf.d/*.conf; then pulse_hook=yes; fi
case $alsa_mode in
  pinned)
    sysconf=${ALSA_CONFIG_DIR:-/usr/share/alsa}/alsa.conf
    if [ ! -r "$sysconf" ]; then
      echo "bench.sh: cannot read $sysconf (BENCH_ALSA_CONFIG=system uses the machine's configuration)" >&2
      exit 69
    fi
    # Drop alsa.conf's first top-level "@hooks [ ... ]", which loads /etc/alsa/conf.d,
    # asound.conf and ~/.asoundrc; keep everything else (pcm.null included).
    python3 - "$sysconf" "$cache/alsa.conf" <<'PY'
import sys
src = open(sys.argv[1]).read()
i = src.find("\n@hooks [")
j = src.find("\n]\n", i) if i >= 0 else -1
if i >= 0 and j >= 0:
    src = src[:i] + "\n# scripts/bench.sh: conf.d / asound.conf / asoundrc hooks removed\n" + src[j + 3:]
open(sys.argv[2], "w").write(src)
PY
    export ALSA_CONFIG_PATH=$cache/alsa.conf
    alsa_desc="pinned: $sysconf without its conf.d/asoundrc hooks (BENCH_ALSA_CONFIG=system uses the machine's; this machine has $hooks files in /etc/alsa/conf.d, PulseAudio hook: $pulse_hook)"
    ;;
  system)
    alsa_desc="the machine's (${ALSA_CONFIG_PATH:-default alsa.conf}; $hooks files in /etc/alsa/conf.d, PulseAudio hook: $pulse_hook)"
    ;;
  *) echo "bench.sh: BENCH_ALSA_CONFIG must be pinned or system, not '$alsa_mode'" >&2; exit 64 ;;
esac

# The device must work before anything is timed.
if ! aplay -q -D null "$cache/wav-0.1s.wav" 2>/dev/null; then
  echo "bench.sh: ALSA's null PCM does not work here (aplay -D null failed)" >&2; exit 69
fi

# ---------------------------------------------------------------------------------------
# Machine and build
# The build is named by the commit, plus a mark when what goes into the binary (Sources/,
# Package.swift) differs from it; edits elsewhere (tests, docs) do not change the binary.
if [ -z "${ANNOUNCE_COMMIT:-}" ]; then
  if ANNOUNCE_COMMIT=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
    if [ -n "$(git -C "$root" status --porcelain -- Sources Package.swift 2>/dev/null)" ]; then
      ANNOUNCE_COMMIT="$ANNOUNCE_COMMIT + uncommitted changes in Sources/ or Package.swift"
    fi
  else
    ANNOUNCE_COMMIT=unknown
  fi
fi
commit=$ANNOUNCE_COMMIT
first() { "$@" 2>&1 | head -n1 || true; }
machine=$cache/machine.json
python3 - "$machine" <<EOF
import json, os, platform, sys, time
def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
def mem():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1048576:.1f} GiB"
def osname():
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        return "unknown"
b = "$bin"
st = os.stat(b)
def stripped_size():  # what make install installs (install -s)
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as d:
        if subprocess.run(["strip", "-o", d + "/s", b], capture_output=True).returncode != 0:
            return "?"
        return f"{os.stat(d + '/s').st_size / 1e6:.1f}"
json.dump({
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "commit": "$commit",
    "binary": f"{os.path.basename(b)}, {st.st_size / 1e6:.1f} MB ({stripped_size()} MB stripped, as make install installs it), built {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(st.st_mtime))}",
    "cpu": cpu(),
    "cores": str(os.cpu_count()),
    "memory": mem(),
    "kernel": platform.release(),
    "os": osname(),
    "swift": """$(first swift --version)""",
    "mpg123": """$(first mpg123 --version)""",
    "aplay": """$(first aplay --version)""",
    "sox": """$(first sox --version)""",
    "alsa-lib": """$(dpkg-query -W -f='${Version}' libasound2 2>/dev/null || echo unknown)""",
    "alsa config": """$alsa_desc""",
    "inputs": "128 kbit/s CBR stereo 44.1 kHz MP3 (libmp3lame) and 16-bit 44.1 kHz stereo WAV, made by scripts/bench.sh",
}, open(sys.argv[1], "w"), indent=1)
EOF

# ---------------------------------------------------------------------------------------
# Runs
results=$cache/results.jsonl
: >"$results"
q() { printf '%q' "$1"; }
secs() { local var="dur_${1//[.-]/_}"; echo "${!var}"; }  # secs FILE: its length, from ffprobe above
measure() {  # measure CASE FILE RUNS WARMUP player-args...
  local case=$1 file=$2 n=$3 warm=$4; shift 4
  python3 "$here/measure.py" run --case "$case" --file "$cache/$file" --seconds "$(secs "$file")" \
    --runs "$n" --warmup "$warm" --out "$results" "$@"
}
# `announce play` hands the file to the user's daemon, which decodes and plays it. Each case
# gets a daemon of its own in a private runtime directory (a Unix socket path must stay under
# 108 bytes, hence the short name; /tmp if the checkout's path is too long), and measure.py adds
# the daemon's CPU, RSS and context switches during each run to the client's.
rt=$cache/rt
if [ ${#rt} -gt 90 ]; then rt=$(mktemp -d /tmp/announce-bench.XXXXXX); fi
announce_daemon=(--daemon announce "$(q "$bin") daemon --device null" --daemon-dir "$rt")
t0=$SECONDS
echo "bench: $commit, $runs runs (60-minute MP3: $runs_long, 0.1 s clips: $runs_tiny, WAV target: $runs_marginal), medians"
for case in wav-0.1s:wav-0.1s.wav:$runs_tiny wav-1min:wav-1min.wav:$runs wav-10min:wav-10min.wav:$runs \
            wav-60min:wav-60min.wav:$runs_marginal \
            mp3-0.1s:mp3-0.1s.mp3:$runs_tiny mp3-1min:mp3-1min.mp3:$runs mp3-60min:mp3-60min.mp3:$runs_long; do
  IFS=: read -r name file n <<<"$case"
  [[ $name =~ ${BENCH_CASES:-.} ]] || continue
  f="$cache/$file"
  warm=1
  # The 60-minute MP3 takes seconds per run: warm the page cache with cat instead of a run.
  if [ "$name" = mp3-60min ]; then warm=0; cat "$f" >/dev/null; fi
  if [ "$name" = wav-60min ]; then
    # The WAV target: the cost per second beyond start-up, against aplay's (no sox: it has no target).
    measure "$name" "$file" "$n" "$warm" "${announce_daemon[@]}" \
      --daemon-warmup "$(q "$bin") play -q -d null $(q "$cache/wav-0.1s.wav")" \
      --short "$cache/wav-1s.wav" --short-seconds "$(secs wav-1s.wav)" \
      --player announce "$(q "$bin") play -q -d null $(q "$f")" \
      --player aplay "aplay -q -D null $(q "$f")"
  elif [ "${file##*.}" = wav ]; then
    measure "$name" "$file" "$n" "$warm" "${announce_daemon[@]}" \
      --daemon-warmup "$(q "$bin") play -q -d null $(q "$cache/wav-0.1s.wav")" \
      --player announce "$(q "$bin") play -q -d null $(q "$f")" \
      --player aplay "aplay -q -D null $(q "$f")" \
      --player sox "sox -q $(q "$f") -t alsa null"
  else
    measure "$name" "$file" "$n" "$warm" "${announce_daemon[@]}" \
      --daemon-warmup "$(q "$bin") play -q -d null $(q "$cache/mp3-0.1s.mp3")" \
      --player announce "$(q "$bin") play -q -d null $(q "$f")" \
      --player mpg123 "mpg123 -q -o alsa -a null $(q "$f")" \
      --player sox "sox -q $(q "$f") -t alsa null"
  fi
done
echo "bench: timed runs took $((SECONDS - t0)) s"

# ---------------------------------------------------------------------------------------
# The daemon: enqueue round trip, preemption, cold start, idle cost, memory over many plays.
daemon_json=$cache/daemon.json
rm -f "$daemon_json"
if [ "$daemon_section" != 0 ]; then
  t2=$SECONDS
  python3 "$here/bench/daemon.py" "$bin" "$cache" "$daemon_json"
  echo "bench: daemon section took $((SECONDS - t2)) s"
fi

# ---------------------------------------------------------------------------------------
# Alerts and mixing: alert latency (null, and the paced device), the mixer's steady CPU on the
# paced device: a private PulseAudio with a 48 kHz null sink, played through ALSA "pulse".
alert_json=$cache/alert.json
mixing_json=$cache/mixing.json
rm -f "$alert_json" "$mixing_json"
paced_dir=
paced_down() {
  if [ -n "$paced_dir" ]; then "$root/Tests/Shell/paced-audio.sh" down "$paced_dir" >/dev/null 2>&1 || true; fi
  paced_dir=
}
if [ "$paced" != 0 ] && { [ "$alert_section" != 0 ] || [ "$mixing_section" != 0 ]; }; then
  paced_dir=$cache/paced
  if [ ${#paced_dir} -gt 80 ]; then paced_dir=$(mktemp -d /tmp/announce-paced.XXXXXX); fi
  trap paced_down EXIT
  # The watchdog takes it down should this script be killed.
  if ! PACED_WATCH_PID=$$ "$root/Tests/Shell/paced-audio.sh" up "$paced_dir"; then
    echo "bench.sh: the paced device did not come up (Tests/Shell/paced-audio.sh up $paced_dir); the paced figures are left out" >&2
    paced_down
  fi
fi
if [ "$alert_section" != 0 ]; then
  t3=$SECONDS
  python3 "$here/bench/alert.py" "$bin" "$cache" "$alert_json" ${paced_dir:+--paced "$paced_dir"}
  echo "bench: alert section took $((SECONDS - t3)) s"
fi
if [ "$mixing_section" != 0 ]; then
  if [ -n "$paced_dir" ]; then
    t4=$SECONDS
    python3 "$here/bench/mixing.py" "$bin" "$cache" "$mixing_json" --paced "$paced_dir"
    echo "bench: mixing section took $((SECONDS - t4)) s"
  else
    echo "bench: mixing section skipped: it needs the paced device (BENCH_PACED=1 and PulseAudio: make deps-bench)" >&2
  fi
fi
paced_down
trap - EXIT

# ---------------------------------------------------------------------------------------
# Profile: where announce spends its time, next to the reference players.
notes=$cache/profile.md
rm -f "$notes"
if [ "$profile" != 0 ]; then
  t1=$SECONDS
  echo "bench: profiling (callgrind, perf, strace where installed; BENCH_PROFILE=0 skips)..."
  python3 "$here/bench/profile.py" "$bin" "$cache" >"$notes"
  echo "bench: profile took $((SECONDS - t1)) s"
fi

echo
extra=()
[ -s "$notes" ] && extra=(--notes "$notes")
[ -s "$daemon_json" ] && extra+=(--daemon "$daemon_json")
[ -s "$alert_json" ] && extra+=(--section "$alert_json")
[ -s "$mixing_json" ] && extra+=(--section "$mixing_json")
python3 "$here/measure.py" report "$results" --machine "$machine" --markdown "$out" "${extra[@]}"
echo
echo "bench: wrote $out"
