"""Private sound servers for the figures on a paced device (alert, mixing, duck): PulseAudio
(Tests/Shell/paced-audio.sh) and PipeWire (Tests/Shell/pipewire-audio.sh), and what their
clients need: the environment, and a stream's volume as pactl lists it."""
import os
import re
import shutil
import subprocess
import tempfile

from .config import CACHE, ROOT, log


def server_env(pdir):
    """The environment of a client of the private sound server in pdir (its DIR/env), through libpulse
    and ALSA's `pulse` device."""
    env = dict(os.environ)
    for line in open(os.path.join(pdir, "env")):
        if line.startswith("export ") and "=" in line:
            k, v = line[7:].strip().split("=", 1)
            env[k] = v
    if env.get("ALSA_CONFIG_PATH"):  # the pinned configuration has no conf.d: define `pulse` (libasound2-plugins)
        pcm = "".join(f'{k}.pulse {{ @args [ DEVICE ] @args.DEVICE {{ type string default "" }} type pulse device $DEVICE }}\n'
                      for k in ("pcm", "ctl"))
        path = os.path.join(pdir, "alsa-pulse.conf")
        open(path, "w").write(open(env["ALSA_CONFIG_PATH"]).read() + pcm)
        env["ALSA_CONFIG_PATH"] = path
    return env


def sink_input_volume(env, application):
    """`pactl list sink-inputs`: the per-channel volume of the stream of `application`, or None."""
    text = subprocess.run(["pactl", "list", "sink-inputs"], env=env, capture_output=True, text=True).stdout
    for block in text.split("Sink Input #")[1:]:
        if f'application.name = "{application}"' in block:
            m = re.search(r"^\s*Volume: (.*)$", block, re.M)
            return [int(v) for v in re.findall(r": (\d+) /", m.group(1))] if m else None
    return None


# The paced device: a private real-time PulseAudio with a 48 kHz null sink, played through ALSA
# `pulse`. Started once per run, on first use (b.paced: False until then, None if it failed).

def paced_env(b):
    if b.paced is not False:
        return b.paced
    b.paced = None
    pdir = os.path.join(CACHE, "paced")
    if len(pdir) > 80:
        pdir = tempfile.mkdtemp(prefix="announce-paced.")
    script = os.path.join(ROOT, "Tests", "Shell", "paced-audio.sh")
    if subprocess.run([script, "up", pdir], env=dict(os.environ, PACED_WATCH_PID=str(os.getpid()))).returncode != 0:
        log("the paced device did not come up: no `pulse` figures")
        return None
    b.cleanups.append(lambda: subprocess.run([script, "down", pdir], capture_output=True))
    env = server_env(pdir)
    b.pulse_pid = int(open(os.path.join(pdir, "pulseaudio.pid")).read().split()[0])
    b.paced = env
    return env


def pipewire_env(b):
    """A private PipeWire with WirePlumber and pipewire-pulse (Tests/Shell/pipewire-audio.sh), or None."""
    if not all(shutil.which(t) for t in ("pipewire", "wireplumber", "pipewire-pulse", "dbus-daemon")):
        log("PipeWire is not installed: no PipeWire figures")
        return None
    pdir = os.path.join(CACHE, "pipewire")
    if len(pdir) > 80:
        pdir = tempfile.mkdtemp(prefix="announce-pw.")
    shutil.rmtree(pdir, ignore_errors=True)  # a run's leftovers keep the next from listening
    script = os.path.join(ROOT, "Tests", "Shell", "pipewire-audio.sh")
    if subprocess.run([script, "up", pdir], env=dict(os.environ, PACED_WATCH_PID=str(os.getpid())),
                      capture_output=True).returncode != 0:
        log("the private PipeWire did not come up: no PipeWire figures")
        return None
    b.cleanups.append(lambda: subprocess.run([script, "down", pdir], capture_output=True))
    return server_env(pdir)
