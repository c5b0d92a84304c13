# t_publish.sh - published ports (--publish, `publish` in a profile): a
# server inside the sandbox reached from the host's loopback, whatever
# address it bound inside; only the published ports and only the host's
# loopback; each connection a `net` event (direction inbound) and counted in
# the summary; a host port in use stops the session before the command runs.
# shellcheck shell=bash

PUB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)


# A TCP port free on the host's loopback now.
pub_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pub_need: what the tests run on the host and inside.
pub_need() {
	have python3 || skip "python3 not installed"
	have curl || skip "curl not installed"
}

# pub_host_v6: the host has IPv6 loopback.
pub_host_v6() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null
}

# pub_get URL: curl it, retrying while the server inside starts (a port not
# yet listening inside is reset at once); sets GOT.
pub_get() {
	local i
	GOT=
	for ((i = 0; i < 100; i++)); do
		GOT=$(curl -fsS --max-time 5 "$1" 2>/dev/null) && return 0
		sleep 0.1
	done
	return 1
}

# The echo server run inside: each connection's bytes sent back upper-cased.
pub_echo_server() {
	cat >"$WS/echo.py" <<'PY'
import socket, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if ":" in host:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind((host, port))
s.listen()
def serve(c):
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d.upper())
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
}

# A server bound to 127.0.0.1 and one bound to ::1 inside (or 0.0.0.0
# where the sandbox has no IPv6), reached through two published ports with
# curl, at 127.0.0.1 and at ::1 on the host; each connection is a net event
# with the ports, and the summary counts them.
test_publish_http() {
	pub_need
	local p1 p2 token bind2=::1
	p1=$(pub_free_port) p2=$(pub_free_port)
	token=$(unique)
	printf '%s\n' "$token" >"$WS/token.txt"
	warden_bg "$T_TMP/run.out" --publish "$p1:8000" --publish "$p2:8001" -- sh -c "
		python3 -c 'import socket; socket.socket(socket.AF_INET6).bind((\"::1\", 0))' 2>/dev/null || b=0.0.0.0
		python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 & a=\$!
		python3 -m http.server 8001 --bind \${b:-::1} >/dev/null 2>&1 & c=\$!
		while [ ! -e done ]; do sleep 0.1; done; kill \$a \$c"
	pub_get "http://127.0.0.1:$p1/token.txt" || fail "127.0.0.1:$p1 (8000 inside, bound to 127.0.0.1): $(<"$T_TMP/run.out.err")"
	[[ $GOT == "$token" ]] || fail "127.0.0.1:$p1 answered '$(excerpt "$GOT")'"
	pub_get "http://127.0.0.1:$p2/token.txt" || fail "127.0.0.1:$p2 (8001 inside, bound to ::1 or 0.0.0.0)"
	[[ $GOT == "$token" ]] || fail "127.0.0.1:$p2 answered '$(excerpt "$GOT")'"
	local n=2
	if pub_host_v6; then
		pub_get "http://[::1]:$p1/token.txt" || fail "[::1]:$p1 on the host"
		[[ $GOT == "$token" ]] || fail "[::1]:$p1 answered '$(excerpt "$GOT")'"
		n=3
	else
		note "the host has no IPv6 loopback: [::1] not tried"
	fi
	touch "$WS/done"
	wait "$TPID"
	local rc=$? log
	((rc == 0)) || fail "warden exited $rc: $(excerpt "$(<"$T_TMP/run.out.err")")"
	log=$(latest_log)
	local got
	got=$(jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $p1 and .port == 8000 and .via == \"publish\" and .method == \"tcp\" and .bytes_out > 0 and .bytes_in > 0 and (.error | not))" "$log" | wc -l)
	((got == n - 1)) || fail "inbound events for $p1: $got, want $((n - 1)): $(excerpt "$(grep inbound "$log")")"
	got=$(jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $p2 and .port == 8001 and .address != null)" "$log" | wc -l)
	((got == 1)) || fail "inbound events for $p2: $got, want 1"
	grep -q "published port $p1 (port 8000 inside): [0-9]* connections from the host" "$T_TMP/run.out.err" ||
		fail "summary: $(excerpt "$(<"$T_TMP/run.out.err")")"
	# the events as the schema describes them (the tree's doc/, or the copy
	# beside integration/)
	local schema=$PUB_DIR/../../doc/schema/events-v1.json
	[[ -f $schema ]] || schema=$PUB_DIR/../doc/schema/events-v1.json
	if python3 -c 'import jsonschema' 2>/dev/null && [[ -f $schema ]]; then
		python3 "$PUB_DIR/schema_check.py" "$schema" "$log" >"$T_TMP/schema.out" 2>&1 ||
			fail "schema: $(excerpt "$(<"$T_TMP/schema.out")")"
	else
		note "python3-jsonschema or the schema missing: the events not validated"
	fi
}

