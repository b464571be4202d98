#!/usr/bin/python3
"""Prints the sound server's restore-database entry NAME as JSON (null when it has none), read
through libpulse's ext-stream-restore by pulsectl (Debian's python3-pulsectl): module-stream-restore
on PulseAudio; on pipewire-pulse, the entries written through it. Volumes as the server's integers.

    Tests/Shell/restore-entry.py NAME      (PULSE_SERVER etc. name the server)
"""
import json
import sys

import pulsectl

with pulsectl.Pulse("announce-test-restore-entry") as pulse:
    entry = next((e for e in pulse.stream_restore_list() if e.name == sys.argv[1]), None)
    print(json.dumps(None if entry is None else {
        "volume": [round(value * 65536) for value in entry.volume.values],
        "channels": list(entry.channel_list),
        "device": entry.device,
        "mute": bool(entry.mute),
    }))
