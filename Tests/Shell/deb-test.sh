#!/bin/bash
# deb-test.sh DEB: the package's life on a Debian 12 with none of the build tools, by piuparts
# (Debian's installation tester): in a fresh chroot made by debootstrap (minbase, plus man-db and
# bash-completion) it installs DEB with its dependencies from the archive, then the scripts of
# deb-test.d run in the chroot: after the install, `announce play chime` into a file device,
# `man announce`, the bash completion in an interactive bash; after `apt remove`, nothing of the
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

# The base system, made once and kept (about 60 MB): a rerun starts from it.
base=$work/bookworm-minbase.tgz
if [ ! -s "$base" ]; then
    root=$(mktemp -d "$work/root.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include=man-db,bash-completion bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
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
check "apt remove left nothing of the package (it has no conffiles)" '[ ! -s "$out/left-after-remove" ] && [ -e "$out/removed" ]'
check "apt purge left no file (piuparts)" 'grep -q "PASS: Installation and purging test." "$work/piuparts.log"'
exit $fail