# A long-lived connection, both ways in several rounds, to a server bound to
# :: inside (dual stack), through a port published by a profile line.
test_publish_long_lived() {
	pub_need
	local p
	p=$(pub_free_port)
	pub_echo_server
	printf 'publish %s:7000\n' "$p" >"$T_TMP/pub.profile"
	warden_bg "$T_TMP/run.out" --profile "$T_TMP/pub.profile" -- sh -c "
		python3 echo.py :: 7000 & a=\$!; while [ ! -e done ]; do sleep 0.1; done; kill \$a"
	cat >"$T_TMP/client.py" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
for attempt in range(100):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"ping")
        if c.recv(4) == b"PING":
            break
    except OSError:
        pass
    time.sleep(0.1)
else:
    sys.exit("the server inside never answered")
for i in range(6):
    msg = (b"round %d " % i) * (1000 * (i + 1))
    c.sendall(msg)
    got = b""
    while len(got) < len(msg):
        d = c.recv(65536)
        if not d:
            sys.exit("closed in round %d" % i)
        got += d
    if got != msg.upper():
        sys.exit("round %d: wrong bytes back" % i)
    time.sleep(0.3)
c.shutdown(socket.SHUT_WR)
if c.recv(10) != b"":
    sys.exit("no end after ours")
print("rounds ok")
PY
	local out
	out=$(python3 "$T_TMP/client.py" "$p" 2>&1)
	[[ $out == "rounds ok" ]] || fail "long-lived connection: $(excerpt "$out")"
	touch "$WS/done"
	wait "$TPID"
	jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $p and .duration_ms > 1500)" "$(latest_log)" | matches . ||
		fail "no inbound event of the long-lived connection"
	# exported to OCSF as Network Activity coming in, from the host's client
	local session
	session=$(basename "$(latest_log)" .jsonl)
	wardenc log export --format ocsf "$session"
	jq -c 'select(.class_uid == 4001 and .connection_info.direction_id == 1 and (.src_endpoint.name | test("^127[.]0[.]0[.]1:[0-9]+$")) and .dst_endpoint.port == 7000)' <<<"$OUT" | matches . ||
		fail "OCSF: no inbound Network Activity: $(excerpt "$(jq -c 'select(.class_uid == 4001) | .connection_info' <<<"$OUT")")"
}

# A host port in use: the session stops before the command runs, naming the
# port and the flag (or the profile line); the log has no exec of it, and
# begins with session.start and ends with session.end all the same.
test_publish_port_in_use() {
	pub_need
	local p marker
	p=$(pub_free_port)
	marker=$(unique)
	python3 -c "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', $p)); s.listen(); print('LISTENING', flush=True); time.sleep(30)" >"$T_TMP/busy.out" &
	bg_track $!
	wait_for "$T_TMP/busy.out" '^LISTENING' 5 || fatal "host listener did not start"
	wrun --publish "$p:8000" -- sh -c "echo $marker"
	assert_rc 125 "--publish of a port in use"
	assert_out_lacks "$marker" "the command ran"
	[[ $ERR == *"--publish $p:8000"*"127.0.0.1:$p is in use"* ]] || fail "error: $(excerpt "$ERR")"
	if grep -q "\"event\":\"exec\"" "$(latest_log)"; then
		fail "an exec was logged: $(excerpt "$(grep '"exec"' "$(latest_log)")")"
	fi
	# a whole record all the same: its start (the checkpoint, taken once
	# the session failed) and its end
	[[ $(head -n 1 "$(latest_log)") == *'"event":"session.start"'* ]] ||
		fail "the log does not begin with session.start: $(excerpt "$(head -c 300 "$(latest_log)")")"
	[[ $(tail -n 1 "$(latest_log)") == *'"event":"session.end"'*'"exit":125'* ]] ||
		fail "the log does not end with session.end, exit 125: $(excerpt "$(tail -c 300 "$(latest_log)")")"
	printf 'publish %s\n' "$p" >"$T_TMP/pub.profile"
	wrun --profile "$T_TMP/pub.profile" -- sh -c "echo $marker"
	assert_rc 125 "publish of a port in use"
	assert_out_lacks "$marker" "the command ran (profile)"
	[[ $ERR == *"publish $p ($T_TMP/pub.profile:1)"*"in use"* ]] || fail "error (profile): $(excerpt "$ERR")"
}

