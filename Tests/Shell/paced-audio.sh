#!/usr/bin/env bash
# A real-time paced ALSA device without a sound card, for the paced end-to-end tests.
#
#   Tests/Shell/paced-audio.sh up DIR     start a private PulseAudio with a 48 kHz null sink; writes DIR/env
#   Tests/Shell/paced-audio.sh down DIR   stop what `up DIR` started (only those pids), keep the logs
#
# For the device-loss tests (a sound server that dies and comes back), after `up DIR`:
#   Tests/Shell/paced-audio.sh kill-server DIR            SIGKILL DIR's PulseAudio (a crash); its clients see the loss
#   Tests/Shell/paced-audio.sh start-server DIR [RECORD]  the same server again (same socket, sink, env); with RECORD,
#                                                   the sink's monitor is recorded to RECORD (raw s16le stereo)
#                                                   from before any client can connect
#   Tests/Shell/paced-audio.sh stop-recorder DIR          stop that recorder; RECORD is complete after it returns
#
# After `up`, `source DIR/env` and the ALSA devices "pulse" (and "default") play in real time
# into the null sink; record what was heard with
#   parec --raw --format=s16le --rate=48000 --channels=2 -d "$PACED_SINK.monitor" > rec.raw
#
# Needs only Debian's pulseaudio, pulseaudio-utils, libasound2-plugins and sox. Nothing is
# written outside DIR (not even $HOME/.config/pulse). Runs as root too (PulseAudio warns).
#
# What `up` does, and why:
# - PulseAudio with module-null-sink (rate 48000, stereo), a native socket in DIR with anonymous
#   auth, no autospawn, no memfd, no shared memory at all (Debian 12's PulseAudio 16.1 can abort,
#   a memblock.c assertion, when a client that sent audio through shm is killed: the tests kill
#   daemons mid-play, and the suite's later tests lost their server), and module-role-ducking (trigger role "announce", ducked roles
#   "music,video", -20 dB) for the ducking tests.
# - A low-latency (10 ms) `parec` on the sink's monitor, kept for the whole session: without a
#   low-latency reader the idle null sink renders 2 s blocks and new streams start up to 2 s late.
#   Then one suspend/resume of the sink resets its render clock to "now", and a 100 ms probe
#   through paplay must finish in well under 0.5 s.
# - With PACED_WATCH_PID=PID (e.g. the test runner), a watchdog runs `down DIR` once PID is gone,
#   so a killed test run leaves no PulseAudio behind.
# Do not set PULSE_LATENCY_MSEC for ALSA clients: drains through the pulse plugin then never end.
set -euo pipefail

