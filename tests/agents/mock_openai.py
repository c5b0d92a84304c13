#!/usr/bin/env python3
"""mock_openai.py - a scripted mock of the OpenAI Responses API for the
end-to-end tests that run the real Codex CLI (npm @openai/codex) under warden.

Listens on 127.0.0.1 on a port the OS picks and writes that port to
--port-file. A turn of the conversation arrives either as POST /v1/responses
(answered with SSE events) or, as Codex prefers, as a "response.create"
message on a WebSocket opened with GET /v1/responses (answered with the same
events, one text frame each). Each turn follows a two-step script:
  - no tool output in the input yet: reply with one call of the shell tool
    the request offers, running the command given by --command:
    in code mode (a custom tool "exec" that runs JavaScript, the default of
    Codex 0.169's models) a cell calling tools.exec_command; otherwise the
    function exec_command, shell_command or shell, in that order;
  - once a tool output has arrived: reply with the assistant message "done".
A turn that offers no shell tool (a side request) gets "done" too. Other
paths get a minimal valid reply (GET .../models: an empty list) or 404.
Every request and every WebSocket message (method, path, headers with
credentials reduced to their scheme, body) is appended to --log as one JSON
line, and each tool output seen is appended to --results as one JSON line.
Standard library only.
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import struct
import sys

from mocklib import log_line, next_id, record_keys

ARGS = None
SECRET_HEADERS = ("authorization", "x-api-key", "openai-api-key", "cookie")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output",
                "local_shell_call_output")
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"



def input_items(body):
    items = body.get("input")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def offered_tools(body):
    """The tools BODY offers: its "tools" list and the tools of its
    "additional_tools" input items, namespaces flattened."""
    out = []

    def add(tools):
        for t in tools or []:
            if isinstance(t, dict):
                if t.get("type") == "namespace":
                    add(t.get("tools"))
                else:
                    out.append(t)
    add(body.get("tools"))
    for i in input_items(body):
        if i.get("type") == "additional_tools":
            add(i.get("tools"))
    return {t.get("name") or (t.get("function") or {}).get("name") for t in out}


def shell_call(body):
    """The output item calling a shell tool BODY offers to run --command, or
    None when it offers none."""
    names = offered_tools(body)
    if "exec" in names:
        js = ("const r = await tools.exec_command({cmd: %s, login: false});\n"
              "text(typeof r === 'string' ? r : JSON.stringify(r));\n"
              % json.dumps(ARGS.command))
        return {"type": "custom_tool_call", "id": next_id("ctc"), "status": "completed",
                "call_id": next_id("call"), "name": "exec", "input": js}
    if "exec_command" in names:
        name, args = "exec_command", {"cmd": ARGS.command, "login": False}
    elif "shell_command" in names:
        name, args = "shell_command", {"command": ARGS.command, "login": False}
    elif "shell" in names:
        name, args = "shell", {"command": ["sh", "-c", ARGS.command]}
    else:
        return None
    return {"type": "function_call", "id": next_id("fc"), "status": "completed",
            "call_id": next_id("call"), "name": name, "arguments": json.dumps(args)}


def plan_reply(body):
    """The output items the script gives for BODY."""
    outputs = [i for i in input_items(body) if i.get("type") in OUTPUT_TYPES]
    if not outputs:
        call = shell_call(body)
        if call:
            return [call]
    for o in outputs:
        log_line(ARGS.results, {"call_id": o.get("call_id"), "type": o.get("type"),
                                "output": o.get("output")})
    return [{"type": "message", "id": next_id("msg"), "role": "assistant",
             "status": "completed",
             "content": [{"type": "output_text", "text": "done", "annotations": []}]}]


def response_events(body):
    """The stream of events answering the turn BODY (none for a warm-up
    request, "generate": false)."""
    items = plan_reply(body) if body.get("generate", True) is not False else []
    rid = next_id("resp")

    def response(status, output):
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        return {"id": rid, "object": "response", "status": status,
                "model": body.get("model", "gpt-mock"), "output": output,
                "usage": usage if status == "completed" else None}

    ev = [{"type": "response.created", "response": response("in_progress", [])}]
    for i, item in enumerate(items):
        if item["type"] == "message":
            ev.append({"type": "response.output_item.added", "output_index": i,
                       "item": dict(item, status="in_progress", content=[])})
            ev.append({"type": "response.output_text.delta", "output_index": i,
                       "item_id": item["id"], "content_index": 0,
                       "delta": item["content"][0]["text"]})
        ev.append({"type": "response.output_item.done", "output_index": i, "item": item})
    ev.append({"type": "response.completed", "response": response("completed", items)})
    return ev


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):  # keep stderr quiet; the log file has it
        pass

    def record(self, body, method=None):
        record_keys(ARGS.keys, self.headers, SECRET_HEADERS)
        headers = {}
        for k, v in self.headers.items():
            k = k.lower()
            # a credential shows only its scheme (Bearer), never its value
            headers[k] = (v.split(" ")[0] + " <redacted>") if k in SECRET_HEADERS else v
        log_line(ARGS.log, {"method": method or self.command, "path": self.path,
                            "headers": headers, "body": body})

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self, path):
        self.send_json(404, {"error": {"type": "invalid_request_error", "code": "not_found",
                                       "message": "mock: no " + path}})

    def do_GET(self):
        self.record(None)
        path = self.path.split("?")[0]
        if path.endswith("/responses") and "websocket" in self.headers.get("Upgrade", "").lower():
            self.websocket()
        elif path.endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.not_found(path)

    def do_HEAD(self):
        self.record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")[:2000]}
        self.record(body)
        path = self.path.split("?")[0]
        if not path.endswith("/responses"):
            self.not_found(path)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("x-request-id", next_id("req"))
        self.end_headers()
        self.close_connection = True
        for e in response_events(body):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))).encode())
        self.wfile.flush()

    # ---- WebSocket (RFC 6455), no extensions -------------------------------

    def websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.send_header("x-request-id", next_id("req"))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        while True:
            msg = self.ws_read()
            if msg is None:
                return
            try:
                body = json.loads(msg)
            except ValueError:
                body = {"_raw": msg[:2000]}
            self.record(body, method="WS")
            if isinstance(body, dict) and body.get("type") == "response.create":
                for e in response_events(body):
                    self.ws_send(1, json.dumps(e).encode())

    def ws_read(self):
        """The next text message, or None once the peer closes."""
        parts = []
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return None
            fin, op = head[0] & 0x80, head[0] & 0x0F
            n = head[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if op == 8:  # close: answer it and stop
                self.ws_send(8, data[:2])
                return None
            if op == 9:  # ping
                self.ws_send(10, data)
            elif op in (0, 1, 2):
                parts.append(data)
                if fin:
                    return b"".join(parts).decode("utf-8", "replace")

    def ws_send(self, op, data):
        n = len(data)
        if n < 126:
            head = struct.pack(">BB", 0x80 | op, n)
        elif n < 65536:
            head = struct.pack(">BBH", 0x80 | op, 126, n)
        else:
            head = struct.pack(">BBQ", 0x80 | op, 127, n)
        try:
            self.wfile.write(head + data)
            self.wfile.flush()
        except OSError:
            pass


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--command", required=True, help="the shell command of the tool call")
    p.add_argument("--keys", help="append each request's credential headers to this file")
    ARGS = p.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
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
