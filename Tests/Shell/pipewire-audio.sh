#!/usr/bin/env bash
# A private PipeWire sound server for the tests that reach other applications (issue 15):
#
#   Tests/Shell/pipewire-audio.sh up DIR     dbus-daemon, pipewire, wireplumber and pipewire-pulse in DIR,
#                                            a 48 kHz null sink; writes DIR/env
#   Tests/Shell/pipewire-audio.sh down DIR   stop what `up DIR` started (only those pids), keep the logs
#
# DIR/env has the same variables as paced-audio.sh's (PULSE_SERVER, PACED_SINK, PACED_RATE), so a
# test runs on either server: pactl, paplay, parec and ALSA's `pulse` device reach pipewire-pulse.
# Nothing is written outside DIR: XDG_RUNTIME_DIR, HOME, XDG_CONFIG_HOME and XDG_STATE_HOME are DIR's,
# and WirePlumber gets a private session bus. With PACED_WATCH_PID=PID a watchdog runs `down DIR`
# once PID is gone. Needs Debian's pipewire, pipewire-pulse, wireplumber, dbus-daemon, pulseaudio-utils.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 up|down DIR" >&2; exit 64; }
ACTION=$1
DIR=$2
RATE=48000
SINK=announce_pw

# shellcheck source=processes.sh
source "$(dirname "${BASH_SOURCE[0]}")/processes.sh"

down() {
    [[ -d $DIR ]] || return 0
    stop_watchdog
    for server in pipewire-pulse wireplumber pipewire dbus-daemon; do stop "$DIR/$server.pid" $server; done
}

fail() { echo "$0: $*" >&2; tail -5 "$DIR"/*.log >&2 2>/dev/null || true; down; exit 1; }

up() {
    for tool in pipewire wireplumber pipewire-pulse dbus-daemon pactl; do
        command -v "$tool" >/dev/null || {
            echo "$0: $tool is missing: install pipewire pipewire-pulse wireplumber dbus-daemon pulseaudio-utils (make deps-test)" >&2
            exit 69
        }
    done
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    (( ${#DIR} < 80 )) || { echo "$0: $DIR is too long for a Unix socket path" >&2; exit 64; }
    [[ -f $DIR/pipewire.pid ]] && running "$(cat "$DIR/pipewire.pid")" && { echo "$0: already up in $DIR" >&2; exit 1; }
    mkdir -p "$DIR"/{xdg,home,config,state}
    chmod 700 "$DIR" "$DIR/xdg"
    export XDG_RUNTIME_DIR=$DIR/xdg HOME=$DIR/home XDG_CONFIG_HOME=$DIR/config XDG_STATE_HOME=$DIR/state
    unset PIPEWIRE_REMOTE PULSE_SERVER PULSE_CLIENTCONFIG PULSE_COOKIE PULSE_RUNTIME_PATH
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$DIR/bus
    start_watchdog pipewire.pid
    detach dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" </dev/null >>"$DIR/dbus.log" 2>&1
    echo $! > "$DIR/dbus-daemon.pid"
    for _ in $(seq 1 250); do [[ -S $DIR/bus ]] && break; sleep 0.02; done
    [[ -S $DIR/bus ]] || fail "dbus-daemon did not listen"
    detach pipewire </dev/null >>"$DIR/pipewire.log" 2>&1
    echo $! > "$DIR/pipewire.pid"
    for _ in $(seq 1 250); do [[ -S $DIR/xdg/pipewire-0 ]] && break; sleep 0.02; done
    [[ -S $DIR/xdg/pipewire-0 ]] || fail "pipewire did not listen"
    detach wireplumber </dev/null >>"$DIR/wireplumber.log" 2>&1
    echo $! > "$DIR/wireplumber.pid"
    detach pipewire-pulse </dev/null >>"$DIR/pipewire-pulse.log" 2>&1
    echo $! > "$DIR/pipewire-pulse.pid"
    export PULSE_SERVER=unix:$DIR/xdg/pulse/native
    for _ in $(seq 1 250); do pactl info >/dev/null 2>&1 && break; sleep 0.02; done
    pactl info >/dev/null 2>&1 || fail "pipewire-pulse did not answer within 5 s"
    pactl load-module module-null-sink sink_name=$SINK rate=$RATE channels=2 >/dev/null || fail "no null sink"
    # pipewire-pulse keeps the default sink in WirePlumber's "default" metadata: until WirePlumber
    # has made it (slow on a loaded machine), set-default-sink fails with "Not supported".
    for _ in $(seq 1 500); do pactl set-default-sink $SINK 2>/dev/null && break; sleep 0.02; done
    pactl set-default-sink $SINK || fail "WirePlumber took no default sink within 10 s"
    cat > "$DIR/env" <<ENV
export XDG_RUNTIME_DIR=$DIR/xdg
export PULSE_SERVER=unix:$DIR/xdg/pulse/native
export PACED_SINK=$SINK
export PACED_RATE=$RATE
ENV
    echo "pipewire-audio up in $DIR: pipewire $(cat "$DIR/pipewire.pid"), wireplumber $(cat "$DIR/wireplumber.pid"), pipewire-pulse $(cat "$DIR/pipewire-pulse.pid"); $(pactl info | sed -n 's/^Server Name: //p')"
}

case $ACTION in
    up) up ;;
    down) down ;;
    *) echo "usage: $0 up|down DIR" >&2; exit 64 ;;
esac
