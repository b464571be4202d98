#!/bin/bash
# make install / make uninstall of a built binary into a scratch prefix, then what a user gets
# there, checked with the real tools: the man page (groff -ww warnings, lexgrog, man -l), the
# completions (bash: the completion function called as bash calls it; zsh -n; fish runs its own
# completion), the sounds found by name, the systemd units (the system one with
# systemd-analyze verify) and the system user and runtime directory they need (systemd-sysusers
# and systemd-tmpfiles in a scratch root), and the README's crontab lines run as cron runs
# them (env -i, cron's PATH). Ends with "install-test: N passed, N failed".
#
#   Tests/Shell/install-test.sh .build/debug/announce
set -uo pipefail
bin=$(realpath "${1:?usage: install-test.sh ANNOUNCE_BINARY}")
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d /tmp/announce-install-XXXXXX)
prefix=$scratch/prefix
passed=0 failed=0
daemon_dirs=()

cleanup() {
    for dir in "${daemon_dirs[@]}"; do stop_daemon "$dir"; done
    [ "${KEEP:-}" = 1 ] || rm -rf "$scratch"
}
trap cleanup EXIT

stop_daemon() {  # stop_daemon RUNTIME_DIR: SIGTERM, then wait until it has exited
    local pid
    pid=$(cat "$1/daemon.lock" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null && timeout 10 tail --pid="$pid" -f /dev/null
}

check() {  # check NAME COMMAND...: passes when COMMAND succeeds
    local name=$1; shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "install-test: FAILED: $name" >&2
    fi
}

# --- make install into PREFIX (no DESTDIR: the installed binary is run below) ---------------
make -s -C "$root" install BIN="$bin" PREFIX="$prefix" >"$scratch/install.log" 2>&1 \
    || { cat "$scratch/install.log" >&2; echo "install-test: 0 passed, 1 failed"; exit 1; }
installed=(bin/announce share/man/man1/announce.1 share/bash-completion/completions/announce
           share/zsh/site-functions/_announce share/fish/vendor_completions.d/announce.fish
           lib/systemd/user/announce.service lib/systemd/system/announce-system.service
           lib/sysusers.d/announce.conf lib/tmpfiles.d/announce.conf share/announce/sounds/chime.flac
           share/announce/sounds/done.mp3 share/announce/sounds/attention.wav share/announce/sounds/closing.flac
           share/doc/announce/README.md share/doc/announce/LICENSE share/doc/announce/USAGE.md
           share/doc/announce/json.md
           share/doc/announce/DESIGN.md share/doc/announce/ARCHITECTURE.md)
for file in "${installed[@]}"; do check "installed $file" test -s "$prefix/$file"; done
check "the binary is stripped" bash -c "! readelf -S '$prefix/bin/announce' | grep -q '\.symtab'"
check "--version is debian/changelog's version, its one place" \
    test "$("$prefix/bin/announce" --version)" = "$(sed -n '1s/^announce (\([^)]*\)).*/\1/p' "$root/debian/changelog")"
check "the bash completion is sourced, not run: no #! line" bash -c "! head -1 '$prefix/share/bash-completion/completions/announce' | grep -q '^#!'"
unit=$prefix/lib/systemd/user/announce.service
check "unit ExecStart is PREFIX's binary" grep -qx "ExecStart=$prefix/bin/announce daemon" "$unit"
check "unit Documentation names the man page" grep -q '^Documentation=man:announce(1)' "$unit"
system_unit=$prefix/lib/systemd/system/announce-system.service
check "system unit ExecStart is PREFIX's binary --system" grep -qx "ExecStart=$prefix/bin/announce daemon --system" "$system_unit"
if command -v systemd-analyze >/dev/null; then
    # --man=no: the man page is not where man looks (it is under the scratch PREFIX).
    verify_output=$(systemd-analyze verify --man=no "$system_unit" 2>&1)
    check "systemd-analyze verify accepts the system unit, saying nothing ($verify_output)" test $? = 0 -a -z "$verify_output"
else
    echo "install-test: systemd-analyze missing: the system unit is not verified" >&2
fi
# The system user and runtime directory, made as the package's postinst makes them, in a root
# of their own with only root and audio in its user database.
if command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null; then
    sysroot=$scratch/sysroot
    mkdir -p "$sysroot/etc" "$sysroot/run"
    printf 'root:x:0:0:root:/root:/bin/bash\n' >"$sysroot/etc/passwd"
    printf 'root:x:0:\naudio:x:29:\n' >"$sysroot/etc/group"
    : >"$sysroot/etc/shadow"; : >"$sysroot/etc/gshadow"
    output=$(systemd-sysusers --root="$sysroot" "$prefix/lib/sysusers.d/announce.conf" 2>&1)
    check "systemd-sysusers accepts sysusers.d/announce.conf ($output)" test $? = 0
    check "announce: no login shell, home /nonexistent" \
        grep -Eq '^announce:x:[0-9]+:[0-9]+:[^:]*:/nonexistent:/usr/sbin/nologin$' "$sysroot/etc/passwd"
    check "group announce exists" grep -q '^announce:x:' "$sysroot/etc/group"
    check "announce is in the group audio" grep -Eq '^audio:x:29:(.*,)?announce(,|$)' "$sysroot/etc/group"
    if [ "$(id -u)" = 0 ]; then  # (giving it to announce takes root)
        output=$(systemd-tmpfiles --root="$sysroot" --create "$prefix/lib/tmpfiles.d/announce.conf" 2>&1)
        check "systemd-tmpfiles accepts tmpfiles.d/announce.conf, saying nothing ($output)" test $? = 0 -a -z "$output"
        announce_ids=$(awk -F: '$1 == "announce" {print $3 ":" $4}' "$sysroot/etc/passwd")
        check "/run/announce: announce's, 0755" test "$(stat -c '%u:%g %a' "$sysroot/run/announce" 2>&1)" = "$announce_ids 755"
    else
        echo "install-test: not root: the runtime directory of tmpfiles.d/announce.conf is not checked" >&2
    fi
else
    echo "install-test: systemd-sysusers or systemd-tmpfiles missing: the system user is not checked" >&2
fi

# --- man page --------------------------------------------------------------------------------
page=$prefix/share/man/man1/announce.1
check "groff -man -ww: no warnings" bash -c "groff -man -Tutf8 -ww '$page' 2>&1 >/dev/null | (! grep .)"
check "lexgrog reads NAME" bash -c "lexgrog '$page' | grep -q 'announce - play announcements'"
man_text=$(MANWIDTH=100 man -l "$page" 2>"$scratch/man.err")
check "man -l: no warnings" test ! -s "$scratch/man.err"
for section in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
    check "man page has $section" grep -qx "$section" <<<"$man_text"
done
check "man page lists play's --priority with its values" grep -q 'One of: low, normal, high, critical' <<<"$man_text"

# --- bash: the completion function, called as bash calls it ---------------------------------
complete_bash() {  # complete_bash WORD... : COMPREPLY for the last word (may be ''), one a line
    (
        cd "$scratch/cwd" || exit 1
        PATH="${completion_path:-$prefix/bin:$PATH}"  # --device's values come from the installed binary
        source "$prefix/share/bash-completion/completions/announce"
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _announce "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}"
    ) | sort
}
mkdir -p "$scratch/cwd/clips" && touch "$scratch/cwd/bell.wav" "$scratch/cwd/beep.mp3"
check "bash: subcommands" test "$(complete_bash announce pl)" = "play"
check "bash: --priority values" test "$(complete_bash announce play --priority '')" = $'critical\nhigh\nlow\nnormal'
check "bash: --category values" test "$(complete_bash announce play --category '')" = $'ambient\nmulti-route\nplayback\nsolo-ambient'
check "bash: --if-busy values" test "$(complete_bash announce play --if-busy f)" = "fail"
check "bash: quiet states" test "$(complete_bash announce quiet '')" = $'off\non\nuntil'
check "bash: --device lists the playback PCMs" grep -qx "null" <<<"$(complete_bash announce play -d nu)"
check "bash: play FILE is a file name" test "$(complete_bash announce play be)" = $'beep.mp3\nbell.wav'
check "bash: alert FILE is a file name" grep -qx "clips" <<<"$(complete_bash announce alert c)"
check "bash: info FILE is a file name" test "$(complete_bash announce info bel)" = "bell.wav"
check "bash: help's subcommand names" test "$(complete_bash announce help pl)" = "play"
check "bash: -d with no announce on PATH writes nothing on stderr" \
    test -z "$(completion_path=/nonexistent complete_bash announce play -d nu 2>&1 >/dev/null)"

# --- zsh and fish: the real shells ------------------------------------------------------------
check "zsh -n accepts _announce" zsh -n "$prefix/share/zsh/site-functions/_announce"
fish_complete() {  # what fish offers for the command line $1 (values only)
    (cd "$scratch/cwd" && PATH="$prefix/bin:$PATH" fish --no-config -c \
        "source '$prefix/share/fish/vendor_completions.d/announce.fish'; complete -C '$1'") | cut -f1 | sort
}
check "fish --no-execute accepts announce.fish" fish --no-execute "$prefix/share/fish/vendor_completions.d/announce.fish"
check "fish: --priority values" test "$(fish_complete 'announce play --priority ')" = $'critical\nhigh\nlow\nnormal'
check "fish: --on-interrupt values" test "$(fish_complete 'announce play --on-interrupt ')" = $'drop\nrestart\nresume'
# (--device's values, which the binary computes, need `commandline -C`, which a non-interactive
# fish refuses; bash covers them above.)
check "fish: play FILE is a file name" test "$(fish_complete 'announce play be')" = $'beep.mp3\nbell.wav'
check "fish: help's subcommand names" test "$(fish_complete 'announce help pl')" = "play"

# --- the sounds, found by name from the installed binary ---------------------------------------
info=$("$prefix/bin/announce" info chime 2>&1)
check "info chime finds PREFIX/share/announce/sounds/chime.flac" grep -q "^$prefix/share/announce/sounds/chime.flac\$" <<<"$info"

# --- the README's crontab, as cron runs it --------------------------------------------------
# cron starts each line with HOME, LOGNAME, PATH=/usr/bin:/bin and SHELL=/bin/sh, and sets the
# crontab's own NAME=value lines; the README's PATH line names /usr/local/bin, which is this
# scratch PREFIX here. The daemon plays to a WAV file (the config file's device) in a runtime
# directory of its own, so the test touches neither the machine's sound card nor its daemon.
home=$scratch/home
runtime=$scratch/runtime
daemon_dirs+=("$runtime")
mkdir -p "$home/bin" "$home/sounds" "$home/.config/announce" && mkdir -m 0700 "$runtime"
printf '#!/bin/sh\nexit 0\n' >"$home/bin/backup" && cp "$home/bin/backup" "$home/bin/check-build"
chmod +x "$home/bin/backup" "$home/bin/check-build"
cp "$root/sounds/attention.wav" "$home/sounds/build-red.wav"
crontab_text=$(awk '/^### From cron/{on=1} on && /^```cron/{block=1; next} block && /^```/{exit} block' "$root/README.md")
check "README has a crontab" test -n "$crontab_text"
cron_env=(HOME="$home" LOGNAME="$(id -un)" PATH=/usr/bin:/bin SHELL=/bin/sh ANNOUNCE_RUNTIME_DIR="$runtime")
jobs=0
while IFS= read -r line; do
    case "$line" in
        '#'* | '') continue ;;
        [A-Za-z_]*=*) cron_env+=("${line//\/usr\/local/$prefix}"); continue ;;
    esac
    command=$(sed -E 's/^([^ ]+ +){5}//' <<<"$line")
    capture=$scratch/cron-$jobs.wav
    echo "device = file:FILE=$capture,FORMAT=wav" >"$home/.config/announce/config"
    output=$(cd "$home" && env -i "${cron_env[@]}" /bin/sh -c "$command" 2>&1)
    status=$?
    # The daemon's device closes 100 ms after the queue empties, which completes the WAV; stop
    # it and wait for its exit, which also makes the next line start one that reads its device.
    stop_daemon "$runtime"
    check "cron line exits 0: $line" test "$status" = 0
    check "cron line prints nothing (no mail): $line ($output)" test -z "$output"
    check "cron line played its sound: $line" bash -c "[ \"\$(soxi -D '$capture' 2>/dev/null | cut -d. -f1)\" != '' ] && [ \"\$(soxi -s '$capture')\" -gt 1000 ]"
    jobs=$((jobs + 1))
