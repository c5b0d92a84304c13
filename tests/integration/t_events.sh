# t_events.sh - the audit trail from the kernel side: every exec with its
# argv and the SHA-256 of the file, every syscall the seccomp policy refuses,
# every connect that tries to leave the sandbox, all in the hash-chained log.
# (check_log, the chain check, lives in t_audit.sh.)
# shellcheck shell=bash


test_events_exec_refusals_connect() {
	git init -q . 2>/dev/null || mkdir -p .git/hooks
	mkdir -p .git/hooks
	wsh 'echo abc | tr a-c x-z | cat >/dev/null
	     ./wprobe ptrace-child; ./wprobe mount; ./wprobe tiocsti-high
	     echo x > .git/hooks/x 2>/dev/null
	     ./wprobe connect 192.0.2.1 80; true' --profile "$(no_detect_actions)"
	assert_rc 0 'the script inside'
	local f
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	check_log "$f" 0
	# an exec for each process, with its argv
	grep -q '"event":"exec".*"argv":\["tr","a-c","x-z"\]' "$f" || fail 'no exec event with the argv of tr'
	grep -q '"event":"exec".*"argv":\["cat"\]' "$f" || fail 'no exec event for cat'
	grep -q '"event":"exec".*"argv":\["./wprobe","mount"\]' "$f" || fail 'no exec event for ./wprobe mount'
	# the hash is that of the file executed
	local want
	want=$(sha256sum "$WS/wprobe" | cut -d' ' -f1)
	grep -q "\"event\":\"exec\".*\"path\":\"./wprobe\".*\"sha256\":\"$want\"" "$f" ||
		fail "exec of ./wprobe does not carry its sha256 $want"
	want=$(sha256sum "$(readlink -f /usr/bin/tr)" | cut -d' ' -f1)
	grep -q "\"argv\":\\[\"tr\".*\"sha256\":\"$want\"" "$f" || fail 'exec of tr does not carry its sha256'
	# a syscall event for each refusal, answered EPERM
	local name
	for name in ptrace mount ioctl; do
		grep -q "\"event\":\"syscall\".*\"name\":\"$name\".*\"decision\":\"deny\",\"errno\":\"EPERM\"" "$f" ||
			fail "no syscall event for the refused $name"
	done
	# the connect that tried to leave
	grep -q '"event":"net".*"address":"192.0.2.1","port":80,"decision":"deny"' "$f" ||
		fail 'no net event for the refused connect to 192.0.2.1:80'
	# session.end counts them
	grep -q '"event":"session.end".*"counts":{[^}]*"exec":[0-9]' "$f" || fail 'session.end lacks exec counts'
}

test_events_path_search_misses() {
	# A PATH search that misses (sh trying each directory) is not an exec:
	# only the file that ran is recorded.
	wrun --env PATH=/nonexistent/a:/nonexistent/b:/usr/bin:/bin -- true
	assert_rc 0
	local f n
	f=$(latest_log)
	n=$(grep -c '"event":"exec"' "$f")
	[[ $n == 1 ]] || fail "expected exactly 1 exec event, found $n"
	grep -q '"event":"exec".*"resolved":"/usr/bin/true"' "$f" || fail 'the exec of true is not resolved to /usr/bin/true'
}

# A path, an argument and a working directory that are not UTF-8: the exec
# is recorded all the same, its bytes kept (escaped, the fields listed in
# "escaped"), and the log's chain holds.
test_events_non_utf8() {
	wsh 'd=$(printf "d\377"); mkdir "$d" && cd "$d" && cp /bin/true "$(printf "t\376")" &&
	     "./$(printf "t\376")" "$(printf "a\375b\\\\c")" plain'
	assert_rc 0
	local f ev
	f=$(latest_log)
	check_log "$f" 0
	ev=$(grep '"event":"exec"' "$f" | grep -F '"plain"') || fail "no exec event for the non-UTF-8 program: $(excerpt "$(grep '"event":"exec"' "$f")")"
	grep -qF '"path":"./t\\xFE"' <<<"$ev" || fail "the path's bytes are not kept: $ev"
	grep -qF '"argv":["./t\\xFE","a\\xFDb\\\\c","plain"]' <<<"$ev" || fail "the argv's bytes are not kept: $ev"
	grep -qE '"cwd":"[^"]*/d\\\\xFF"' <<<"$ev" || fail "the cwd's bytes are not kept: $ev"
	grep -qE '"escaped":\["cwd","path","argv"' <<<"$ev" || fail "the escaped fields are not listed: $ev"
	grep -q '"sha256":"[0-9a-f]\{64\}"' <<<"$ev" || fail "no hash: $ev"
}

