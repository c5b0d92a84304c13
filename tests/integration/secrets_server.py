#!/usr/bin/env python3
"""secrets_server.py - the server of the secrets tests (t_secrets.sh): HTTP or
HTTPS on an address the test gives, recording what each request carried.

  secrets_server.py --bind ADDR --port-file F --log F [--tls-cert F --tls-key F]
                    [--repo DIR --token T] [--lifetime S]

Each request is one JSON line in --log: method, path, headers (all of them,
values as received: the test wants to see the real secret arrive), and the
body's length and first bytes. Paths:
  /echo            200, the Authorization and X-Api-Key headers in the body
  /sse             a text/event-stream of three events, one second apart
  /upload (POST)   200 once the body is read
  /repo.git/...    the files of --repo (git's dumb HTTP protocol), only with
                   Authorization: Basic of "x:TOKEN" (else 401 asking for it)
"""
import argparse
import base64
import json
import os
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--bind", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--tls-cert")
ap.add_argument("--tls-key")
ap.add_argument("--repo")
ap.add_argument("--token")
ap.add_argument("--lifetime", type=float, default=120)
args = ap.parse_args()

threading.Thread(target=lambda: (time.sleep(args.lifetime), os._exit(0)), daemon=True).start()
log_lock = threading.Lock()


def record(handler, body=b""):
    line = json.dumps({
        "method": handler.command, "path": handler.path,
        "headers": {k.lower(): v for k, v in handler.headers.items()},
        "body_len": len(body), "body": body[:200].decode("latin-1"),
    })
    with log_lock, open(args.log, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        self.request.settimeout(30)
        super().setup()

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        record(self)
        if self.path == "/echo":
            body = ("auth=%s key=%s\n" % (self.headers.get("Authorization", "-"),
                                          self.headers.get("X-Api-Key", "-"))).encode()
            return self.reply(200, body)
        if self.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for i, word in enumerate(("one", "two", "three")):
                if i:
                    time.sleep(1)
                self.wfile.write(("data: %s %.3f\n\n" % (word, time.time())).encode())
                self.wfile.flush()
            self.close_connection = True
            return
        if self.path.startswith("/repo.git/") and args.repo:
            want = "Basic " + base64.b64encode(("x:%s" % args.token).encode()).decode()
            if self.headers.get("Authorization") != want:
                return self.reply(401, b"auth needed\n", extra=(("WWW-Authenticate", 'Basic realm="t"'),))
            rel = os.path.normpath(self.path[len("/repo.git/"):].split("?")[0])
            if rel.startswith(".."):
                return self.reply(404, b"no\n")
            p = os.path.join(args.repo, rel)
            if not os.path.isfile(p):
                return self.reply(404, b"no such file\n")
            with open(p, "rb") as f:
                return self.reply(200, f.read(), "application/octet-stream")
        return self.reply(404, b"not here\n")

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        record(self, body)
        return self.reply(200, b"got %d\n" % len(body))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET6 if ":" in args.bind else socket.AF_INET

    def get_request(self):
        sock, addr = super().get_request()
        if args.tls_cert:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(args.tls_cert, args.tls_key)
            ctx.set_alpn_protocols(["http/1.1"])
            sock.settimeout(30)
            try:
                sock = ctx.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write("tls: %s\n" % e)
                sock.close()
                raise OSError("handshake failed") from e
        return sock, addr


srv = Server((args.bind, 0), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