# Only what is published, only on the host's loopback: a port listening
# inside but not published is refused on the host; the published one
# listens on 127.0.0.1 and ::1 only; a published port nothing listens on
# inside resets the host's client at once, and its event says why.
test_publish_only_published() {
	pub_need
	have ss || skip "ss not installed"
	local p q
	p=$(pub_free_port) q=$(pub_free_port)
	warden_bg "$T_TMP/run.out" --publish "$p:9000" -- sh -c "
		python3 -m http.server $q --bind 127.0.0.1 >/dev/null 2>&1 & a=\$!
		while [ ! -e done ]; do sleep 0.1; done; kill \$a"
	wait_for_listen() { local i; for ((i = 0; i < 100; i++)); do ss -Hltn "sport = :$p" | matches . && return 0; sleep 0.05; done; return 1; }
	wait_for_listen || fail "nothing listens on the host's port $p"
	local addrs
	addrs=$(ss -Hltn "sport = :$p" | awk '{ print $4 }' | sort -u | tr '\n' ' ')
	[[ $addrs =~ ^(127\.0\.0\.1:$p\ |\[::1\]:$p\ )+$ ]] || fail "host listeners of $p: $addrs"
	sleep 1 # the server inside on $q
	local t0 t1 out
	out=$(curl -sS --max-time 5 "http://127.0.0.1:$q/" 2>&1) && fail "port $q (not published) reached from the host: $(excerpt "$out")"
	t0=$(date +%s%N)
	out=$(curl -sS --max-time 5 "http://127.0.0.1:$p/" 2>&1) && fail "a published port with nothing inside answered: $(excerpt "$out")"
	t1=$(date +%s%N)
	(((t1 - t0) / 1000000 < 2000)) || fail "the host's client waited $(((t1 - t0) / 1000000)) ms for nothing inside"
	touch "$WS/done"
	wait "$TPID"
	jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $p and (.error // \"\" | test(\"nothing listens on port 9000\")))" "$(latest_log)" | matches . ||
		fail "no inbound event saying nothing listens: $(excerpt "$(grep inbound "$(latest_log)")")"
	grep -q "published port $p (port 9000 inside): 1 connection from the host, 1 reached nothing inside" "$T_TMP/run.out.err" ||
		fail "summary: $(excerpt "$(<"$T_TMP/run.out.err")")"
}

# What is not a published port, and a host port given twice: errors (exit
# 125, warden's: a 2 would read as the command's own), the command never run; `policy show` lists what is
# published, and no agent profile publishes anything.
test_publish_bad_input() {
	local bad
	for bad in 0 70000 abc 1:2:3 8000: :8000 -1 3128; do
		wrun --publish "$bad" -- echo ran
		assert_rc 125 "--publish $bad"
		assert_out_lacks ran "--publish $bad"
		[[ $ERR == *"--publish '$bad'"* ]] || fail "--publish $bad: $(excerpt "$ERR")"
	done
	# docker's habit: -p is --profile here, and the error says so
	wrun -p 18000:8000 -- echo ran
	assert_rc 125 '-p PORT:PORT'
	assert_err_match '18000:8000: cannot open: No such file or directory \(-p is --profile; a port is published with --publish' \
		'-p PORT:PORT names --publish'
	wrun --publish 18000:8000 --publish 18000:9000 -- echo ran
	assert_rc 125 "the same host port twice"
	[[ $ERR == *"host port 18000 is published already"* ]] || fail "twice: $(excerpt "$ERR")"
	# past the limit: said, without an errno's words that mean nothing here
	local i many=()
	for ((i = 0; i < 17; i++)); do many+=(--publish "$((18100 + i)):$((5000 + i))"); done
	wrun "${many[@]}" -- echo ran
	assert_out_lacks ran 'seventeen published ports'
	assert_err_match 'at most 16 published ports$' 'the limit said plainly'
	# a privileged host port, unprivileged: the port and what to do instead
	if ! is_root && (($(cat /proc/sys/net/ipv4/ip_unprivileged_port_start) > 80)); then
		wrun --publish 80:3000 -- echo ran
		assert_rc 125 'a privileged host port'
		assert_err_match 'is a privileged port .*--publish 8080:3000' 'the hint'
	fi
	printf 'publish 70000\n' >"$T_TMP/bad.profile"
	wrun --profile "$T_TMP/bad.profile" -- echo ran
	assert_rc 125 "publish 70000"
	[[ $ERR == *"bad.profile:1:9: publish '70000'"* ]] || fail "profile: $(excerpt "$ERR")"
	printf 'publish 18000:8000\npublish 18000:8001\n' >"$T_TMP/twice.profile"
	wrun --profile "$T_TMP/twice.profile" -- echo ran
	assert_rc 125 "publish twice"
	[[ $ERR == *"twice.profile:2:9"*"host port 18000 is published already"* ]] || fail "profile twice: $(excerpt "$ERR")"
	# a port inside that a host loopback rule listens on (it leads to the
	# host: published, it would loop)
	wrun --publish 18000:8000 --allow-net 127.0.0.1:8000 -- echo ran
	assert_rc 125 "publish of a host loopback port"
	assert_out_lacks ran "publish of a host loopback port"
	[[ $ERR == *"--publish: publish 18000:8000: port 8000 inside is the host loopback port"* ]] ||
		fail "host loopback port: $(excerpt "$ERR")"
	printf 'publish 18000:8000\n' >"$T_TMP/ok.profile"
	wardenc policy show --profile "$T_TMP/ok.profile"
	[[ $(jq -c '.publish' <<<"$OUT") == '[{"host_port":18000,"port":8000,"origin":"'"$T_TMP"'/ok.profile:1"}]' ]] ||
		fail "policy show: $(jq -c '.publish' <<<"$OUT")"
	local agent
	for agent in claude codex; do
		wardenc policy show --agent "$agent"
		[[ $(jq -c '.publish' <<<"$OUT") == null ]] || fail "agent $agent publishes: $(jq -c .publish <<<"$OUT")"
	done
}

# A WebSocket through a published port: the upgrade, then messages both ways
# in rounds over one connection (a server and a client of a few lines each,
# RFC 6455 framing, no library).
test_publish_websocket() {
	pub_need
	local p
	p=$(pub_free_port)
	cat >"$WS/ws.py" <<'PY'
import base64, hashlib, socket, struct
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
def recv_exact(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 9100))
s.listen()
while True:
    c, _ = s.accept()
    head = b""
    while b"\r\n\r\n" not in head:
        head += c.recv(4096)
    key = [l.split(b":", 1)[1].strip() for l in head.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
    acc = base64.b64encode(hashlib.sha1(key + GUID).digest())
    c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + acc + b"\r\n\r\n")
    try:
        while True:
            b0, b1 = recv_exact(c, 2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", recv_exact(c, 2))[0]
            mask = recv_exact(c, 4)
            data = bytes(x ^ mask[i % 4] for i, x in enumerate(recv_exact(c, n)))
            if b0 & 0x0f == 8:
                c.sendall(b"\x88\x00")
                break
            out = data.upper()
            c.sendall(bytes([0x81, 126]) + struct.pack(">H", len(out)) + out if len(out) > 125 else bytes([0x81, len(out)]) + out)
    except EOFError:
        pass
    c.close()
PY
	warden_bg "$T_TMP/run.out" --publish "$p:9100" -- sh -c "
		python3 ws.py & a=\$!; while [ ! -e done ]; do sleep 0.1; done; kill \$a"
	cat >"$T_TMP/wsclient.py" <<'PY'
import base64, hashlib, os, socket, struct, sys, time
port = int(sys.argv[1])
for attempt in range(100):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16))
        c.sendall(b"GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            x = c.recv(4096)
            if not x:
                raise OSError("closed")
            head += x
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("no WebSocket server inside")
want = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
if not head.startswith(b"HTTP/1.1 101") or want not in head:
    sys.exit("bad upgrade: %r" % head[:200])
def send(op, data):
    mask = os.urandom(4)
    body = bytes(x ^ mask[i % 4] for i, x in enumerate(data))
    n = len(data)
    hdr = bytes([0x80 | op, 0x80 | 126]) + struct.pack(">H", n) if n > 125 else bytes([0x80 | op, 0x80 | n])
    c.sendall(hdr + mask + body)
def recv_exact(n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            sys.exit("closed early")
        b += x
    return b
for i in range(5):
    msg = (b"message %d " % i) * (10 * (i + 1))
    send(1, msg)
    b0, b1 = recv_exact(2)
    n = b1 & 0x7f
    if n == 126:
        n = struct.unpack(">H", recv_exact(2))[0]
    if recv_exact(n) != msg.upper():
        sys.exit("round %d: wrong message back" % i)
    time.sleep(0.2)
send(8, b"")
if recv_exact(2) != b"\x88\x00":
    sys.exit("no close frame back")
print("websocket ok")
PY
	local out
	out=$(python3 "$T_TMP/wsclient.py" "$p" 2>&1)
	[[ $out == "websocket ok" ]] || fail "WebSocket: $(excerpt "$out")"
	touch "$WS/done"
	wait "$TPID"
	jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $p and .port == 9100 and .duration_ms > 800 and (.error | not))" "$(latest_log)" | matches . ||
		fail "no inbound event of the WebSocket connection"
}

