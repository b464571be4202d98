#!/usr/bin/env bash
# Generates the end-to-end test fixtures of `announce` into OUTDIR, deterministically.
#
#   Tests/Shell/make-fixtures.sh OUTDIR
#
# Needs sox, ffmpeg (libmp3lame, libvorbis, libopus), mpg123, espeak-ng and python3
# (standard library only). Running it again rewrites the same files.
#
# Good clips come with a reference decode made by another program (ffmpeg, sox, mpg123), named
#   NAME.<ext>.ref.s16   raw int16 LE, for sources announce plays as int16 (8/16-bit PCM, FLAC 16)
#   NAME.<ext>.ref.s32   raw int32 LE, for 24/32-bit integer PCM (24-bit left-justified: x << 8)
#   NAME.<ext>.ref.f32   raw float32 LE, for float PCM and lossy codecs
# interleaved, same rate and channels as the source. Bad inputs are under bad/.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTDIR" >&2
    exit 64
fi
OUT=$1
for tool in sox ffmpeg mpg123 espeak-ng python3; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is required (make deps-test installs it)" >&2; exit 69; }
done
mkdir -p "$OUT/bad"
OUT=$(cd "$OUT" && pwd)
WORK="$OUT/.work"
rm -rf "$WORK"
mkdir -p "$WORK"

# -R: repeatable (fixed seeds, no time stamps); -D: no dither, so samples are plain rounding.
SOX=(sox -R -D -V1)
# bitexact: no encoder version strings or random ids in the output.
FF=(ffmpeg -nostdin -hide_banner -loglevel error -y)
FFOUT=(-fflags +bitexact -flags:a +bitexact -map_metadata -1)

# tone OUT RATE CHANNELS BITS ENCODING SECONDS FREQ... : one sine per channel at half scale.
tone() {
    local out=$1 rate=$2 channels=$3 bits=$4 encoding=$5 seconds=$6
    shift 6
    local synth=()
    for f in "$@"; do synth+=(sine "$f"); done
    "${SOX[@]}" -n -r "$rate" -c "$channels" -b "$bits" -e "$encoding" "$out" synth "$seconds" "${synth[@]}" vol 0.5
}

# ref IN KIND : the reference decode of a PCM/lossless file by ffmpeg's own decoders.
ref() {
    local in=$1 kind=$2
    case $kind in
        s16) "${FF[@]}" -i "$in" -map 0:a -c:a pcm_s16le -f s16le "$in.ref.s16" ;;
        s32) "${FF[@]}" -i "$in" -map 0:a -c:a pcm_s32le -f s32le "$in.ref.s32" ;;
        f32) "${FF[@]}" -i "$in" -map 0:a -c:a pcm_f32le -f f32le "$in.ref.f32" ;;
    esac
}

# ---------------------------------------------------------------- good clips: PCM and lossless

tone "$OUT/wav16-stereo.wav" 44100 2 16 signed-integer 1.0 440 660
ref "$OUT/wav16-stereo.wav" s16
# A second 16-bit stereo clip at the same rate, for back-to-back playback on one open device.
tone "$OUT/wav16-second.wav" 44100 2 16 signed-integer 0.6 880 990
ref "$OUT/wav16-second.wav" s16
# Mono, for pan (a mono clip with a pan plays in stereo).
tone "$OUT/wav16-mono.wav" 48000 1 16 signed-integer 0.8 523.25
ref "$OUT/wav16-mono.wav" s16

# 8-bit unsigned: announce plays it as int16, (x - 128) << 8.
tone "$OUT/wav8-mono.wav" 16000 1 8 unsigned-integer 0.5 700
ref "$OUT/wav8-mono.wav" s16

tone "$OUT/wav24.wav" 48000 2 24 signed-integer 0.8 587 784
ref "$OUT/wav24.wav" s32

tone "$OUT/wavfloat.wav" 44100 2 32 floating-point 0.7 349 698
ref "$OUT/wavfloat.wav" f32

# WAVE_FORMAT_EXTENSIBLE: ffmpeg writes it for more than two channels.
tone "$WORK/six.wav" 48000 6 16 signed-integer 0.5 300 400 500 600 700 800
"${FF[@]}" -i "$WORK/six.wav" -c:a pcm_s16le "${FFOUT[@]}" "$OUT/wavext-6ch.wav"
ref "$OUT/wavext-6ch.wav" s16

