#!/usr/bin/env bash
# Regenerates the clips in sounds/. Everything here is made by the project itself
# (sox synthesis and espeak-ng speech), so it is free to ship with announce.
set -euo pipefail
cd "$(dirname "$0")"

# chime.flac: two bell-like partials (E6 then C6) with exponential decay, 48 kHz mono.
sox -q -n -r 48000 -c 1 -b 16 /tmp/announce-chime-a.wav synth 0.9 sine 1318.5 sine 2637 remix 1-2 fade q 0.005 0.9 0.85 gain -6
sox -q -n -r 48000 -c 1 -b 16 /tmp/announce-chime-b.wav synth 1.2 sine 1046.5 sine 2093 remix 1-2 fade q 0.005 1.2 1.15 gain -6
sox -q /tmp/announce-chime-a.wav /tmp/announce-chime-b.wav -C 8 chime.flac splice 0.45 norm -3
rm -f /tmp/announce-chime-a.wav /tmp/announce-chime-b.wav

# attention.wav: "Attention please." spoken by espeak-ng, resampled to 48 kHz mono 16-bit.
espeak-ng -v en-gb -s 150 -w /tmp/announce-attention.wav "Attention please."
sox -q /tmp/announce-attention.wav -b 16 attention.wav rate -v 48000 norm -3
rm -f /tmp/announce-attention.wav

# done.mp3: a short rising two-tone "done" cue, 48 kHz mono MP3 (exercises the mpg123 path).
# All three clips share 48 kHz mono so the demo plays them on one device configuration.
sox -q -n -r 48000 -c 1 -b 16 /tmp/announce-done.wav synth 0.18 sine 660 : synth 0.3 sine 990 fade q 0.005 0.3 0.2 gain -8
ffmpeg -loglevel error -y -i /tmp/announce-done.wav -c:a libmp3lame -b:a 96k done.mp3
rm -f /tmp/announce-done.wav

# closing.flac: the chime's two bell-like partials falling (C6 then G5), shorter and softer: the
# closing tone `--chime-after` plays after an announcement. 48 kHz mono.
sox -q -n -r 48000 -c 1 -b 16 /tmp/announce-closing-a.wav synth 0.6 sine 1046.5 sine 2093 remix 1-2 fade q 0.005 0.6 0.55 gain -6
sox -q -n -r 48000 -c 1 -b 16 /tmp/announce-closing-b.wav synth 0.9 sine 784 sine 1568 remix 1-2 fade q 0.005 0.9 0.85 gain -6
sox -q /tmp/announce-closing-a.wav /tmp/announce-closing-b.wav -C 8 closing.flac splice 0.3 norm -6
rm -f /tmp/announce-closing-a.wav /tmp/announce-closing-b.wav