# The load of a test of a dev server: a server inside (one thread, select)
# that sends back each connection's bytes upper-cased; and a host client
# that opens N connections at once, waits a second, sends "ping" on each
# and waits up to 5 s for "PING": it prints "ok N refused N early N hung
# N" (early: refused within that first second, before it sent anything).
pub_load_scripts() {
	cat >"$WS/many.py" <<'PY'
import selectors, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4096)
s.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
while True:
    for k, _ in sel.select():
        if k.fileobj is s:
            try:
                c, _ = s.accept()
            except OSError:
                continue
            sel.register(c, selectors.EVENT_READ)
            continue
        try:
            d = k.fileobj.recv(65536)
        except OSError:
            d = b""
        if d:
            k.fileobj.sendall(d.upper())
        else:
            sel.unregister(k.fileobj)
            k.fileobj.close()
PY
	cat >"$T_TMP/load.py" <<'PY'
import resource, select, selectors, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
for attempt in range(100):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"x")
        if c.recv(1) == b"X":
            c.close()
            break
    except OSError:
        pass
    time.sleep(0.1)
else:
    sys.exit("the server inside never answered")
time.sleep(0.3)  # that connection over in warden too
socks = []
for i in range(n):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    socks.append(s)
time.sleep(1)
p = select.poll()
for s in socks:
    p.register(s, select.POLLIN)
