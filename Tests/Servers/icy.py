#!/usr/bin/env python3
"""The end-to-end tests' live radio server (Tests/EndToEndTests/StreamTests.swift), in the manner
of SHOUTcast/Icecast: serves FILE over and over as one endless body on 127.0.0.1, at a port the
kernel picks (or --port), written as the first line on stdout once it listens. To a client that
sends `Icy-MetaData: 1` it gives `icy-metaint` and, after every that many audio bytes, a metadata
block: a length byte (x16), then `StreamTitle='...';` padded with NULs, or a lone 0 when the
title did not change since the last block on that connection.

Each connection is a line on stdout, `connection N OFFSET` (OFFSET: where in the endless body it
started), and its end `closed N BYTES` (audio bytes sent). A connection whose request came
through a proxy (it has a Via header) is first told `proxied N`.

It exits after LIFETIME seconds whatever happens, so a test that dies leaves no server behind.

usage: icy.py FILE LIFETIME [--port P] [--rate BYTES_PER_SECOND] [--live] [--metaint N]
                            [--titles 'A|B|C'] [--title-every BYTES] [--drop-after BYTES]
                            [--content-type TYPE]
  --rate         pace the body at this many audio bytes a second (default: as fast as read)
  --live         (with --rate) a connection starts where the body is now, counted from the
                 server's start, as a radio station's does; otherwise at 0
  --titles       the titles, in turn, each for --title-every audio bytes of the body
  --drop-after   close each connection after this many audio bytes
"""
import argparse
import os
import socket
import sys
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("lifetime", type=float)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--live", action="store_true")
    parser.add_argument("--metaint", type=int, default=8192)
    parser.add_argument("--titles", default="")
    parser.add_argument("--title-every", type=int, default=65536)
    parser.add_argument("--drop-after", type=int, default=0)
    parser.add_argument("--content-type", default="audio/mpeg")
    options = parser.parse_args()
    with open(options.file, "rb") as f:
        body = f.read()
    titles = options.titles.split("|") if options.titles else []
    threading.Timer(options.lifetime, lambda: os._exit(0)).start()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", options.port))
    listener.listen(16)
    started = time.monotonic()
    print(listener.getsockname()[1], flush=True)
    lock = threading.Lock()
    count = [0]

    def say(line):
        with lock:
            print(line, flush=True)

    def serve(connection, number):
        sent = 0
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                request += chunk
            wants_metadata = any(line.lower().replace(b" ", b"") == b"icy-metadata:1" for line in request.split(b"\r\n"))
            metaint = options.metaint if wants_metadata and options.metaint > 0 else 0
            if any(line.lower().startswith(b"via:") for line in request.split(b"\r\n")):
                say("proxied %d" % number)
            header = "HTTP/1.0 200 OK\r\nContent-Type: %s\r\nicy-name: announce test radio\r\n" % options.content_type
            if metaint:
                header += "icy-metaint: %d\r\n" % metaint
            connection.sendall((header + "\r\n").encode())
            offset = 0
            if options.live and options.rate > 0:
                offset = int((time.monotonic() - started) * options.rate)
            say("connection %d %d" % (number, offset))
            position = offset  # in the endless body
            until_block = metaint
            last_title = None
            chunk_size = max(256, int(options.rate / 20)) if options.rate > 0 else 16384
            began = time.monotonic()
            while options.drop_after == 0 or sent < options.drop_after:
                size = chunk_size
                if options.drop_after:
                    size = min(size, options.drop_after - sent)
                if metaint:
                    size = min(size, until_block)
                start = position % len(body)
                piece = body[start:start + size]
                out = piece
                position += len(piece)
                sent += len(piece)
                if metaint:
                    until_block -= len(piece)
                    if until_block == 0:
                        until_block = metaint
                        title = titles[(position // options.title_every) % len(titles)] if titles else None
                        if title is None or title == last_title:
                            out += b"\0"
                        else:
                            text = ("StreamTitle='%s';" % title).encode("utf-8")
                            text += b"\0" * (-len(text) % 16)
                            out += bytes([len(text) // 16]) + text
                            last_title = title
                connection.sendall(out)
                if options.rate > 0:
                    due = began + sent / options.rate
                    delay = due - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
        except OSError:
            pass
        finally:
            say("closed %d %d" % (number, sent))
            connection.close()

    while True:
        connection, _ = listener.accept()
        count[0] += 1
        threading.Thread(target=serve, args=(connection, count[0]), daemon=True).start()


if __name__ == "__main__":
    main()