done <<<"$crontab_text"
check "README's crontab has three jobs" test "$jobs" = 3

# announce alert NAME: the installed attention.wav, heard on the config file's device.
capture=$scratch/alert.wav
echo "device = file:FILE=$capture,FORMAT=wav" >"$home/.config/announce/config"
output=$(env -i "${cron_env[@]}" PATH="$prefix/bin:/usr/bin:/bin" announce alert --wait attention 2>&1)
check "alert attention exits 0 and prints nothing ($output)" test $? = 0 -a -z "$output"
stop_daemon "$runtime"
check "alert attention was heard in full" test "$(soxi -s "$capture" 2>/dev/null)" = "$(soxi -s "$root/sounds/attention.wav")"

# cancel's ids complete from the running daemon's queue.
id=$(ANNOUNCE_RUNTIME_DIR=$runtime "$prefix/bin/announce" play --no-wait --delay 1h -d null "$root/sounds/done.mp3")
check "bash: cancel completes the queued ids" grep -qx "$id" <<<"$(ANNOUNCE_RUNTIME_DIR=$runtime complete_bash announce cancel '')"
ANNOUNCE_RUNTIME_DIR=$runtime "$prefix/bin/announce" cancel "${id:0:6}"
check "cancel by a 6-digit prefix from the installed binary" test $? = 0
stop_daemon "$runtime"