"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a pcm_s16le -rf64 always "${FFOUT[@]}" "$OUT/rf64.wav"
ref "$OUT/rf64.wav" s16

tone "$WORK/caf-src.wav" 32000 2 16 signed-integer 0.6 250 375
"${FF[@]}" -i "$WORK/caf-src.wav" -c:a pcm_s16be "${FFOUT[@]}" -f caf "$OUT/clip.caf"
ref "$OUT/clip.caf" s16

tone "$OUT/clip.aiff" 22050 2 16 signed-integer 0.6 330 495
ref "$OUT/clip.aiff" s16

# AIFC with 32-bit float ('fl32') and little-endian 16-bit ('sowt').
tone "$WORK/aifc-src.wav" 44100 1 32 floating-point 0.5 392
"${FF[@]}" -i "$WORK/aifc-src.wav" -c:a pcm_f32be "${FFOUT[@]}" -f aiff "$OUT/float.aifc"
ref "$OUT/float.aifc" f32
"${FF[@]}" -i "$OUT/wav16-second.wav" -c:a pcm_s16le "${FFOUT[@]}" -f aiff "$OUT/sowt.aifc"
ref "$OUT/sowt.aifc" s16

"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a flac "${FFOUT[@]}" "$OUT/flac16.flac"
ref "$OUT/flac16.flac" s16
"${FF[@]}" -i "$OUT/wav24.wav" -c:a flac "${FFOUT[@]}" "$OUT/flac24.flac"
ref "$OUT/flac24.flac" s32

