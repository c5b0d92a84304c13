#!/usr/bin/env python3
"""mcp_client.py PORT [HOST] - inside the sandbox, for t_mcp.sh: one
keep-alive connection to the MCP server at 127.0.0.1:PORT (plain, on a host
loopback port) or at https://HOST:PORT (through the proxy's CONNECT); initialize, tools/list,
then tools/call echo, rm_all, ask_me; prints each answer's status and what
it said, and for a streamed answer each event with the time it arrived."""
import http.client
import json
import sys
import time

import os
import ssl
import urllib.parse

port = int(sys.argv[1])
if len(sys.argv) > 2:
    proxy = urllib.parse.urlsplit(os.environ["https_proxy"])
    c = http.client.HTTPSConnection(proxy.hostname, proxy.port, timeout=60,
                                    context=ssl.create_default_context())
    c.set_tunnel(sys.argv[2], port)
else:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
first_sock = None
n = 0


def call(method, params=None):
    global n, first_sock
    n += 1
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params or {}})
    c.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                     "Accept": "application/json, text/event-stream"})
    if first_sock is None:
        first_sock = c.sock
    same = "same-conn" if c.sock is first_sock else "new-conn"
    r = c.getresponse()
    label = params["name"] if params and "name" in params else method
    if r.getheader("Content-Type", "").startswith("text/event-stream"):
        while True:
            line = r.readline()
            if not line:
                break
            line = line.decode().strip()
            if line.startswith("data: "):
                d = json.loads(line[6:])
                sent = d.get("params", d.get("result", {})).get("sent")
                print("%s event got=%.6f sent=%.6f %s" % (label, time.time(), sent, line[6:]), flush=True)
        print("%s %d %s stream-end" % (label, r.status, same), flush=True)
    else:
        print("%s %d %s %s" % (label, r.status, same, r.read().decode()), flush=True)


call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
call("tools/list")
call("tools/call", {"name": "echo", "arguments": {}})
call("tools/call", {"name": "rm_all", "arguments": {}})
call("tools/call", {"name": "ask_me", "arguments": {}})
if len(sys.argv) <= 2:
    print("again:", end=" ", flush=True)
    call("tools/call", {"name": "ask_me", "arguments": {}})
