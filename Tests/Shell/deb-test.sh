#!/bin/bash
# deb-test.sh DEB: the package's life on a Debian 12 with none of the build tools, by piuparts
# (Debian's installation tester): in a fresh chroot made by debootstrap (minbase, plus man-db,
# bash-completion and systemd) it installs DEB with its dependencies from the archive, then the scripts of
# deb-test.d run in the chroot: after the install, `announce play chime` into a file device,
# `man announce`, the bash completion in an interactive bash, the system user announce that the
# package made, and `announce daemon --system` started by root (it becomes announce) with root's
# plain `announce play chime` heard on its file device; after `apt remove`, nothing of the
# package but conffiles. piuparts then purges it and fails on any file left. The capture and what
# the scripts saw come back through a bind mount and are checked here with sox and dpkg-deb.
# Root only (piuparts and debootstrap need it), as CI runs.
set -euo pipefail
deb=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(realpath "${DEB_TEST_DIR:-.build/deb-test}")
mirror=${DEB_TEST_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "deb-test: piuparts and debootstrap need root" >&2; exit 77; }
mkdir -p "$work"

# The base system, made once and kept (about 120 MB): a rerun starts from it. With systemd, as
# nearly every Debian 12 has it: the package depends on it (or another systemd-sysusers) for its
# system user, and systemd installed with the package would leave files of its own (/var/lib/private,
# /root/.ssh, ...) after it is purged, which piuparts would count against the package.
base=$work/bookworm-minbase-systemd.tgz
if [ ! -s "$base" ]; then
    root=$(mktemp -d "$work/root.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include=man-db,bash-completion,systemd bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    tar -C "$root" -czf "$base.part" . && mv "$base.part" "$base"
    rm -rf "$root"
    trap - EXIT
fi

# What the scripts in the chroot leave for the checks below: the chroot sees this directory at
# the same path.
out=$work/out
rm -rf "$out" && mkdir -p "$out"
scripts=$(mktemp -d "$work/scripts.XXXXXX")
trap 'rm -rf "$scripts"' EXIT
for script in "$here"/deb-test.d/*; do
    sed "s|@OUT@|$out|g" "$script" >"$scripts/$(basename "$script")"
    chmod 0755 "$scripts/$(basename "$script")"
done

if ! piuparts --basetgz "$base" --mirror "$mirror" --distribution bookworm --no-upgrade-test \
        --scriptsdir "$scripts" --bindmount "$out" --ignore-regex "^$out(/.*)?$" --log-file "$work/piuparts.log" "$deb" >/dev/null 2>&1; then
    grep -E "^[0-9:]+ (ERROR|FAIL)|^  " "$work/piuparts.log" | tail -30 >&2
    echo "deb-test: piuparts failed; its log: $work/piuparts.log" >&2
    exit 1
fi

# Checked outside the chroot, with tools announce did not write.
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1" >&2; fail=1; fi; }
version=$(dpkg-deb -f "$deb" Version)
check "announce --version prints the package's version ($version)" '[ "$(cat "$out/version")" = "$version" ]'
capture_seconds=$(sox --i -D "$out/chime.wav" 2>/dev/null || echo 0)
chime_seconds=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/announce/sounds/chime.flac | sox -t flac - -n stat 2>&1 | awk '/Length/ {print $3}')
check "announce play chime wrote the chime to the file device (${capture_seconds} s of ${chime_seconds} s, sox)" \
    'awk -v c="$capture_seconds" -v s="$chime_seconds" "BEGIN { exit !(c >= s && c < s + 0.5) }"'
peak=$(sox "$out/chime.wav" -n stat 2>&1 | awk '/Maximum amplitude/ {print $3}')
check "the capture is sound, not silence (peak $peak)" 'awk -v p="$peak" "BEGIN { exit !(p > 0.05) }"'
check "man announce renders the page" 'grep -q "announce play" "$out/man.txt"'
check "the bash completion loads in an interactive bash and completes 'announce pl' to play" 'grep -qx "play" "$out/completion.txt"'

# The system user and `announce daemon --system` (the second part of post_install_announce).
announce_uid=$(cut -d: -f3 "$out/passwd-announce" || true)
announce_gid=$(cut -d: -f3 "$out/group-announce" || true)
audio_gid=$(cut -d: -f3 "$out/group-audio" || true)
check "the package made the system user announce: no login shell, home /nonexistent ($(cat "$out/passwd-announce"))" \
    'grep -Eq "^announce:x:[0-9]+:$announce_gid:[^:]*:/nonexistent:/usr/sbin/nologin\$" "$out/passwd-announce" && [ "$announce_uid" -lt 1000 ]'
check "id announce: group announce, and audio ($(cat "$out/id-announce"))" \
    'grep -q "gid=$announce_gid(announce) " "$out/id-announce" && grep -q "groups=.*[=,]$audio_gid(audio)" "$out/id-announce"'
check "announce is a member of audio in the group file ($(cat "$out/group-audio"))" \
    'cut -d: -f4 "$out/group-audio" | tr , "\n" | grep -qx announce'
daemon_ids=$(tr '\t\n' '  ' <"$out/system-daemon-ids" || true)
check "the system daemon started by root runs as announce, uid $announce_uid ($daemon_ids)" \
    '[ "$(awk "/^Uid:/ {print \$2, \$3, \$4, \$5}" "$out/system-daemon-ids")" = "$announce_uid $announce_uid $announce_uid $announce_uid" ] &&
     [ "$(awk "/^Gid:/ {print \$2, \$3, \$4, \$5}" "$out/system-daemon-ids")" = "$announce_gid $announce_gid $announce_gid $announce_gid" ]'
check "the system daemon has the groups announce and audio ($daemon_ids)" \
    'awk "/^Groups:/" "$out/system-daemon-ids" | tr " \t" "\n\n" | grep -qx "$announce_gid" &&
     awk "/^Groups:/" "$out/system-daemon-ids" | tr " \t" "\n\n" | grep -qx "$audio_gid"'
check "its socket: group announce, mode 660 ($(cat "$out/system-socket"))" '[ "$(cat "$out/system-socket")" = "announce 660" ]'
check "root's plain announce play chime reached it and exited 0 ($(cat "$out/system-play.log"))" \
    '[ "$(cat "$out/system-play-status")" = 0 ]'
system_seconds=$(sox --i -D "$out/system.wav" 2>/dev/null || echo 0)
check "the system daemon wrote the chime to its file device (${system_seconds} s of ${chime_seconds} s, sox)" \
    'awk -v c="$system_seconds" -v s="$chime_seconds" "BEGIN { exit !(c >= s && c < s + 0.5) }"'
check "SIGTERM stopped the system daemon within 10 s, exit 0 ($(tr '\n' ' ' <"$out/system-daemon-stop"); its log: $out/system-daemon.log)" \
    '[ "$(cat "$out/system-daemon-status")" = 0 ]'
check "apt remove left nothing of the package (it has no conffiles)" '[ ! -s "$out/left-after-remove" ] && [ -e "$out/removed" ]'
check "apt purge left no file (piuparts)" 'grep -q "PASS: Installation and purging test." "$work/piuparts.log"'
exit $fail
