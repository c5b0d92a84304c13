#!/usr/bin/env python3
"""secrets_server.py - the server of the secrets tests (t_secrets.sh): HTTP or
HTTPS on an address the test gives, recording what each request carried.

  secrets_server.py --bind ADDR --port-file F --log F [--tls-cert F --tls-key F]
                    [--repo DIR --token T] [--lifetime S] [--idle S] [--h2] [--ok PREFIX]

Each request is one JSON line in --log: method, path, headers (all of them,
values as received: the test wants to see the real secret arrive), and the
body's length and first bytes, and the HTTP version. An HTTP/1.1
connection idle for --idle seconds (30) is closed. With --h2 (and TLS)
the server offers h2 before http/1.1 by ALPN and speaks HTTP/2 (python3-h2)
to a client that takes it: /echo, /sse and POST /upload as below. Paths:
  /echo            200, the Authorization and X-Api-Key headers in the body
  /tail            200, the X-Tail header's value as the whole body (no newline)
  /echo-enc        200, the Authorization header as it came, the credential in
                   it (Basic: user:password decoded; else the whole value) and
                   X-Api-Key each in base64, URL-safe base64 without padding,
                   hex and upper-case hex, and Accept-Encoding as it came, one
                   "name=value" a line; the body written in pieces of 1 to 11
                   bytes (each its own TLS record, or DATA frame with --h2)
  /sse             a text/event-stream of three events, one second apart
  /upload (POST)   200 once the body is read
  PREFIX...        (--ok) 200 to GET and HEAD, "ok"
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
ap.add_argument("--idle", type=float, default=30)
ap.add_argument("--h2", action="store_true")
ap.add_argument("--ok")
args = ap.parse_args()

threading.Thread(target=lambda: (time.sleep(args.lifetime), os._exit(0)), daemon=True).start()
log_lock = threading.Lock()


def record_line(method, path, headers, body, version):
    line = json.dumps({
        "method": method, "path": path, "headers": headers,
        "body_len": len(body), "body": body[:200].decode("latin-1"), "version": version,
    })
    with log_lock, open(args.log, "a") as f:
        f.write(line + "\n")


def record(handler, body=b""):
    record_line(handler.command, handler.path,
                {k.lower(): v for k, v in handler.headers.items()}, body, "1.1")


def echo_forms(headers):
    """/echo-enc's body (headers: lower-case names)."""
    auth = headers.get("authorization", "-")
    cred = auth
    if auth.lower().startswith("basic "):
        cred = base64.b64decode(auth[6:]).decode("latin-1")
    key = headers.get("x-api-key", "-")
    lines = ["literal=" + auth, "key=" + key]
    for name, v in (("cred", cred), ("key", key)):
        b = v.encode("latin-1")
        lines += ["%s-b64=%s" % (name, base64.b64encode(b).decode()),
                  "%s-b64url=%s" % (name, base64.urlsafe_b64encode(b).decode().rstrip("=")),
                  "%s-hex=%s" % (name, b.hex()), "%s-HEX=%s" % (name, b.hex().upper())]
    lines.append("accept-encoding=" + headers.get("accept-encoding", "-"))
    return ("\n".join(lines) + "\n").encode()


def pieces(body):
    """body cut in pieces of 1, 2, 3, 5, 7 and 11 bytes, over and over."""
    sizes, i, k = (1, 2, 3, 5, 7, 11), 0, 0
    while i < len(body):
        yield body[i:i + sizes[k % len(sizes)]]
        i += sizes[k % len(sizes)]
        k += 1


def serve_h2(sock):
    """One HTTP/2 connection: each request answered when its stream ends;
    /sse from a thread of its own, the connection's writes under a lock."""
    import h2.config
    import h2.connection
    import h2.events
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(
        client_side=False, header_encoding="utf-8"))
    lock = threading.Lock()

    def flush():
        with lock:
            data = conn.data_to_send()
            if data:
                sock.sendall(data)

    def respond(sid, code, body, ctype="text/plain"):
        with lock:
            conn.send_headers(sid, [(":status", str(code)), ("content-type", ctype),
                                    ("content-length", str(len(body)))])
            conn.send_data(sid, body, end_stream=True)
        flush()

    def sse(sid):
        with lock:
            conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
        flush()
        for i, word in enumerate(("one", "two", "three")):
            if i:
                time.sleep(1)
            with lock:
                conn.send_data(sid, ("data: %s %.3f\n\n" % (word, time.time())).encode(),
                               end_stream=i == 2)
            flush()

    def handle(sid, headers, body):
        pseudo = {k: v for k, v in headers if k.startswith(":")}
        plain = {k: v for k, v in headers if not k.startswith(":")}
        method, path = pseudo.get(":method"), pseudo.get(":path")
        record_line(method, path, plain, bytes(body), "2")
        if method == "POST" and path == "/upload":
            return respond(sid, 200, b"got %d\n" % len(body))
        if path == "/echo":
            return respond(sid, 200, ("auth=%s key=%s\n" % (
                plain.get("authorization", "-"), plain.get("x-api-key", "-"))).encode())
        if path == "/sse":
            return threading.Thread(target=sse, args=(sid,), daemon=True).start()
        if path == "/echo-enc":
            body = echo_forms(plain)
            with lock:
                conn.send_headers(sid, [(":status", "200"), ("content-type", "text/plain"),
                                        ("content-length", str(len(body)))])
            flush()
            parts = list(pieces(body))
            for i, part in enumerate(parts):
                with lock:
                    conn.send_data(sid, part, end_stream=i == len(parts) - 1)
                flush()
            return None
        return respond(sid, 404, b"not here\n")

    with lock:
        conn.initiate_connection()
    flush()
    streams = {}
    while True:
        data = sock.recv(65536)
        if not data:
            return
        with lock:
            events = conn.receive_data(data)
        for ev in events:
            if isinstance(ev, h2.events.RequestReceived):
                streams[ev.stream_id] = (ev.headers, bytearray())
            elif isinstance(ev, h2.events.DataReceived):
                streams[ev.stream_id][1].extend(ev.data)
                with lock:
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                handle(ev.stream_id, *streams.pop(ev.stream_id))
            elif isinstance(ev, h2.events.ConnectionTerminated):
                flush()
                return
        flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        self.request.settimeout(args.idle)
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
        if self.path == "/echo-enc":
            body = echo_forms({k.lower(): v for k, v in self.headers.items()})
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for part in pieces(body):
                self.wfile.write(part)
            return None
        if self.path == "/tail":
            return self.reply(200, self.headers.get("X-Tail", "").encode())
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
        if args.ok and self.path.startswith(args.ok):
            return self.reply(200, b"ok\n")
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

    # The TLS handshake in the connection's own thread, as a real server
    # does: a client that connects and is slow to say hello (warden holds
    # the upstream connection while the client inside shakes hands with it)
    # must not hold up every other connection's accept.
    def finish_request(self, request, client_address):
        if args.tls_cert:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(args.tls_cert, args.tls_key)
            ctx.set_alpn_protocols(["h2", "http/1.1"] if args.h2 else ["http/1.1"])
            request.settimeout(30)
            try:
                request = ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write("tls: %s\n" % e)
                request.close()
                return
        try:
            if getattr(request, "selected_alpn_protocol", lambda: None)() == "h2":
                request.settimeout(None)
                serve_h2(request)
            else:
                super().finish_request(request, client_address)
        except OSError:
            pass
        finally:
            request.close()  # the TLS socket; the server closes the one it accepted


srv = Server((args.bind, 0), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