# One frame: left 12345, right -23456.
python3 - "$OUT/one-frame.wav" <<'EOF'
import struct, sys
data = struct.pack('<hh', 12345, -23456)
fmt = struct.pack('<HHIIHH', 1, 2, 44100, 44100 * 4, 4, 16)
body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack('<I', len(data)) + data
open(sys.argv[1], 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
EOF
ref "$OUT/one-frame.wav" s16

# Spoken: espeak-ng writes 22050 Hz mono 16-bit.
espeak-ng -v en -s 170 -w "$OUT/speech.wav" "Attention please. The train is late."
ref "$OUT/speech.wav" s16

# ---------------------------------------------------------------- tempo, pitch and silence skipping
# A steady 440 Hz tone for --rate and --pitch, and a clip with 2 s of digital silence inside
# (1 s of 440 Hz, 2 s of nothing, 1 s of 660 Hz) for --skip-silence.
tone "$OUT/tone440-4s.wav" 48000 1 16 signed-integer 4 440
# --rate and --pitch at every rate and channel count announce plays: a sine of its own per
# channel (300, 400, ... Hz), so a channel mixed into another shows.
mkdir -p "$OUT/reshape"
for rate in 8000 22050 44100 48000 96000; do
    tone "$OUT/reshape/tone-$rate-1.wav" "$rate" 1 16 signed-integer 3 300
    tone "$OUT/reshape/tone-$rate-2.wav" "$rate" 2 16 signed-integer 3 300 400
    tone "$OUT/reshape/tone-$rate-6.wav" "$rate" 6 16 signed-integer 3 300 400 500 600 700 800
done
tone "$WORK/pause-a.wav" 48000 1 16 signed-integer 1 440
tone "$WORK/pause-b.wav" 48000 1 16 signed-integer 1 660
"${SOX[@]}" -n -r 48000 -c 1 -b 16 "$WORK/pause-silence.wav" trim 0 2
"${SOX[@]}" "$WORK/pause-a.wav" "$WORK/pause-silence.wav" "$WORK/pause-b.wav" "$OUT/pause-inside.wav"

# ---------------------------------------------------------------- good clips: libsndfile's other containers

# soxref IN : the reference decode by sox (its own readers), as raw int16 LE.
soxref() { sox -V1 "$1" -t raw -e signed-integer -b 16 -L "$1.ref.s16"; }

tone "$WORK/containers.wav" 22050 2 16 signed-integer 0.4 440 550
# Big-endian RIFX, Wave64, AU, IRCAM, NIST SPHERE, AVR, 8SVX (mono), PAF; Psion WVE is 8 kHz mono A-law.
# (VOC is left out: libsndfile plays 2 frames more of sox's VOC than sox and ffmpeg read.)
"${SOX[@]}" "$WORK/containers.wav" -B "$OUT/rifx.wav"
for ext in w64 au sf sph avr paf; do
    "${SOX[@]}" "$WORK/containers.wav" "$OUT/container.$ext"
    soxref "$OUT/container.$ext"
done
soxref "$OUT/rifx.wav"
"${SOX[@]}" "$WORK/containers.wav" -c 1 "$OUT/container.8svx"
soxref "$OUT/container.8svx"
"${SOX[@]}" "$WORK/containers.wav" -r 8000 -c 1 "$OUT/container.wve"
soxref "$OUT/container.wve"
# ALAC in CAF. ffmpeg leaves the desc chunk's format flags 0 where Apple's encoder gives the
# source bit depth (1: 16-bit), and libsndfile refuses ALAC without it: set it.
"${FF[@]}" -i "$WORK/containers.wav" -c:a alac "${FFOUT[@]}" -f caf "$WORK/alac.caf"
python3 - "$WORK/alac.caf" "$OUT/alac.caf" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
desc = data.index(b'desc') + 12  # rate (8), format id (4), then the flags
assert data[desc + 8:desc + 12] == b'alac'
data[desc + 12:desc + 16] = (1).to_bytes(4, 'big')
open(sys.argv[2], 'wb').write(data)
EOF
ref "$OUT/alac.caf" s16
# FLAC in Ogg: libFLAC reads it (libsndfile does not).
"${FF[@]}" -i "$WORK/containers.wav" -c:a flac "${FFOUT[@]}" -f ogg "$OUT/flac.oga"
ref "$OUT/flac.oga" s16

# ---------------------------------------------------------------- good clips: lossy

"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a libvorbis -q:a 4 "${FFOUT[@]}" "$OUT/vorbis.ogg"
# Two Vorbis references, neither exact: ffmpeg's own float decoder (an independent
# implementation; it drops the last 128 frames of this clip) and sox through libvorbisfile
# (full length, but rounded to 16 bits by ov_read).
"${FF[@]}" -i "$OUT/vorbis.ogg" -map 0:a -c:a pcm_f32le -f f32le "$OUT/vorbis.ogg.ref.f32"
sox -V1 "$OUT/vorbis.ogg" -t raw -e floating-point -b 32 "$OUT/vorbis.ogg.ref-sox.f32"

tone "$WORK/opus-src.wav" 48000 2 16 signed-integer 1.0 440 660
"${FF[@]}" -i "$WORK/opus-src.wav" -c:a libopus -b:a 96k "${FFOUT[@]}" "$OUT/opus.opus"
# libopus through ffmpeg, asked for float output (its default is int16).
"${FF[@]}" -request_sample_fmt flt -c:a libopus -i "$OUT/opus.opus" -map 0:a -c:a pcm_f32le -f f32le "$OUT/opus.opus.ref.f32"

# 5.1 Vorbis and Opus (300..800 Hz in FL FR FC LFE BL BR): stored in Vorbis channel order,
# ffmpeg's decodes give them in WAV order.
"${FF[@]}" -i "$WORK/six.wav" -c:a libvorbis "${FFOUT[@]}" "$OUT/vorbis-6ch.ogg"
"${FF[@]}" -i "$OUT/vorbis-6ch.ogg" -map 0:a -c:a pcm_f32le -f f32le "$OUT/vorbis-6ch.ogg.ref.f32"
"${FF[@]}" -i "$WORK/six.wav" -c:a libopus "${FFOUT[@]}" "$OUT/opus-6ch.opus"
"${FF[@]}" -request_sample_fmt flt -c:a libopus -i "$OUT/opus-6ch.opus" -map 0:a -c:a pcm_f32le -f f32le "$OUT/opus-6ch.opus.ref.f32"

"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a libmp3lame -b:a 128k "${FFOUT[@]}" "$OUT/cbr128.mp3"
"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a libmp3lame -q:a 4 "${FFOUT[@]}" "$OUT/vbr.mp3"
"${FF[@]}" -i "$OUT/speech.wav" -c:a libmp3lame -b:a 64k "${FFOUT[@]}" "$OUT/mono.mp3"
# ID3v2.3 tag with an embedded cover picture (a generated 32x32 PNG).
"${FF[@]}" -f lavfi -i color=c=0x3366cc:s=32x32 -frames:v 1 "$WORK/cover.png"
"${FF[@]}" -i "$OUT/wav16-second.wav" -i "$WORK/cover.png" -map 0:a -map 1:v -c:a libmp3lame -b:a 128k \
    -c:v copy -id3v2_version 3 -metadata title="Platform change" -metadata:s:v title="Album cover" \
    -metadata:s:v comment="Cover (front)" -fflags +bitexact -flags:a +bitexact "$OUT/cover.mp3"
# VBR without a Xing header, quiet then loud: libmpg123's estimate from the first frames is
# far off (11.3 s for 4.0 s); only counting every frame gives the length.
"${SOX[@]}" -n -r 44100 -c 2 -b 16 "$WORK/quiet.wav" trim 0 1
"${SOX[@]}" -n -r 44100 -c 2 -b 16 "$WORK/loud.wav" synth 3 whitenoise vol 0.5
"${SOX[@]}" "$WORK/quiet.wav" "$WORK/loud.wav" "$WORK/quiet-loud.wav"
"${FF[@]}" -i "$WORK/quiet-loud.wav" -c:a libmp3lame -q:a 2 -write_xing 0 "${FFOUT[@]}" "$OUT/vbr-no-xing.mp3"
# 150 s without a Xing header, long enough that counting it takes longer than the first
# frames take to play on the null device (libmpg123 guesses 30 s from its first frames).
"${FF[@]}" -f lavfi -i sine=f=440:d=150 -ac 1 -c:a libmp3lame -q:a 9 -write_xing 0 "${FFOUT[@]}" "$OUT/long-no-xing.mp3"
# mpg123 is gapless by default, as announce is.
for f in cbr128 vbr mono cover vbr-no-xing long-no-xing; do
    mpg123 -q -e f32 -s "$OUT/$f.mp3" >"$OUT/$f.mp3.ref.f32"
done

# ---------------------------------------------------------------- bad inputs

BAD="$OUT/bad"
: >"$BAD/empty.wav"
head -c 20 "$OUT/wav16-stereo.wav" >"$BAD/truncated-header.wav"
printf 'This is not audio.\nJust some text that happens to be named like a WAV file.\n' >"$BAD/text.wav"
mkdir -p "$BAD/dir.wav"
rm -f "$BAD/no-permission.wav"
cp "$OUT/wav16-stereo.wav" "$BAD/no-permission.wav"
chmod 000 "$BAD/no-permission.wav"

python3 - "$BAD" <<'EOF'
import math, random, struct, sys
bad = sys.argv[1]

def wav(channels, rate, bits, data, data_size=None):
    block = channels * bits // 8
    fmt = struct.pack('<HHIIHH', 1, channels, rate, rate * block, block, bits)
    size = len(data) if data_size is None else data_size
    body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack('<I', size) + data
    riff = len(body) if data_size is None else min(0xFFFFFFFF, 4 + 8 + len(fmt) + 8 + data_size)
    return b'RIFF' + struct.pack('<I', riff) + body

tone = b''.join(struct.pack('<hh', int(round(8000 * math.sin(2 * math.pi * 440 * i / 44100))),
                                   int(round(-6000 * math.sin(2 * math.pi * 550 * i / 44100))))
                for i in range(22050))
open(f'{bad}/zero-channels.wav', 'wb').write(wav(0, 44100, 16, tone[:4000]))
open(f'{bad}/zero-rate.wav', 'wb').write(wav(2, 0, 16, tone[:4000]))
# A header promising 0x7FFFFFF0 bytes of data, followed by 0.5 s of real samples.
open(f'{bad}/huge-data-size.wav', 'wb').write(wav(2, 44100, 16, tone, data_size=0x7FFFFFF0))
open(f'{bad}/huge-data-size.wav.ref.s16', 'wb').write(tone)

# Random bytes named .mp3: neither an MPEG frame sync nor 'ID3' at the start.
random.seed(1)
noise = bytearray(random.getrandbits(8) for _ in range(65536))
noise[0] = 0x5A
noise[1] = 0x17
open(f'{bad}/random.mp3', 'wb').write(bytes(noise))
EOF

# A CBR MP3 with an Info header, cut in the middle of a frame well after the start.
"${FF[@]}" -i "$OUT/wav16-stereo.wav" -c:a libmp3lame -b:a 128k "${FFOUT[@]}" "$WORK/full.mp3"
python3 - "$WORK/full.mp3" "$BAD/cut-mid-frame.mp3" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
assert b'Info' in data[:200] or b'Xing' in data[:200], 'expected an Info/Xing header'
# 128 kbit/s at 44.1 kHz: frames of 417 or 418 bytes. Walk 20 frames (the Info frame and
# 19 of audio) and cut halfway through the 21st.
def frame_len(i):
    b1, b2 = data[i + 1], data[i + 2]
    rates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    return 144000 * rates[b2 >> 4] // 44100 + ((b2 >> 1) & 1)
pos = 0
if data[:3] == b'ID3':
    pos = 10 + ((data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9])
for _ in range(20):
    assert data[pos] == 0xFF and data[pos + 1] & 0xE0 == 0xE0, f'no frame sync at {pos}'
    pos += frame_len(pos)
cut = pos + frame_len(pos) // 2
open(sys.argv[2], 'wb').write(data[:cut])
EOF
mpg123 -q -e f32 -s "$BAD/cut-mid-frame.mp3" >"$BAD/cut-mid-frame.mp3.ref.f32" 2>/dev/null

# Formats announce does not play, made by their encoders where ffmpeg has one, else their magic
# bytes; named .wav so that nothing can go by the name.
UNS="$OUT/unsupported"
mkdir -p "$UNS"
for codec in "aac-mp4 -c:a aac -f mp4" "alac-mp4 -c:a alac -f mp4" "aac-adts -c:a aac -f adts" \
             "ac3 -c:a ac3 -f ac3" "eac3 -c:a eac3 -f eac3" "wma -c:a wmav2 -f asf" "wavpack -c:a wavpack -f wv" \
             "tta -c:a tta -f tta" "webm -c:a libopus -f webm" "speex-ogg -c:a libspeex -ar 16000 -ac 1 -f ogg" \
             "alac-caf -c:a alac -f caf" "ima-caf -c:a adpcm_ima_qt -f caf" "opus-caf -c:a libopus -ar 48000 -f caf"; do
    set -- $codec
    name=$1
    shift
    "${FF[@]}" -i "$WORK/containers.wav" "$@" "${FFOUT[@]}" "$UNS/$name.wav"
done
python3 - "$UNS" <<'EOF'
import struct, sys
d = sys.argv[1]
def put(name, data): open(f'{d}/{name}.wav', 'wb').write(data + bytes(range(256)) * 8)
put('midi', b'MThd' + struct.pack('>IHHH', 6, 0, 1, 96) + b'MTrk' + struct.pack('>I', 4) + b'\x00\xff\x2f\x00')
put('ape', b'MAC ' + struct.pack('<H', 3990))
put('musepack', b'MPCK')
put('dsf', b'DSD ' + struct.pack('<Q', 28))
put('dff', b'FRM8' + struct.pack('>Q', 0) + b'DSD ')
put('amr', b'#!AMR\n')
put('tak', b'tBaK' + bytes([0x00, 0x0d, 0x00, 0x00]))
put('optimfrog', b'OFR ' + struct.pack('<I', 15))
mod = bytearray(1084)
mod[0:10] = b'song name\x00'
mod[1080:1084] = b'M.K.'
put('mod', bytes(mod))
EOF
# 64-bit integer PCM in WAV (libsndfile has no such format).
"${FF[@]}" -i "$WORK/containers.wav" -c:a pcm_s64le -f wav "${FFOUT[@]}" "$UNS/s64-wav.wav"
# MP4 whose first box is `moov` with a 64-bit size (no `ftyp`), as some writers leave it.
python3 - "$UNS/aac-mp4.wav" "$UNS/moov64-mp4.wav" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
boxes, at = {}, 0
while at + 8 <= len(data):
    size, kind = struct.unpack('>I4s', data[at:at + 8])
    boxes[kind] = data[at + 8:at + size]
    at += size
body = boxes[b'moov']
open(sys.argv[2], 'wb').write(struct.pack('>I4sQ', 1, b'moov', 16 + len(body)) + body
                              + struct.pack('>I4s', 8 + len(boxes[b'mdat']), b'mdat') + boxes[b'mdat'])
EOF
# AAC behind an ID3v2 tag (as taggers leave it), and MP3 in MP4 (not AAC).
printf 'ID3\3\0\0\0\0\0\20%016d' 0 | cat - "$UNS/aac-adts.wav" >"$UNS/aac-id3.wav"
"${FF[@]}" -i "$WORK/containers.wav" -c:a libmp3lame -f mp4 "${FFOUT[@]}" "$UNS/mp3-mp4.wav"

# Files that are not audio at all, made by their own tools where one is at hand: named by
# their magic numbers. A program with its ELF header wiped must not pass for MPEG audio after
# junk (machine code is full of byte pairs that read as frame headers).
NOT="$OUT/notaudio"
mkdir -p "$NOT"
cp "$(command -v ls)" "$NOT/elf.wav"
python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[:64] = bytes(64); open(sys.argv[2], "wb").write(d)' \
    "$NOT/elf.wav" "$NOT/headless-elf.wav"
gzip -c "$NOT/elf.wav" >"$NOT/gzip.wav"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").write(sys.argv[2], "ls")' "$NOT/zip.wav" "$NOT/elf.wav"
"${FF[@]}" -f lavfi -i color=red:s=16x16 -frames:v 1 -f image2 -c:v png "$NOT/png.wav"
"${FF[@]}" -f lavfi -i color=red:s=16x16 -frames:v 1 -f image2 -c:v mjpeg "$NOT/jpeg.wav"
printf '%%PDF-1.4\n%%\342\343\317\323\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n' >"$NOT/pdf.wav"
printf 'hello, this is text.\n' | iconv -f UTF-8 -t UTF-16 >"$NOT/utf16-text.wav"

# An MP3 whose LAME tag trims all of its three frames (encoder delay and padding, as in
# mutagen's lame397v9short.mp3): headers that parse, and nothing that mpg123 plays.
"${FF[@]}" -f lavfi -i sine=f=440:d=0.01 -ar 24000 -ac 2 -c:a libmp3lame -b:a 64k -f mp3 -id3v2_version 0 \
    "${FFOUT[@]}" "$WORK/short.mp3"
python3 - "$WORK/short.mp3" "$BAD/no-audio-frames.mp3" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
info = data.find(b'Info')
assert info > 0 and int.from_bytes(data[info + 4:info + 8], 'big') == 15, 'an Info header with frames, bytes, TOC, quality'
delay_padding = info + 8 + 4 + 4 + 100 + 4 + 21  # the LAME tag's 12-bit delay and padding
delay, padding = 576, 1452
data[delay_padding:delay_padding + 3] = bytes([delay >> 4, (delay & 15) << 4 | padding >> 8, padding & 255])
open(sys.argv[2], 'wb').write(data)
EOF

# Binary data whose first bytes happen to be printable: never "text".
printf 'FORM\0\0\1\0MAUDjunk\0\0\0' >"$BAD/printable-binary.wav"

# Damaged FLAC and MP3: each plays what ffmpeg (FLAC) or mpg123 (MP3) decodes of it, with a
# warning; references by them. flac16.flac is 1 s of 44.1 kHz stereo in frames of 4608.
DMG="$OUT/damaged"
mkdir -p "$DMG"
python3 - "$OUT" "$DMG" <<'EOF'
import sys
out, dmg = sys.argv[1], sys.argv[2]
flac = open(f'{out}/flac16.flac', 'rb').read()
blocks, pos = [], 4
while True:
    last, kind, size = flac[pos] & 0x80, flac[pos] & 0x7F, int.from_bytes(flac[pos + 1:pos + 4], 'big')
    blocks.append(pos)
    pos += 4 + size
    if last:
        break
audio = pos
def put(name, data): open(f'{dmg}/{name}', 'wb').write(bytes(data))
def with_total(total):
    data = bytearray(flac)
    at = blocks[0] + 4 + 10  # STREAMINFO: rate, channels, bits, then a 36-bit total
    word = int.from_bytes(data[at:at + 8], 'big')
    data[at:at + 8] = ((word & ~((1 << 36) - 1)) | total).to_bytes(8, 'big')
    return data
put('zero-total.flac', with_total(0))
put('small-total.flac', with_total(1000))
put('beyond-total.flac', with_total(44100 * 261))
lost = bytearray(flac)
for i in range(audio + 20, audio + 3000):
    lost[i] ^= 0x5A  # the first frame and part of the second unreadable
put('lost-sync.flac', lost)
put('junk-before-frames.flac', flac[:audio] + bytes(range(256)) * 20 + flac[audio:])
put('cut.flac', flac[:len(flac) // 2])
# A 3 MiB PADDING block and an APPLICATION block of odd length before the audio.
meta = bytearray(flac[:audio])
meta[blocks[-1]] &= 0x7F
meta += bytes([0x02]) + (7).to_bytes(3, 'big') + b'xmpl\x01\x02\x03'
meta += bytes([0x81]) + (3 << 20).to_bytes(3, 'big') + bytes(3 << 20)
put('big-metadata.flac', meta + flac[audio:])
# A metadata block longer than the file: nothing decodes.
put('block-past-end.flac', meta[:len(meta) - (3 << 20) - 4] + bytes([0x84]) + (0xFFFFF0).to_bytes(3, 'big') + flac[audio:])

mp3 = open(f'{out}/cbr128.mp3', 'rb').read()
head = bytearray(mp3)
for i in range(3000):
    head[i] ^= 0x55  # the Info frame and the first six audio frames
put('damaged-head.mp3', head)
put('junk-before.mp3', bytes(range(256)) * 20 + mp3)
EOF
for f in zero-total small-total beyond-total lost-sync junk-before-frames cut big-metadata; do
    "${FF[@]}" -i "$DMG/$f.flac" -c:a pcm_s16le -f s16le "$DMG/$f.flac.ref.s16" 2>/dev/null  # it reports the damage
done
# Ogg Vorbis and Opus cut in a transfer: no last page, so libsndfile gives no length. The
# references are ffmpeg's float decodes of what is there (Opus's bit-identical to libopus).
"${FF[@]}" -f lavfi -i sine=f=440:d=10 -ac 2 -c:a libopus -b:a 64k "${FFOUT[@]}" "$WORK/long.opus"
"${FF[@]}" -f lavfi -i sine=f=440:d=10 -ac 2 -c:a libvorbis -q:a 2 "${FFOUT[@]}" "$WORK/long.ogg"
for f in long.opus long.ogg; do
    head -c $(($(stat -c %s "$WORK/$f") * 7 / 10)) "$WORK/$f" >"$DMG/cut.${f#long.}"
done
"${FF[@]}" -request_sample_fmt flt -c:a libopus -i "$DMG/cut.opus" -map 0:a -c:a pcm_f32le -f f32le "$DMG/cut.opus.ref.f32"
"${FF[@]}" -i "$DMG/cut.ogg" -map 0:a -c:a pcm_f32le -f f32le "$DMG/cut.ogg.ref.f32"
# Cut inside its first audio page (the first with a granule position): nothing decodes.
python3 - "$WORK/long.ogg" "$DMG/cut-before-audio.ogg" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
at = 0
while struct.unpack_from('<q', data, at + 6)[0] <= 0:
    at += 27 + data[at + 26] + sum(data[at + 27:at + 27 + data[at + 26]])
open(sys.argv[2], 'wb').write(data[:at + 100])
EOF
# PCM files cut short in a transfer: their headers still give the whole length.
head -c 100000 "$OUT/wav16-stereo.wav" >"$DMG/cut.wav"
head -c 30000 "$OUT/clip.aiff" >"$DMG/cut.aiff"
head -c 40000 "$OUT/clip.caf" >"$DMG/cut.caf"
for f in cut.wav cut.aiff cut.caf; do
    "${FF[@]}" -i "$DMG/$f" -c:a pcm_s16le -f s16le "$DMG/$f.ref.s16"
done
for f in damaged-head junk-before; do
    mpg123 -q -e f32 -s "$DMG/$f.mp3" >"$DMG/$f.mp3.ref.f32" 2>/dev/null
done

# Two MP3s joined: 44.1 kHz stereo, then the mono speech clip at another rate.
# Only the first part may play; its reference is cbr128.mp3's.
cat "$OUT/cbr128.mp3" "$OUT/mono.mp3" >"$BAD/spliced-formats.mp3"

rm -rf "$WORK"
