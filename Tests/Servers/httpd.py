#!/usr/bin/env python3
"""The end-to-end tests' HTTP server (Tests/EndToEndTests/URLTests.swift): Python's http.server
serving DIRECTORY on 127.0.0.1 at a port the kernel picks, written as one line to stdout once
it listens. Besides the files:

  /redirect/N/NAME  302 to /redirect/N-1/NAME, and /redirect/0/NAME to /NAME
  /loop             302 to itself
  /stall            accepts the request and never answers
  /page             an HTML page, text/html

It exits after LIFETIME seconds whatever happens, so a test that dies leaves no server behind.
usage: httpd.py DIRECTORY LIFETIME
"""
import functools
import http.server
import os
import sys
import threading


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.split("/")
        if len(parts) >= 4 and parts[1] == "redirect":
            count = int(parts[2])
            rest = "/".join(parts[3:])
            self.redirect(f"/redirect/{count - 1}/{rest}" if count > 0 else "/" + rest)
        elif self.path == "/loop":
            self.redirect("/loop")
        elif self.path == "/stall":
            threading.Event().wait()  # until the process exits
        elif self.path == "/page":
            body = b"<!DOCTYPE html>\n<html><body><p>Not a sound.</p></body></html>\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            super().do_GET()

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    directory, lifetime = sys.argv[1], float(sys.argv[2])
    threading.Timer(lifetime, lambda: os._exit(0)).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=directory))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
