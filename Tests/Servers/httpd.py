#!/usr/bin/env python3
"""The end-to-end tests' HTTP server (Tests/EndToEndTests/URLTests.swift): Python's http.server
serving DIRECTORY on 127.0.0.1 at a port the kernel picks, written as one line to stdout once
it listens. Besides the files:

  /redirect/N/NAME  302 to /redirect/N-1/NAME, and /redirect/0/NAME to /NAME
  /loop             302 to itself
  /stall            accepts the request and never answers
  /page             an HTML page, text/html
  /gate/NAME        NAME's first half at once, the rest once DIRECTORY/NAME.open exists
  /norange/NAME     NAME, ignoring any Range (a server without ranges)
  /gate-norange/NAME  both

Files (also under /gate/) are served with an ETag and Last-Modified; `Range: bytes=N-`
(honoured unless an If-Range does not match) gets a 206, a matching If-None-Match (or, without
one, an If-Modified-Since not before the file's time) a 304. With LOG given, each request appends
one line to it: `GET PATH range=H if-range=H if-none-match=H -> STATUS`, and a file's body sent to
its end appends `sent PATH`, and a client that hangs up on a gated body `closed PATH`. A request
that came through a proxy (it has a Via header) is first logged `proxied PATH`.

It exits after LIFETIME seconds whatever happens, so a test that dies leaves no server behind.
usage: httpd.py DIRECTORY LIFETIME [LOG]
"""
import email.utils
import functools
import http.server
import os
import sys
import select
import socket
import threading

LOG = None
LOG_LOCK = threading.Lock()


def log(line):
    if LOG:
        with LOG_LOCK, open(LOG, "a") as f:
            f.write(line + "\n")


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.split("/")
        if len(parts) >= 4 and parts[1] == "redirect":
            count = int(parts[2])
            rest = "/".join(parts[3:])
            self.redirect(f"/redirect/{count - 1}/{rest}" if count > 0 else "/" + rest)
        elif self.path == "/loop":
            self.redirect("/loop")
        elif len(parts) >= 3 and parts[1] in ("gate", "norange", "gate-norange"):
            self.send_file("/".join(parts[2:]), gated=parts[1].startswith("gate"), ranges="norange" not in parts[1])
        elif self.path == "/stall":
            threading.Event().wait()  # until the process exits
        elif self.path == "/page":
            body = b"<!DOCTYPE html>\n<html><body><p>Not a sound.</p></body></html>\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif os.path.isfile(os.path.join(self.directory, self.path.lstrip("/"))):
            self.send_file(self.path.lstrip("/"), gated=False, ranges=True)
        else:
            log(f"GET {self.path} range={self.headers.get('Range')} if-range={self.headers.get('If-Range')} -> 404")
            super().do_GET()

    def send_file(self, name, gated, ranges):
        path = os.path.join(self.directory, name)
        info = os.stat(path)
        etag = f'"{info.st_size:x}-{int(info.st_mtime_ns):x}"'
        with open(path, "rb") as f:
            body = f.read()
        start = 0
        wanted = self.headers.get("Range", "")
        if_range = self.headers.get("If-Range")
        if ranges and wanted.startswith("bytes=") and wanted.endswith("-") and (if_range is None or if_range == etag):
            start = int(wanted[6:-1])
        status = 206 if start > 0 else 200
        if start >= len(body) and start > 0:
            status = 416
        if_none_match = self.headers.get("If-None-Match")
        if_modified_since = self.headers.get("If-Modified-Since")
        if if_none_match is not None:
            if if_none_match == etag:
                status = 304
        elif if_modified_since is not None:
            try:
                if email.utils.parsedate_to_datetime(if_modified_since).timestamp() >= int(info.st_mtime):
                    status = 304
            except (TypeError, ValueError):
                pass
        if self.headers.get("Via"):
            log(f"proxied {self.path}")
        log(f"GET {self.path} range={self.headers.get('Range')} if-range={if_range} "
            f"if-none-match={if_none_match} -> {status}")
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", self.date_time_string(int(info.st_mtime)))
        if status == 304:
            self.end_headers()
            return
        if status == 416:
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        half = len(body) // 2
        try:
            if gated and start < half:
                self.wfile.write(body[start:half])
                self.wfile.flush()
                while not os.path.exists(path + ".open"):
                    # A client that hung up meanwhile is logged, and gets nothing more.
                    readable, _, _ = select.select([self.connection], [], [], 0.02)
                    if readable and self.connection.recv(1, socket.MSG_PEEK) == b"":
                        log(f"closed {self.path}")
                        return
                start = half
            self.wfile.write(body[start:])
            self.wfile.flush()
            log(f"sent {self.path}")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    global LOG
    directory, lifetime = sys.argv[1], float(sys.argv[2])
    LOG = sys.argv[3] if len(sys.argv) > 3 else None
    threading.Timer(lifetime, lambda: os._exit(0)).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=directory))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
