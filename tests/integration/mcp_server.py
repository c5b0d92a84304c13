#!/usr/bin/env python3
"""mcp_server.py - a small MCP server over streamable HTTP for t_mcp.sh:
POST /mcp takes one JSON-RPC message; initialize and tools/list answer
JSON; tools/call answers text/event-stream, chunked, two events a second
apart (each carrying the time it was sent), so the client can tell a
streamed answer from a buffered one. Every message it gets is logged with
the client's port (one port: one connection). Writes its port to
--port-file; stops after --lifetime seconds. --tls-cert/--tls-key: HTTPS."""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, obj):
        b = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def chunk(self, s):
        b = s.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(n))
        with open(self.server.log, "a") as f:
            f.write(json.dumps({"peer": self.client_address[1], "msg": msg}) + "\n")
        m, mid = msg.get("method"), msg.get("id")
        if mid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if m == "initialize":
            return self.send_json({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "t", "version": "1"}}})
        if m == "tools/list":
            return self.send_json({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
                {"name": t} for t in ("echo", "rm_all", "ask_me")]}})
        name = msg["params"]["name"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.chunk("event: message\ndata: " + json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"sent": time.time()}}) + "\n\n")
        time.sleep(1)
        self.chunk("event: message\ndata: " + json.dumps({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": "RAN " + name}], "sent": time.time()}}) + "\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--lifetime", type=float, default=90)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    a = ap.parse_args()
    srv = ThreadingHTTPServer((a.bind, 0), H)
    if a.tls_cert:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.daemon_threads = True
    srv.log = a.log
    threading.Timer(a.lifetime, srv.shutdown).start()
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