early = len(p.poll(0))
ok = refused = 0
sel = selectors.DefaultSelector()
for s in socks:
    try:
        s.send(b"ping")
        sel.register(s, selectors.EVENT_READ)
    except OSError:
        refused += 1
deadline = time.time() + 5
while sel.get_map() and time.time() < deadline:
    for k, _ in sel.select(0.2):
        try:
            d = k.fileobj.recv(4)
        except OSError:
            d = b""
        sel.unregister(k.fileobj)
        if d == b"PING":
            ok += 1
        else:
            refused += 1
print("ok %d refused %d early %d hung %d" % (ok, refused, early, len(sel.get_map())))
PY
}

# pub_load N: the server inside on port 9200 published, N connections from
# the host at once; sets LOAD (the client's line) and P; warden has ended.
pub_load() {
	P=$(pub_free_port)
	warden_bg "$T_TMP/run.out" --publish "$P:9200" -- sh -c "
		python3 many.py 9200 & a=\$!; while [ ! -e done ]; do sleep 0.1; done; kill \$a"
	LOAD=$(python3 "$T_TMP/load.py" "$P" "$1" 2>&1)
	touch "$WS/done"
	wait "$TPID"
}

# A dev server's load test: 700 connections at once from the host, each
# sending after a second, all answered (with no cap below the descriptor
# limit's: none hangs, none refused), each a net event.
test_publish_many_connections() {
	pub_need
	# the cap is half of the open-file limit past 256, 6 descriptors each
	(($(ulimit -Hn) >= 256 + 12 * 700)) || skip "the hard limit of open files ($(ulimit -Hn)) is below 8656"
	pub_load_scripts
	pub_load 700
	[[ $LOAD == "ok 700 refused 0 early 0 hung 0" ]] || fail "700 connections at once: $(excerpt "$LOAD")"
	local got
	got=$(jq -c "select(.event == \"net\" and .direction == \"inbound\" and .host_port == $P and .bytes_in == 4 and .bytes_out == 4)" "$(latest_log)" | wc -l)
	((got == 700)) || fail "net events of the 700: $got"
	jq -c 'select(.event == "alert" and .rule == "publish.connection-cap")' "$(latest_log)" | matches . &&
		fail "a cap alert under a limit that covers 700"
	# (701 and more: the client's first tries, while the server inside
	# starts, reach nothing)
	grep -Eq "published port $P \(port 9200 inside\): (7[0-9][1-9]|7[1-9][0-9]) connections from the host(, [0-9]+ reached nothing inside)?$" "$T_TMP/run.out.err" ||
		fail "summary: $(excerpt "$(<"$T_TMP/run.out.err")")"
}

