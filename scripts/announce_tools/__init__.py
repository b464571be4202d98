"""The library of scripts/bench.py (make bench) and scripts/stress.py (make stress): one client of
the daemon's protocol for both, and bench.py's sections and report.

Shared:     client.py   the socket protocol: a connection, requests, events
            daemons.py  private runtime directories and the daemons in them
            proc.py     running commands; other processes' CPU and memory; percentiles
bench.py:   config.py   paths and repetition counts
            context.py  what the sections share (Bench): counts, results, clean-ups, inputs
            runners.py  the reference players' runs, announce's counted beside them
            servers.py  private sound servers (PulseAudio, PipeWire) for the paced figures
            sections/   one module per section (players and tempo together)
            machine.py  the ALSA configuration pinned, the machine described, other load
            targets.py  the figures as target rows (PASS, FAIL, INFO)
            report.py   BENCHMARKS.md

Standard library only.
"""
