#!/usr/bin/env python3
"""mock_anthropic.py - a scripted mock of the Anthropic Messages API for the
end-to-end tests that run the real Claude Code CLI under warden.

Listens on 127.0.0.1 (or --bind ADDR) on a port the OS picks (or --port N)
and writes that port to --port-file; with --tls-cert and --tls-key it serves
HTTPS. GET /api/hello and /v1/oauth/hello answer 200: the connectivity
check of Claude Code's first run, when the mock stands in for
api.anthropic.com and platform.claude.com.
POST /v1/messages follows a script:
  - a conversation with fewer tool_results than --command was given: reply
    with one tool_use block calling Claude Code's shell tool (Bash) with the
    next command (--command may be repeated: one tool call after the other,
    each once the result of the one before has arrived, allowed or refused);
  - once a tool_result has arrived for each: reply with the text "done".
Both streaming (SSE events) and plain JSON replies are served. Requests that
are not part of the conversation (count_tokens, a title/quota probe with a
different system prompt, other paths) get a minimal valid reply or 404.
Every request (method, path, body) is appended to --log as one JSON line, and
the content of each tool_result seen is appended to --results.
Standard library only.
"""

import argparse
import http.server
import json
import os
import socket
import ssl
import sys

from mocklib import log_line, next_id, record_keys

ARGS = None
TLS = [None]  # the server's ssl.SSLContext with --tls-cert



def tool_results(messages):
    """The tool_result blocks of the conversation, oldest first."""
    out = []
    for m in messages or []:
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append(block)
    return out


def offers_bash(body):
    return any(t.get("name") == "Bash" for t in body.get("tools") or []
               if isinstance(t, dict))


def plan_reply(body):
    """The content blocks and stop reason the script gives for BODY."""
    results = tool_results(body.get("messages"))
    if offers_bash(body) and len(results) < len(ARGS.command):
        block = {
            "type": "tool_use",
            "id": next_id("toolu"),
            "name": "Bash",
            "input": {"command": ARGS.command[len(results)],
                      "description": "Write the marker and read outside"},
        }
        return [block], "tool_use"
    for r in results:
        log_line(ARGS.results, {"tool_use_id": r.get("tool_use_id"),
                                "is_error": r.get("is_error", False),
                                "content": r.get("content")})
    return [{"type": "text", "text": "done"}], "end_turn"


def usage():
    return {"input_tokens": 10, "output_tokens": 5,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        # The TLS handshake runs here, in the connection's own thread, so a
        # client that stalls in it holds up only itself.
        if TLS[0] is not None:
            self.request.settimeout(30)
            self.request = TLS[0].wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, fmt, *a):  # keep stderr quiet; the log file has it
        pass

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def record(self, body):
        record_keys(ARGS.keys, self.headers, ("x-api-key", "authorization"))
        log_line(ARGS.log, {"method": self.command, "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()
                                        if k.lower() not in ("x-api-key", "authorization")},
                            "body": body})

    def do_GET(self):
        self.record(None)
        path = self.path.split("?")[0]
        if path in ("/api/hello", "/v1/oauth/hello"):
            self.send_json(200, {"message": "hello"})
        elif path == "/v1/models":
            self.send_json(200, {"data": [], "has_more": False,
                                 "first_id": None, "last_id": None})
        else:
            self.send_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "mock: no " + path}})

    def do_HEAD(self):
        self.record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.read_body()
        self.record(body)
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": 10})
        elif path == "/v1/messages":
            blocks, stop = plan_reply(body)
            if body.get("stream"):
                self.stream(body, blocks, stop)
            else:
                self.send_json(200, self.message(body, blocks, stop))
        else:
            self.send_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "mock: no " + path}})

    def message(self, body, blocks, stop):
        return {"id": next_id("msg"), "type": "message", "role": "assistant",
                "model": body.get("model", "claude-mock"), "content": blocks,
                "stop_reason": stop, "stop_sequence": None, "usage": usage()}

    def stream(self, body, blocks, stop):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        self.close_connection = True
        msg = self.message(body, [], None)
        msg["usage"] = dict(usage(), output_tokens=1)

        def event(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())

        event("message_start", {"type": "message_start", "message": msg})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                start = dict(b, input={})
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": start})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(b["input"])}})
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5}})
        event("message_stop", {"type": "message_stop"})
        self.wfile.flush()


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--command", required=True, action="append",
                   help="the Bash command of a tool_use (repeat: one call after the other)")
    p.add_argument("--bind", default="127.0.0.1", help="the address to listen on")
    p.add_argument("--port", type=int, default=0, help="the port (0: the OS picks)")
    p.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM, chain)")
    p.add_argument("--tls-key", help="the certificate's private key (PEM)")
    p.add_argument("--keys", help="append each request's credential headers to this file")
    ARGS = p.parse_args()
    if bool(ARGS.tls_cert) != bool(ARGS.tls_key):
        p.error("--tls-cert and --tls-key go together")

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in ARGS.bind else socket.AF_INET

    if ARGS.tls_cert:
        TLS[0] = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        TLS[0].load_cert_chain(ARGS.tls_cert, ARGS.tls_key)
    server = Server((ARGS.bind, ARGS.port), Handler)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