usage() { echo "usage: $0 up|down|kill-server|stop-recorder DIR, or $0 start-server DIR [RECORD]" >&2; exit 64; }
[[ $# -eq 2 || ( $# -eq 3 && $1 == start-server ) ]] || usage
ACTION=$1
DIR=$2
RATE=48000
SINK=announce_paced

# shellcheck source=processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/processes.sh"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

down() {
    [[ -d $DIR ]] || return 0
    stop_watchdog
    stop "$DIR/recorder.pid" parec
    stop "$DIR/keepalive.pid" parec
    stop "$DIR/pulseaudio.pid" pulseaudio
    rm -f "$DIR/native"
}

# launch_server SOCKET: PulseAudio with the null sink, its native protocol on SOCKET; pid in DIR/pulseaudio.pid.
launch_server() {
    HOME=$DIR/home XDG_CONFIG_HOME=$DIR/config XDG_RUNTIME_DIR=$DIR/xdg PULSE_STATE_PATH=$DIR/state \
        detach pulseaudio -n --daemonize=no --fail=yes --exit-idle-time=-1 --realtime=no --high-priority=no \
            --enable-memfd=no --disable-shm=yes --use-pid-file=no --log-target="file:$DIR/pulseaudio.log" --log-level=notice \
            --log-time=yes \
            -L "module-null-sink sink_name=$SINK rate=$RATE channels=2 sink_properties=device.description=AnnouncePaced" \
            -L "module-native-protocol-unix auth-anonymous=1 socket=$1" \
            -L "module-role-ducking trigger_roles=announce ducking_roles=music,video volume=-20dB" \
            </dev/null >>"$DIR/pulseaudio.out" 2>&1
    echo $! > "$DIR/pulseaudio.pid"
}

# Both wait on the server just launched, and call the caller's `fail` on trouble.
# await_server: until pactl answers (up to 5 s).
await_server() {
    for _ in $(seq 1 500); do
        pactl info >/dev/null 2>&1 && return
        alive "$DIR/pulseaudio.pid" || fail "pulseaudio exited at start; see $DIR/pulseaudio.log"
        sleep 0.01
    done
    pactl info >/dev/null 2>&1 || fail "pulseaudio did not answer within 5 s"
}

# start_keepalive: the low-latency monitor reader kept for the session; once the sink runs at its
# latency (up to 3 s), one suspend/resume drops what the idle sink rendered ahead.
start_keepalive() {
    local lat=
    detach parec --raw --format=s16le --rate=$RATE --channels=2 --latency-msec=10 -d "$SINK.monitor" \
        </dev/null >/dev/null 2>>"$DIR/keepalive.err"
    echo $! > "$DIR/keepalive.pid"
    for _ in $(seq 1 300); do
        lat=$(pactl list sinks 2>/dev/null | sed -n 's/.*configured \([0-9]*\) usec.*/\1/p' | head -1)
        [[ -n $lat && $lat -le 20000 ]] && break
        alive "$DIR/keepalive.pid" || fail "the monitor reader exited; see $DIR/keepalive.err"
        sleep 0.01
    done
    [[ -n $lat && $lat -le 20000 ]] || fail "the null sink did not go low-latency (configured ${lat:-?} usec)"
    pactl suspend-sink "$SINK" 1
    pactl suspend-sink "$SINK" 0
}

up() {
    for tool in pulseaudio pactl parec paplay sox; do
        command -v "$tool" >/dev/null || {
            echo "$0: $tool is missing: install pulseaudio pulseaudio-utils libasound2-plugins sox (make deps-test)" >&2
            exit 69
        }
    done
    compgen -G "/usr/lib/*/alsa-lib/libasound_module_pcm_pulse.so" >/dev/null || {
        echo "$0: the ALSA pulse plugin is missing: install libasound2-plugins (make deps-test)" >&2
        exit 69
    }
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    if alive "$DIR/pulseaudio.pid"; then
        echo "$0: a paced PulseAudio already runs for $DIR (pid $(cat "$DIR/pulseaudio.pid"))" >&2
        exit 1
    fi
    # The socket path must fit in sun_path (108 bytes).
    (( ${#DIR} < 90 )) || { echo "$0: $DIR is too long for a Unix socket path" >&2; exit 64; }
    mkdir -p "$DIR"/{home,config,state,run,xdg}
    chmod 700 "$DIR" "$DIR/run" "$DIR/xdg"
    rm -f "$DIR/native" "$DIR"/*.pid

    printf 'autospawn = no\nenable-memfd = no\nenable-shm = no\n' > "$DIR/client.conf"
    cat > "$DIR/env" <<EOF
export PULSE_SERVER=unix:$DIR/native
export PULSE_CLIENTCONFIG=$DIR/client.conf
export PULSE_COOKIE=$DIR/cookie
export PULSE_RUNTIME_PATH=$DIR/run
export PACED_SINK=$SINK
export PACED_RATE=$RATE
EOF
    # shellcheck disable=SC1091
    source "$DIR/env"
    local t0 t1 t2 t3 a b=0
    t0=$(now_ms)

    launch_server "$DIR/native"
    start_watchdog pulseaudio.pid
    fail() { echo "$0: $*" >&2; tail -5 "$DIR/pulseaudio.log" >&2 2>/dev/null; down >&2; exit 1; }

    await_server
    t1=$(now_ms)
    start_keepalive
    t2=$(now_ms)
    sox -q -n -r $RATE -c 2 -b 16 "$DIR/probe.wav" trim 0 0.1
    for _ in $(seq 1 10); do
        a=$(now_ms); paplay --latency-msec=20 "$DIR/probe.wav"; b=$(( $(now_ms) - a ))
        (( b < 400 )) && break
    done
    (( b < 400 )) || fail "a 100 ms probe still takes $b ms"
    t3=$(now_ms)
    echo "paced-audio up in $DIR: pulseaudio $(cat "$DIR/pulseaudio.pid"), reader $(cat "$DIR/keepalive.pid");" \
         "answering $((t1 - t0)) ms, low-latency $((t2 - t0)) ms, probe $b ms, ready $((t3 - t0)) ms"
}

# SIGKILL the server, as a crash: its clients (the daemon's ALSA pulse plugin, the readers) lose
# their connection at once. pulseaudio.pid stays (the watchdog watches for it); the keepalive
# reader exits with the server.
kill_server() {
    [[ -f $DIR/env ]] || { echo "$0: no paced audio in $DIR (run up first)" >&2; exit 1; }
    local pid
    pid=$(cat "$DIR/pulseaudio.pid" 2>/dev/null) || { echo "$0: no pulseaudio.pid in $DIR" >&2; exit 1; }
    if running "$pid" && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == pulseaudio ]]; then
        kill -KILL "$pid"
        for _ in $(seq 1 250); do running "$pid" || break; sleep 0.02; done
        running "$pid" && { echo "$0: pulseaudio $pid survived SIGKILL" >&2; exit 1; }
    else
        echo "$0: pulseaudio ${pid} is not running" >&2; exit 1
    fi
    for _ in $(seq 1 100); do alive "$DIR/keepalive.pid" || break; sleep 0.02; done
    stop "$DIR/keepalive.pid" parec
    echo "killed pulseaudio $pid"
}

# The same server as `up` started, once more. Clients connect to DIR/native, and that socket is
# offered last: the server first listens on DIR/setup only, where the keepalive reader (and the
# recorder of RECORD) attach and the sink goes low-latency with a fresh clock. A client retrying
# the device (the daemon) therefore cannot play a sample before it is recorded, nor into a sink
# that renders 2 s ahead.
start_server() {
    local record=${1:-} t0 t1 a b=0
    [[ -f $DIR/env ]] || { echo "$0: no paced audio in $DIR (run up first)" >&2; exit 1; }
    DIR=$(cd "$DIR" && pwd)
    if alive "$DIR/pulseaudio.pid"; then
        echo "$0: a paced PulseAudio already runs for $DIR (pid $(cat "$DIR/pulseaudio.pid"))" >&2
        exit 1
    fi
    # shellcheck disable=SC1091
    source "$DIR/env"
    local public=$PULSE_SERVER
    export PULSE_SERVER=unix:$DIR/setup
    rm -f "$DIR/native" "$DIR/setup"
    t0=$(now_ms)
    launch_server "$DIR/setup"
    fail() { echo "$0: $*" >&2; tail -5 "$DIR/pulseaudio.log" >&2 2>/dev/null; exit 1; }
    await_server
    start_keepalive
    if [[ -n $record ]]; then
        detach parec --raw --format=s16le --rate=$RATE --channels=2 --latency-msec=10 -d "$SINK.monitor" \
            </dev/null >"$record" 2>>"$DIR/recorder.err"
        echo $! > "$DIR/recorder.pid"
        for _ in $(seq 1 300); do   # both readers attached
            (( $(pactl list short source-outputs 2>/dev/null | wc -l) >= 2 )) && break
            alive "$DIR/recorder.pid" || fail "the recorder exited; see $DIR/recorder.err"
            sleep 0.01
        done
        (( $(pactl list short source-outputs 2>/dev/null | wc -l) >= 2 )) || fail "the recorder did not attach"
    fi
    t1=$(now_ms)
    pactl load-module module-native-protocol-unix auth-anonymous=1 "socket=$DIR/native" >/dev/null \
        || fail "cannot open $DIR/native"
    export PULSE_SERVER=$public
    for _ in $(seq 1 10); do
        a=$(now_ms); paplay --latency-msec=20 "$DIR/probe.wav"; b=$(( $(now_ms) - a ))
        (( b < 400 )) && break
    done
    (( b < 400 )) || fail "a 100 ms probe still takes $b ms"
    echo "paced-audio server again in $DIR: pulseaudio $(cat "$DIR/pulseaudio.pid"), reader $(cat "$DIR/keepalive.pid")${record:+, recorder $(cat "$DIR/recorder.pid")};" \
         "ready for clients after $((t1 - t0)) ms, probe $b ms"
}

case $ACTION in
    up) up ;;
    down) down ;;
    kill-server) kill_server ;;
    start-server) start_server "${3:-}" ;;
    stop-recorder) stop "$DIR/recorder.pid" parec ;;
    *) usage ;;
esac