# Exec of a FIFO: the supervisor does not block on it (the session used to
# hang, SIGTERM ignored, no session.end); the attempt is recorded.
# An execute-only file (mode 0111) runs and is recorded too.
test_events_exec_fifo_and_execute_only() {
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30
	wsh 'mkfifo f && chmod 755 f; ./f; echo "fifo=$?"; cp /bin/true t && chmod 0111 t && ./t && echo xo-ran'
	assert_rc 0 'the session ended'
	assert_out_match '^fifo=(126|2)$' 'the FIFO did not run'
	assert_out_line xo-ran 'the execute-only file ran'
	local f
	f=$(latest_log)
	grep -q '"event":"exec".*"path":"./f"' "$f" || fail "no exec event for the FIFO: $(excerpt "$(grep '"event":"exec"' "$f")")"
	grep -q '"event":"exec".*"path":"./t"' "$f" || fail "no exec event for the execute-only file"
	grep -q '"event":"session.end"' "$f" || fail 'no session.end'
}

# The same program through the spellings of /proc that name the process's
# own entries, and a memfd run by path and by execveat: each an exec event
# carrying the hash of what ran.
test_events_exec_proc_spellings() {
	local want f p
	want=$(sha256sum "$(readlink -f /bin/true)" | cut -d' ' -f1)
	wsh 'cp /bin/true mytrue && exec 3<mytrue && /proc/self/fd/3 && /dev/fd/3 &&
	     /proc/self/root'"$PWD"'/mytrue && /proc/thread-self/fd/3 && echo spelled
	     if [ -x /usr/bin/python3 ]; then
	       /usr/bin/python3 -c "import os,sys; fd=os.memfd_create(\"x\", 0); os.write(fd, open(\"/bin/true\",\"rb\").read()); os.execv(\"/proc/self/fd/%d\" % fd, [\"memfd-path\"])" && echo memfd-path-ran
	       /usr/bin/python3 -c "import os; fd=os.memfd_create(\"x\", 0); os.write(fd, open(\"/bin/true\",\"rb\").read()); os.execve(fd, [\"memfd-at\"], {})" && echo memfd-at-ran
	     fi'
	assert_rc 0
	assert_out_line spelled
	f=$(latest_log)
	for p in /proc/self/fd/3 /dev/fd/3 "/proc/self/root$PWD/mytrue" /proc/thread-self/fd/3; do
		grep '"event":"exec"' "$f" | grep -F "\"path\":\"$p\"" | grep -F "\"sha256\":\"$want\"" >/dev/null ||
			fail "no exec event with the program's hash for $p: $(excerpt "$(grep -F "\"path\":\"$p\"" "$f")")"
	done
	if [[ -x /usr/bin/python3 ]]; then
		assert_out_line memfd-path-ran
		assert_out_line memfd-at-ran
		for p in memfd-path memfd-at; do
			grep '"event":"exec"' "$f" | grep -F "\"argv\":[\"$p\"]" | grep -F "\"sha256\":\"$want\"" >/dev/null ||
				fail "no exec event with the program's hash for the $p: $(excerpt "$(grep -F "\"$p\"" "$f")")"
		done
	fi
}

test_events_script_interpreter() {
	printf '#!/bin/sh\necho hi\n' >script.sh
	chmod +x script.sh
	wrun -- ./script.sh
	assert_out_eq hi
	grep -q '"event":"exec".*"path":"./script.sh".*"interpreter":"/bin/sh"' "$(latest_log)" ||
		fail 'the exec of a script does not record its interpreter'
}

test_events_files_level() {
	# Off with `audit minimal`: no file events.
	printf 'audit minimal\n' >"$T_TMP/minimal.profile"
	wsh 'echo x > a.txt' --profile "$T_TMP/minimal.profile"
	assert_rc 0 'a session with audit minimal'
	! grep -q '"event":"file"' "$(latest_log)" || fail 'file events recorded with `audit minimal`'
	# With `audit files` (and by default, t_files.sh): write-intent opens,
	# renames, links, symlinks and unlinks, with paths made absolute inside
	# the sandbox.
	printf 'audit files\n' >"$T_TMP/files.profile"
	wsh 'echo y > b.txt; mv b.txt c.txt; ln c.txt d.txt; ln -s c.txt e.txt; rm d.txt e.txt; cat c.txt >/dev/null' \
		--profile "$T_TMP/files.profile"
	assert_rc 0
	local f
	f=$(latest_log)
	grep -q "\"event\":\"file\".*\"op\":\"open\".*\"path\":\"$WS/b.txt\"" "$f" || fail 'no open event for b.txt'
	grep -q "\"op\":\"rename\".*\"path\":\"$WS/b.txt\",\"path2\":\"$WS/c.txt\"" "$f" || fail 'no rename event'
	grep -q "\"op\":\"link\".*\"path2\":\"$WS/d.txt\"" "$f" || fail 'no link event'
	grep -q "\"op\":\"symlink\".*\"path\":\"$WS/e.txt\"" "$f" || fail 'no symlink event'
	grep -q "\"op\":\"unlink\".*\"path\":\"$WS/e.txt\"" "$f" || fail 'no unlink event'
	# a read-only open is not a write intent
	! grep -q "\"op\":\"open\".*\"path\":\"$WS/c.txt\"" "$f" || fail 'a read-only open was recorded'
	check_log "$f" 0
}

