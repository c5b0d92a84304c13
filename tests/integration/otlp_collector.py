#!/usr/bin/env python3
"""otlp_collector.py - the OpenTelemetry collector stand-in of t_export.sh:
an HTTP server on 127.0.0.1 (an ephemeral port, printed as "LISTENING PORT")
that records each request it is sent as a JSON line in LOG ({"path",
"content_type", "length", "body"}: the body parsed as JSON, or null) and
answers by MODE:
  ok        200 with {} (what a collector answers)
  status:N  status N
  slow:MS   200, MS milliseconds after the request is recorded
  hang      reads the request, then says nothing until it is closed
  garbage   a megabyte without a line end where the status line belongs
With --tls CERT KEY it speaks HTTPS; with --port N it listens on port N
(t_stream.sh stops it and starts it again there). Exits after LIFETIME
seconds. SIGTERM stops it as a collector stops: a request it has recorded
is answered first, so that a stop does not itself make a repeat (a batch
recorded whose answer was lost is sent again, by design).

usage: otlp_collector.py LOG MODE LIFETIME [--tls CERT KEY] [--port N]"""
import http.server
import json
import os
import signal
import ssl
import sys
import threading
import time

LOG, MODE, LIFETIME = sys.argv[1], sys.argv[2], float(sys.argv[3])
# held from a request's record to its answer; SIGTERM takes it to exit
RECORDING = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with RECORDING:
            with open(LOG, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "content_type": self.headers.get("Content-Type"),
                                    "length": n, "body": body}) + "\n")
            if MODE.startswith("slow:"):
                time.sleep(int(MODE.split(":")[1]) / 1000)
            if MODE not in ("hang", "garbage"):
                self.answer(int(MODE.split(":")[1]) if MODE.startswith("status:") else 200)
                return
        if MODE == "hang":
            time.sleep(LIFETIME)
            return
        self.wfile.write(b"A" * (1 << 20))
        self.wfile.flush()

    def answer(self, status):
        out = b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def stop(*_):
    RECORDING.acquire()
    os._exit(0)


def main():
    signal.signal(signal.SIGTERM, stop)
    args = sys.argv[4:]
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    if "--tls" in args:
        i = args.index("--tls")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args[i + 1], args[i + 2])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("LISTENING", srv.server_address[1], flush=True)
    threading.Timer(LIFETIME, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
