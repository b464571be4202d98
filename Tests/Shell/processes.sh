# The process helpers of the test servers' scripts (paced-audio.sh, pipewire-audio.sh), sourced by
# both. They use the sourcing script's DIR and $0.

# detach CMD...: CMD in the background in its own session, with no inherited descriptor above 2.
# (A caller that learns of this script's exit from EOF on an inherited pipe or socket, as
# Foundation's Process does, would otherwise wait for the server's exit.) $! is CMD's pid.
detach() {
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            if (( fd > 2 && fd != 255 )); then { eval "exec $fd>&-"; } 2>/dev/null; fi
        done
        exec setsid "$@"
    ) &
}

# running PID: true while PID runs; an exited child of init that is not reaped yet (a zombie;
# some container inits reap only every few seconds) counts as gone.
running() {
    local stat
    kill -0 "$1" 2>/dev/null || return 1
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}
alive() { [[ -f $1 ]] && running "$(cat "$1")"; }

# stop PIDFILE COMM: TERM (then KILL) the pid in PIDFILE if it still runs COMM.
stop() {
    local pidfile=$1 comm=$2 pid
    [[ -f $pidfile ]] || return 0
    pid=$(cat "$pidfile")
    if running "$pid" && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]]; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do running "$pid" || break; sleep 0.02; done
        if running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; echo "killed $comm $pid"
        else echo "stopped $comm $pid"; fi
    fi
    rm -f "$pidfile"
}

# start_watchdog PIDNAME: with PACED_WATCH_PID set, runs `$0 down DIR` once that process is gone
# (it may be killed without cleaning up), or once DIR/PIDNAME is (after DIR/env was written).
start_watchdog() {
    [[ -n ${PACED_WATCH_PID:-} ]] || return 0
    # /proc, not kill -0: the watched process may be another user's (a listener's PulseAudio watching root's tests).
    detach bash -c 'while [[ -e /proc/$1 ]] && [[ -f "$3/$4" || ! -f "$3/env" ]]; do sleep 0.5; done
                    PACED_SELF_PID=$$ exec bash "$2" down "$3"' watchdog "$PACED_WATCH_PID" "$(realpath "$0")" "$DIR" "$1" \
        </dev/null >>"$DIR/watchdog.log" 2>&1
    echo $! > "$DIR/watchdog.pid"
}

# stop_watchdog: stops the watchdog, unless it is the one running `down`.
stop_watchdog() {
    if [[ -f $DIR/watchdog.pid && $(cat "$DIR/watchdog.pid") != "${PACED_SELF_PID:-}" ]]; then
        stop "$DIR/watchdog.pid" bash
    fi
    rm -f "$DIR/watchdog.pid"
}