# syslog_listen MODE OUT: a syslog daemon of the test's on /dev/log (as
# root, when none holds it): MODE read writes each message to OUT until
# session.end's (or 10 s of silence); MODE stall binds and never reads
# (a stalled rsyslog) until OUT.go exists; MODE stream the same on a
# stream socket (an old syslog-ng's unix-stream). Sets LPID.
syslog_listen() {
	is_root || skip 'needs root to listen on /dev/log'
	[[ ! -e /dev/log ]] || skip '/dev/log belongs to a running syslog daemon'
	[[ -x /usr/bin/python3 ]] || skip 'no /usr/bin/python3 for the listener'
	/usr/bin/python3 - "$1" "$2" <<'PY' &
import os, socket, sys, time
mode, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX,
                  socket.SOCK_STREAM if mode == 'stream' else socket.SOCK_DGRAM)
s.bind('/dev/log')
if mode == 'stream':
    s.listen()
if mode in ('stall', 'stream'):
    deadline = time.time() + 120
    while not os.path.exists(out + '.go') and time.time() < deadline:
        time.sleep(0.05)
else:
    s.settimeout(10)
    with open(out, 'wb') as f:
        try:
            while True:
                msg = s.recv(65536)
                f.write(msg + b'\n'); f.flush()
                if b'session.end' in msg:
                    break
        except socket.timeout:
            pass
os.unlink('/dev/log')
PY
	LPID=$!
	bg_track "$LPID"
	local i=0
	while [[ ! -S /dev/log ]] && ((i++ < 100)); do sleep 0.05; done
	[[ -S /dev/log ]] || { kill "$LPID"; fatal 'the /dev/log listener did not start'; }
}

test_events_syslog() {
	# --log syslog: every event also reaches syslog, facility authpriv
	# (10), level info (6) but for alerts; counted in session.end
	local LPID f
	syslog_listen read "$T_TMP/syslog.out"
	wrun --log syslog -- true
	assert_rc 0
	wait "$LPID" 2>/dev/null
	[[ ! -e /dev/log ]] || rm -f /dev/log
	grep -q '^<86>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]\{8\} warden\[[0-9]*\]: {"v":1.*"event":"session.start"' \
		"$T_TMP/syslog.out" ||
		fail "session.start did not reach syslog: $(excerpt "$(cat "$T_TMP/syslog.out" 2>/dev/null)")"
	grep -q '"event":"session.end"' "$T_TMP/syslog.out" || fail 'session.end did not reach syslog'
	f=$(latest_log)
	matches -E '"event":"session.end".*"syslog":\{"sent":[1-9][0-9]*,"dropped":0\}' "$f" ||
		fail "session.end does not count what syslog was sent: $(tail -c 400 "$f")"
	wrun --log nowhere -- true
	assert_rc 125 '--log with an unknown target'
}

# A syslog daemon that stops reading (rsyslog stuck on a full disk): the
# session goes on and ends, what the daemon could not take said once and
# counted in session.end; the log file has every event. Before, syslog(3)'s
# send waited on the full socket, and with it warden's loop: the command's
# next exec was never answered and SIGTERM was not acted on.
test_events_syslog_stalled() {
	local LPID f n
	# more execs than the daemon's queue and warden's (256) hold together
	n=$(($(cat /proc/sys/net/unix/max_dgram_qlen 2>/dev/null || echo 512) + 300))
	syslog_listen stall "$T_TMP/syslog.out"
	WARDEN_TIMEOUT=90 wrun --log syslog -- sh -c "i=0; while [ \$i -lt $n ]; do /bin/true; i=\$((i + 1)); done; echo done"
	touch "$T_TMP/syslog.out.go"
	wait "$LPID" 2>/dev/null
	[[ ! -e /dev/log ]] || rm -f /dev/log
	assert_rc 0 'a session with a stalled syslog daemon'
	assert_out_line done 'the command ran to its end'
	assert_err_match "syslog: the entry of event [0-9]+ \\([a-z.]+\\) was not sent to /dev/log: syslog's queue stayed full"
	f=$(latest_log)
	matches -E '"event":"session.end".*"syslog":\{"sent":[0-9]+,"dropped":[1-9][0-9]*\}' "$f" ||
		fail "session.end does not count the lost messages: $(tail -c 400 "$f")"
	[[ $(grep -c '"event":"exec"' "$f") -ge $n ]] || fail 'the log does not have every exec'
	check_log "$f" 0
}

