"""bench.py's sections, in the order they run: each a function of the run's Bench
(context.py) that stores its raw figures in bench.res[NAME]."""
from . import alert, callgrind, daemon, duck, loudness, micro, mixing, network, players, scale, speech, zones

SECTIONS = {"players": players.players, "tempo": players.tempo, "daemon": daemon.daemon, "scale": scale.scale, "alert": alert.alert,
            "speech": speech.speech, "loudness": loudness.loudness, "network": network.network, "mixing": mixing.mixing, "duck": duck.duck,
            "zones": zones.zones, "callgrind": callgrind.callgrind, "micro": micro.micro}
