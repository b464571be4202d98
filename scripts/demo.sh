#!/usr/bin/env bash
# make run: play the shipped sounds on the default device. Without a sound card
# (ALSA says 69: no device), write the same demo to demo.wav through ALSA's file device.
set -uo pipefail
bin=${1:?usage: demo.sh PATH-TO-announce}
cd "$(dirname "$0")/.."
clips=(sounds/chime.flac sounds/attention.wav sounds/done.mp3)

"$bin" play "${clips[@]}"
status=$?
if [ "$status" -eq 69 ]; then
  out="$PWD/demo.wav"
  echo "No usable sound card here (ALSA 'default' is unavailable); writing the demo to a file instead."
  "$bin" play -q -d "file:FILE=$out,FORMAT=wav" "${clips[@]}" || exit $?
  echo "demo written to $out"
  exit 0
fi
exit "$status"