# Past the cap (64 connections under `ulimit -n 1024`: half of the limit past
# 256, 6 descriptors each), a connection is refused at once (reset before
# the client sends anything), none hangs; one alert says so, and the
# summary.
test_publish_connection_cap() {
	pub_need
	(ulimit -n 1024 2>/dev/null) || skip "cannot set ulimit -n 1024 here (hard limit $(ulimit -Hn))"
	pub_load_scripts
	# in a subshell: the limit holds for that warden (and the client) only
	(ulimit -n 1024 && pub_load 150 && printf '%s\n' "$P" "$LOAD" >"$T_TMP/load.out")
	{ read -r P && read -r LOAD; } <"$T_TMP/load.out" || fatal "no result from the load"
	local ok refused early hung
	read -r _ ok _ refused _ early _ hung <<<"$LOAD"
	[[ $hung == 0 ]] || fail "past the cap, connections hung: $(excerpt "$LOAD")"
	((ok >= 60 && ok <= 64 && ok + refused == 150 && early == refused)) ||
		fail "150 at once under a cap of 64: $(excerpt "$LOAD")"
	local log
	log=$(latest_log)
	[[ $(jq -c "select(.event == \"alert\" and .rule == \"publish.connection-cap\" and .port == $P)" "$log" | wc -l) == 1 ]] ||
		fail "not one alert: $(excerpt "$(grep connection-cap "$log")")"
	# (", N reached nothing inside": the client's first tries, while the
	# server inside starts)
	grep -Eq "published port $P \(port 9200 inside\): [0-9]+ connections from the host(, [0-9]+ reached nothing inside)?; connections past 64 at once were refused \(alert publish\.connection-cap\)$" "$T_TMP/run.out.err" ||
		fail "summary: $(excerpt "$(<"$T_TMP/run.out.err")")"
}

# A server started in the background (`nohup server &`) ends with the
# command that started it: with published ports, where the server is what
# the user came for, warden says so (it ended in silence); without, the
# agents' own helpers ending with them are nothing to say, nor when the
# session was stopped from outside.
test_publish_background_ended_said() {
	wrun --publish 18556:3000 -- sh -c 'sleep 100 & sleep 100 & echo started'
	assert_rc 0
	assert_out_has started
	assert_err_match 'the command ended and left 2 processes running, ended with it \(a server started in the background\?\)'
	wrun -- sh -c 'sleep 100 & echo started'
	assert_rc 0
	[[ $ERR != *'left 1 process'* ]] || fail "said without a published port: $(excerpt "$ERR")"
	# stopped from outside (`timeout`), the launcher ending before the
	# server it started (npx before vite): not a server in the background
	timeout -s TERM 3 "$WARDEN" run --publish 18556:3000 -- \
		sh -c '(trap "" TERM; sleep 100) & trap "exit 0" TERM; echo started; wait' \
		>"$T_TMP/stopped.out" 2>"$T_TMP/stopped.err"
	grep -qx started "$T_TMP/stopped.out" || fail "the command did not start: $(excerpt "$(<"$T_TMP/stopped.err")")"
	! grep -q 'left 1 process' "$T_TMP/stopped.err" ||
		fail "said of a session stopped from outside: $(excerpt "$(<"$T_TMP/stopped.err")")"
}