# A syslog daemon that takes a stream on /dev/log, not the datagrams
# warden sends: refused, saying so (not "nothing listens").
test_events_syslog_stream_refused() {
	local LPID
	syslog_listen stream "$T_TMP/syslog.out"
	wrun --log syslog -- true
	touch "$T_TMP/syslog.out.go"
	wait "$LPID" 2>/dev/null
	[[ ! -e /dev/log ]] || rm -f /dev/log
	assert_rc 125 '--log syslog to a stream socket'
	assert_err_match "--log syslog: the syslog socket /dev/log takes a stream, not datagrams .*unix-dgram"
}

# Nothing listening on /dev/log: `--log syslog` is refused before the
# session starts (as `--log journald` is), never run with its copy lost.
test_events_syslog_refused() {
	[[ ! -e /dev/log ]] || skip '/dev/log belongs to a running syslog daemon'
	wrun --log syslog -- true
	assert_rc 125 '--log syslog without a syslog daemon'
	assert_err_match "--log syslog: no syslog socket at /dev/log \\(is a syslog daemon running\\?"
	wardenc doctor
	matches -E "^WARN +syslog socket +no syslog socket at /dev/log .*--log syslog. is refused here" \
		<<<"$OUT" || fail "doctor's syslog line: $(excerpt "$(grep syslog <<<"$OUT")")"
}

test_events_session_start_kernel() {
	# session.start records the kernel features the session ran with: the
	# keys of before (release, landlock_abi, seccomp, pty) and the rest of
	# the probe (seccomp_notify, the sysctls, the LSMs, where cgroup v2 is).
	wrun -- true
	assert_rc 0
	local f first kernel
	f=$(latest_log)
	[[ -n $f ]] || fatal 'no session log'
	first=$(head -n 1 "$f")
	kernel=$(grep -oE '"kernel":\{.*\}' <<<"$first")
	[[ -n $kernel ]] || fatal "session.start has no kernel object: $(excerpt "$first")"
	grep -qF "\"release\":\"$(uname -r)\"" <<<"$kernel" || fail "kernel.release is not $(uname -r): $(excerpt "$kernel")"
	grep -qE '"landlock_abi":([2-9]|[1-9][0-9])[,}]' <<<"$kernel" || fail "no landlock_abi of 2 or more: $(excerpt "$kernel")"
	for k in '"seccomp":true' '"seccomp_notify":true' '"pty":false' '"user.max_user_namespaces":' \
		'"dev.tty.legacy_tiocsti":' '"lsms":[' '"lsm_source":"' '"cgroup2":'; do
		grep -qF "$k" <<<"$kernel" || fail "kernel object lacks $k: $(excerpt "$kernel")"
	done
	if have findmnt; then
		local cg
		cg=$(grep -oE '"cgroup2":("[^"]*"|null)' <<<"$kernel")
		if [[ $cg == '"cgroup2":null' ]]; then
			[[ -z $(findmnt -rn -t cgroup2 -o TARGET) ]] || fail "cgroup2 is null, findmnt sees one"
		else
			cg=${cg#\"cgroup2\":\"} cg=${cg%\"}
			findmnt -rn -t cgroup2 -o TARGET | grep -xF "$cg" >/dev/null || fail "cgroup2 $cg is not a cgroup2 mount"
		fi
	fi
}

# The loader given a program (`ld.so ./copy` maps the file, never execs it):
# the program is recorded as what runs, with its hash; a script's
# interpreter is hashed too.
test_events_loader_and_interpreter() {
	local ld want shwant f
	ld=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1)
	[[ -n $ld ]] || skip 'no known dynamic loader here'
	want=$(sha256sum "$(readlink -f /bin/true)" | cut -d' ' -f1)
	shwant=$(sha256sum "$(readlink -f /bin/sh)" | cut -d' ' -f1)
	printf '#!/bin/sh\ntrue\n' >s.sh && chmod +x s.sh
	wsh 'cp /bin/true copy && '"$ld"' ./copy && '"$ld"' --argv0 renamed --library-path /nowhere ./copy && ./s.sh && echo loaded'
	assert_rc 0
	assert_out_line loaded
	f=$(latest_log)
	[[ $(grep '"event":"exec"' "$f" | grep -F '"program":"./copy"' | grep -cF "\"program_sha256\":\"$want\"") == 2 ]] ||
		fail "the loader's program not recorded with its hash (twice): $(excerpt "$(grep -F 'ld-linux' "$f")")"
	grep '"event":"exec"' "$f" | grep -F '"path":"./s.sh"' | grep -F "\"interpreter_sha256\":\"$shwant\"" >/dev/null ||
		fail "the script's interpreter not hashed: $(excerpt "$(grep -F 's.sh' "$f")")"
}