# --- make uninstall leaves nothing ---------------------------------------------------------------
make -s -C "$root" uninstall PREFIX="$prefix" >"$scratch/uninstall.log" 2>&1
check "make uninstall succeeds" test $? = 0
left=$(find "$prefix" -type f)
check "make uninstall removes every file ($left)" test -z "$left"
check "make uninstall removes share/announce" test ! -e "$prefix/share/announce"
for file in lib/systemd/system/announce-system.service lib/sysusers.d/announce.conf lib/tmpfiles.d/announce.conf; do
    check "make uninstall removes $file" test ! -e "$prefix/$file"
done

# --- packaging: DESTDIR with PREFIX=/usr ------------------------------------------------------
dest=$scratch/dest
make -s -C "$root" install BIN="$bin" DESTDIR="$dest" PREFIX=/usr >"$scratch/dest.log" 2>&1
check "make install DESTDIR=... PREFIX=/usr" test $? = 0 -a -x "$dest/usr/bin/announce"
check "DESTDIR: the unit runs /usr/bin/announce" grep -qx "ExecStart=/usr/bin/announce daemon" "$dest/usr/lib/systemd/user/announce.service"
check "DESTDIR: the system unit runs /usr/bin/announce" grep -qx "ExecStart=/usr/bin/announce daemon --system" "$dest/usr/lib/systemd/system/announce-system.service"
check "DESTDIR: sysusers.d and tmpfiles.d under /usr/lib" test -s "$dest/usr/lib/sysusers.d/announce.conf" -a -s "$dest/usr/lib/tmpfiles.d/announce.conf"
make -s -C "$root" uninstall DESTDIR="$dest" PREFIX=/usr >>"$scratch/dest.log" 2>&1
left=$(find "$dest" -type f)
check "DESTDIR: make uninstall removes every file ($left)" test -z "$left"

echo "install-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
