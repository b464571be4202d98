"""The daemon's socket protocol (docs/protocol.md), the one client bench.py and stress.py share:
one JSON object a line each way, a reply per request, and on an `events` connection (or a
`play` with `wait`) the events after it."""
import json
import select
import socket
import time


class Closed(ConnectionError):
    """The daemon closed the connection."""


def encode(obj):
    """A request line: obj with the protocol version, compact, newline-terminated."""
    return json.dumps(dict({"v": 1}, **obj), separators=(",", ":")).encode() + b"\n"


class Conn:
    """One connection to the daemon's socket. Reads are buffered, so a reply and the events
    that arrive in the same read are all kept for the next call."""

    def __init__(self, path, timeout=120):
        # The default: a `clear` of 1000 items fsyncs each, slow on a busy disk.
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError:
            self.sock.close()
            raise
        self.buf = b""

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def send(self, obj):
        self.sock.sendall(encode(obj))

    def send_raw(self, data):
        """Bytes as they are: the fuzz's broken lines and lines sent a piece at a time."""
        self.sock.sendall(data)

    def line(self, limit=1 << 20):
        """The next line as bytes, without its newline: for replies that may not be JSON. When
        the daemon closes the connection first, or limit bytes come without a newline, what
        came (b"" for nothing)."""
        while b"\n" not in self.buf and len(self.buf) <= limit:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def next(self, timeout=None):
        """The next message; None once timeout seconds pass without one."""
        while b"\n" not in self.buf:
            if timeout is not None and not select.select([self.sock], [], [], max(0.0, timeout))[0]:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("the daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def pending(self):
        out = []
        while (m := self.next(timeout=0)) is not None:
            out.append(m)
        return out

    def until(self, pred, what, timeout=10.0, each=None):
        deadline = time.monotonic() + timeout
        while True:
            m = self.next(timeout=deadline - time.monotonic())
            if m is None:
                raise RuntimeError(f"no {what} within {timeout:g} s")
            if each:
                each(m)
            if pred(m):
                return m

    def call(self, obj):
        """Sends a request; its reply (events before it are dropped)."""
        self.send(obj)
        while "event" in (m := self.next()):
            pass
        if not m.get("ok"):
            raise RuntimeError(f"the daemon refused {obj.get('op')}: {m.get('error')}")
        return m


def item(path, **kw):
    """An ItemRequest of one clip at gain 1, centred; the other keyword arguments as they are."""
    clip = {"path": path, "gain": 1, "pan": 0, "loops": kw.pop("loops", 0)}
    if "device" in kw:
        clip["device"] = kw.pop("device")
    return dict(clip=clip, **kw)


def is_event(kind, ident=None):
    return lambda m: m.get("event") == kind and (ident is None or m.get("id") == ident)
