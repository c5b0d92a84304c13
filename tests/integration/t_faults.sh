# t_faults.sh - the exec record never fails open: an agent that opens
# connections to its own proxy by the thousand (under `ulimit -Hn 1024` and
# 4096) cannot push the supervisor out of descriptors (the proxy stops
# accepting at a cap, an exec that cannot be inspected is refused), and a
# log that cannot be written (the log directory removed, a full disk) stops
# the sandbox at once, tells the user, and exits 125. A seccomp listener
# warden cannot receive from (libseccomp's probes refused, a receive that
# fails) stops the session too, never a spin on a notification left
# pending while the command waits on it for ever. Sandbox init's move of
# itself into its cgroups refused: warden moves it, and the limits hold.
# The network namespace's maker that ends without a word to init: the
# session stops, never a wait. The workspace removed from the host
# mid-session: the session ends as its command did, and says so once.
# shellcheck shell=bash


# fd_flood LIMIT: the attack under `ulimit -Hn LIMIT`.
fd_flood() {
	local limit=$1
	[[ -x /usr/bin/python3 ]] || skip "python3 not installed (the agent floods the proxy with it)"
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=90
	cat >flood.py <<'PY'
import os, socket, subprocess, sys, time
limit = int(sys.argv[1])
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        held = []
        try:
            for i in range(limit - 50):
                s = socket.socket()
                s.settimeout(2)
                try:
                    s.connect(("127.0.0.1", 3128))
                except OSError:
                    break
                held.append(s)
        except OSError:
            pass
        print("held", len(held), flush=True)
        time.sleep(6)
        os._exit(0)
    kids.append(pid)
time.sleep(3)
ran = 0
for i in range(4):
    if subprocess.call(["/bin/true"]) == 0:
        ran += 1
print("ran", ran, flush=True)
for pid in kids:
    os.waitpid(pid, 0)
PY
	(ulimit -n "$limit" 2>/dev/null) || skip "cannot set ulimit -n $limit here (hard limit $(ulimit -Hn))"
	# in a subshell: the limit holds for warden only
	(ulimit -n "$limit" && wrun -- /usr/bin/python3 flood.py "$limit"; echo "RC=$RC" >"$T_TMP/flood.rc"; printf "%s" "$OUT" >"$T_TMP/flood.out"; printf "%s" "$ERR" >"$T_TMP/flood.err")
	RC=$(sed -n "s/^RC=//p" "$T_TMP/flood.rc") OUT=$(<"$T_TMP/flood.out") ERR=$(<"$T_TMP/flood.err")
	assert_rc 0 "the session under ulimit -Hn $limit"
	local f ran logged
	ran=$(sed -n 's/^ran //p' <<<"$OUT")
	[[ -n $ran ]] || fail "the agent did not report: $(excerpt "$OUT")"
	f=$(latest_log)
	logged=$(grep '"event":"exec"' "$f" | grep -c '"argv":\["/bin/true"\].*"decision":"allow"')
	((ran <= logged)) || fail "under ulimit -Hn $limit: $ran execs of true ran, $logged allowed on the record"
	note "ulimit -Hn $limit: $(grep -c '^held' <<<"$OUT") flooders held $(awk '/^held/ {s += $2} END {print s}' <<<"$OUT") connections; true ran $ran times, $logged on the record"
	grep -q '"event":"session.end"' "$f" || fail 'no session.end'
}

# wsh_ulimit 'ULIMIT ARGS' SCRIPT [OPTIONS]: wsh under those limits, set in a
# subshell (they hold for that warden only); RC, OUT and ERR as wsh sets them.
wsh_ulimit() {
	local lim=$1
	shift
	# shellcheck disable=SC2086 # the limit's words, split
	(ulimit $lim && wsh "$@"; echo "$RC" >"$T_TMP/rc")
	RC=$(<"$T_TMP/rc") OUT=$(<"$T_TMP/.out") ERR=$(<"$T_TMP/.err")
}

# A shell's soft limit of open files (`ulimit -Sn`) too low for a session
# once failed it midway (EMFILE at the checkpoint, init's message, the
# proxy; an exec denied for want of a descriptor). warden raises its own
# to the hard limit and gives the command the user's back; a hard limit
# below what a session needs is refused before anything starts, naming
# what to change.
test_fault_nofile_low() {
	local hard
	hard=$(ulimit -Hn)
	[[ $hard == unlimited || $hard -ge 512 ]] || skip "the hard limit of open files is $hard here"
	wsh_ulimit '-Sn 20' 'ulimit -Sn; ulimit -Hn; echo ran'
	assert_rc 0 'a session under ulimit -Sn 20'
	assert_out_line 20 'the command got the user'"'"'s soft limit back'
	assert_out_line "$hard" 'the hard limit unchanged'
	assert_out_line ran
	wsh_ulimit '-n 64' 'echo ran'
	assert_rc 125 'a hard limit of 64'
	assert_out_lacks ran 'the command ran'
	assert_err_match 'the hard limit of open files is 64 here .*needs at least 256: raise it where it is set'
	assert_err_match 'LimitNOFILE=.*--ulimit nofile=256'
}

# The user's limit of processes (`ulimit -u`, which counts every process and
# thread of the user) reached at each of warden's own clones in turn: each
# run either runs the command or stops before it with exit 125, and a
# process warden could not make is said with the limit and where to raise
# it, not as a namespace refused or a bare EAGAIN. Root is not held to
# RLIMIT_NPROC: as the unprivileged user only.
test_fault_nproc_low() {
	is_root && skip 'RLIMIT_NPROC does not hold root'
	local extra n said=0 rc
	for extra in 0 1 2 3 4 5 6 7 8; do
		n=$(($(ps -L -u "$(id -u)" --no-headers | wc -l) + extra))
		wsh_ulimit "-u $n" 'echo ran'
		rc=$RC
		if [[ $ERR == *"a limit of processes is reached: your user's (\`ulimit -u\`, $n here"* ]]; then
			said=$((said + 1))
		elif [[ -n $ERR ]]; then
			fail "ulimit -u $n: a message without the limit (exit $rc): $(excerpt "$ERR")"
		fi
		case $rc in
		0) [[ $OUT == ran ]] || fail "ulimit -u $n: exit 0 and no output" ;;
		125) [[ $OUT != *ran* ]] || fail "ulimit -u $n: the command ran and warden failed" ;;
		*) fail "ulimit -u $n: exit $rc: $(excerpt "$ERR")" ;;
		esac
		[[ $rc == 0 && -z $ERR ]] && break
	done
	((said > 0)) || fail 'no run met the limit of processes'
}

# The user's limit of file size (`ulimit -f`): the kernel's SIGXFSZ once
# killed warden itself when its log or store went past it (no session.end,
# the workspace's placeholders left). Now warden's writes fail with EFBIG,
# said with the limit to raise; the command still gets the signal's
# default (a write past the limit kills it, as outside warden).
test_fault_fsize_low() {
	local f
	# the checkpoint, which copies the workspace's files, leaves the
	# test's own large helper out
	printf 'checkpoint exclude wprobe\n' >"$T_TMP/p"
	wsh_ulimit '-f 100' 'head -c 200000 /dev/zero >z; echo "head=$?"' --profile "$T_TMP/p"
	assert_rc 0 'a session under ulimit -f 100'
	assert_out_line 'head=153' 'the command killed by SIGXFSZ (128+25) as outside warden'
	[[ $(stat -c %s z) == 102400 ]] || fail "z is $(stat -c %s z) bytes, not the limit's 102400"
	f=$(latest_log)
	grep -q '"event":"session.end"' "$f" || fail "no session.end: $(excerpt "$(tail -n 3 "$f")")"
	rm z
	wsh_ulimit '-f 1' 'echo ran' --profile "$T_TMP/p"
	assert_rc 125 'a log that cannot grow past 1 KB'
	assert_out_lacks ran 'the command ran without a log'
	assert_err_match 'the file reached the largest size allowed \(ulimit -f'
	# the log reaching the limit during the session: the sandbox stopped,
	# said once in full, and a last log.failed line that fits under the
	# limit: the chain verifies (it ended cut short, a broken chain that
	# log export refused)
	wsh_ulimit '-f 20' 'for i in $(seq 300); do /bin/true; done; echo finished' --profile "$T_TMP/p"
	assert_rc 125 'a log that reaches ulimit -f during the session'
	assert_out_lacks finished 'the command went on without a log'
	(($(grep -c 'the file reached the largest size allowed' <<<"$ERR") == 1)) ||
		fail "the cause not said once: $(excerpt "$ERR")"
	f=$(latest_log)
	tail -n 1 "$f" | matches -F '"event":"log.failed"' || fail "the last line is no log.failed: $(excerpt "$(tail -c 300 "$f")")"
	wardenc log verify
	assert_rc 0 'the log of a session stopped by ulimit -f verifies'
	assert_err_match "log stopped where warden could no longer write it" 'verify says the log failed, not "no session.end (yet)"'
	# and the checkpoint's copy of a file larger than the limit
	head -c 200000 /dev/zero >big
	wsh_ulimit '-f 100' 'echo ran'
	assert_rc 125 'a workspace file larger than ulimit -f'
	assert_out_lacks ran 'the command ran without a checkpoint'
	assert_err_match 'File too large; your limit of a file.s size \(`ulimit -f`\)'
}

# A stack limit (`ulimit -Ss 80`) under what warden needs crashed it
# (SIGSEGV in its checkpoint); now it raises its own and gives the command
# the user's; a hard limit that low is refused, naming what to change.
test_fault_stack_low() {
	local hard
	hard=$(ulimit -Hs)
	[[ $hard == unlimited || $hard -ge 8192 ]] || skip "the hard limit of the stack is $hard KiB here"
	wsh_ulimit '-Ss 80' 'ulimit -s; echo ran'
	assert_rc 0 'a session under ulimit -Ss 80'
	assert_out_line 80 'the command got the user'"'"'s stack limit back'
	assert_out_line ran
	wsh_ulimit '-s 512' 'echo ran'
	assert_rc 125 'a hard stack limit of 512 KiB'
	assert_out_lacks ran 'the command ran'
	assert_err_match 'the limit of the stack is 512 KiB here .*warden needs 1024 KiB: raise it'
}

test_fault_fd_flood_1024() { fd_flood 1024; }
test_fault_fd_flood_4096() { fd_flood 4096; }

# The log directory removed while the agent runs execs: the sandbox stops
# at once, the user is told (the log named, and why), exit status 125.
test_fault_log_dir_removed() {
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60
	warden_bg "$T_TMP/lr.out" -- sh -c 'i=0; while [ $i -lt 3000 ]; do /bin/true; i=$((i+1)); if [ $i = 20 ]; then echo twenty; fi; done; echo finished'
	wait_for "$T_TMP/lr.out" '^twenty' 30 || fatal "the loop did not start: $(<"$T_TMP/lr.out.err")"
	rm -rf "$HOME/.local/state/warden"
	wait "$TPID"
	RC=$?
	OUT=$(<"$T_TMP/lr.out") ERR=$(<"$T_TMP/lr.out.err")
	assert_rc 125 'the log removed'
	assert_out_lacks finished 'the loop went on without a log'
	[[ $ERR == *"audit log"* && $ERR == *"stopping the sandbox"* ]] ||
		fail "the user was not told: $(excerpt "$ERR")"
	# what failed, named: the log's path, its directory removed, what to
	# keep; not a bare errno
	[[ $ERR == *"the audit log $HOME/.local/state/warden/"*".jsonl was removed from its directory"* &&
		$ERR == *"XDG_STATE_HOME"* ]] || fail "the message does not name the log and the cause: $(excerpt "$ERR")"
	[[ $ERR != *"Input/output error"* ]] || fail "the message ends in a bare errno: $(excerpt "$ERR")"
}

# warden's state directory is a file: nothing runs, and the message names
# the variable the user can change, not only the errno.
test_fault_state_dir_is_a_file() {
	: >"$T_TMP/state-file"
	XDG_STATE_HOME=$T_TMP/state-file wsh 'echo ran'
	assert_rc 125 'no place for the log'
	assert_out_lacks ran 'the command ran without a log'
	[[ $ERR == *"$T_TMP/state-file/warden"* && $ERR == *XDG_STATE_HOME* ]] ||
		fail "the message does not name the directory and XDG_STATE_HOME: $(excerpt "$ERR")"
}

# The workspace removed from the host while the session runs: the session
# ends as its command did, the user is told once, in words (not a walk's
# bare ENOENT, not a crash, not a checkpoint `warden undo` would need
# --force for), and session.end records why no checkpoint was taken.
# Started from a directory removed after the shell entered it: no
# session, and the error says what to do, not only ENOENT.
test_fault_cwd_removed_before_start() {
	mkdir "$WS/gone"
	cd "$WS/gone" && rmdir "$WS/gone" || fatal 'could not remove the cwd'
	wrun -- true
	cd "$WS" || fatal "cd $WS"
	assert_rc 125 'no session without a workspace'
	assert_err_match 'the current directory was removed after the shell entered it'
	assert_err_match 'pass --workspace DIR'
}

test_fault_workspace_removed() {
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=60 f ck
	mkdir "$WS/removed" && echo a >"$WS/removed/f"
	# the command sees its files go (the same directory, bind-mounted), then
	# the directory itself (no name left: rm's last step, which an end
	# seen at f's going could come before), then ends
	(cd "$WS/removed" && warden_bg "$T_TMP/wr.out" -- sh -c \
		'echo started; i=0
		 while { [ -e f ] || [ "$(stat -c %h .)" != 0 ]; } && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
		 echo ended'
	 wait_for "$T_TMP/wr.out" '^started' 30 || { kill "$TPID"; exit 1; }
	 rm -rf "$WS/removed"
	 wait "$TPID"
	 echo "$?" >"$T_TMP/wr.rc")
	[[ -s $T_TMP/wr.rc ]] || fatal "the session did not start: $(excerpt "$(<"$T_TMP/wr.out.err")")"
	RC=$(<"$T_TMP/wr.rc") OUT=$(<"$T_TMP/wr.out") ERR=$(<"$T_TMP/wr.out.err")
	assert_rc 0 'the workspace removed'
	assert_out_has ended 'the command did not see its workspace go'
	[[ $ERR == *"$WS/removed was removed while the session ran: there was nothing left in it to sweep or to record at the end"* ]] ||
		fail "the user was not told the workspace went: $(excerpt "$ERR")"
	[[ $ERR != *"reading workspace directory"* && $ERR != *"--force"* ]] ||
		fail "a bare walk error or an undo hint for a workspace that is gone: $(excerpt "$ERR")"
	f=$(latest_log)
	ck=$(grep '"event":"session.end"' "$f" | jq -r '.checkpoint.error')
	[[ $ck == 'the workspace was removed during the session' ]] ||
		fail "session.end's checkpoint: $ck"
}

# The disk of the log fills (a 64 KiB tmpfs as the state directory, root
# only: unprivileged, no file system can be mounted on the host): the
# sandbox stops, the log's last line says so, the user is told (the log
# named, the disk full), no exec ran without its event.
test_fault_log_disk_full() {
	is_root || skip 'mounting a small tmpfs for the log needs root'
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=60 state="$T_TMP/small-state"
	mkdir -p "$state"
	mount -t tmpfs -o size=64k tmpfs "$state" || skip 'cannot mount a tmpfs here'
	# count: the runs of true that succeeded (a refused one is no run)
	XDG_STATE_HOME=$state wrun -- sh -c 'n=0; i=0; while [ $n -lt 300 ]; do n=$((n+1))
		/bin/true x-long-argument-to-fill-the-log-faster-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx &&
		{ i=$((i+1)); echo $i > count; }; done; echo finished'
	local f ran logged last
	f=$(ls -t "$state"/warden/*.jsonl | head -n 1)
	ran=$(<count)
	logged=$(grep -c '"event":"exec".*"argv":\["/bin/true".*"decision":"allow"' "$f")
	last=$(tail -n 1 "$f")
	umount "$state"
	assert_rc 125 'the disk full'
	assert_out_lacks finished 'the loop went on without a log'
	[[ $ERR == *"audit log"* ]] || fail "the user was not told: $(excerpt "$ERR")"
	# what failed, named: the log's path, the disk full, what to do; not
	# a bare errno
	[[ $ERR == *"cannot write the audit log $f: the file system is full (No space left on device); free space there"* ]] ||
		fail "the message does not name the log and the cause: $(excerpt "$ERR")"
	[[ $ERR != *"Input/output error"* ]] || fail "the message ends in a bare errno: $(excerpt "$ERR")"
	[[ $last == *'"event":"log.failed"'* ]] || fail "the log's last line is not log.failed: $last"
	((ran <= logged)) || fail "$ran execs of true ran, $logged on the record"
	note "disk full: true ran $ran times, $logged on the record"
}

# libseccomp's probes of the kernel refused in warden, as a seccomp filter
# outside warden's may refuse them: it could then never receive a
# notification, and the command waited on its first exec for ever while the
# loop spun on the pending notification. Now the session stops at once,
# naming libseccomp and what to allow; nothing ran.
test_fault_seccomp_probes_refused() {
	wfault_lib
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30 t0 ms
	t0=$(date +%s%N)
	WFAULT_SECCOMP_PROBES=1 LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	ms=$((($(date +%s%N) - t0) / 1000000))
	assert_rc 125 'libseccomp unable to receive notifications'
	assert_out_lacks RAN 'the command ran without its notifications served'
	[[ $ERR == *"libseccomp cannot receive the sandbox's notifications"* && $ERR == *"must allow seccomp(2)"* ]] ||
		fail "the user was not told what refused: $(excerpt "$ERR")"
	[[ $ERR != *"Function not implemented"* ]] || fail "the command's failed exec reported over warden's error: $(excerpt "$ERR")"
	((ms < 10000)) || fail "the refusal took ${ms} ms"
	grep -q '"event":"kill","signal":"SIGKILL","to":"sandbox","reason":"the session'"'"'s services could not start"' "$(latest_log)" ||
		fail "no kill event before the services were taken down: $(excerpt "$(grep -v '"exec"' "$(latest_log)")")"
}

# A listener that fails to receive (EFAULT from the second receive on): the
# sandbox killed at once, a kill event naming the listener, exit 125; the
# command does not go on.
test_fault_seccomp_receive_fails() {
	wfault_lib
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30 f
	WFAULT_NOTIF_RECV=2 LD_PRELOAD=$WFAULT wrun -- sh -c 'echo first; ls >/dev/null; echo after'
	assert_rc 125 'the listener failed'
	assert_out_lacks after 'the command went on after its listener failed'
	[[ $ERR == *"the seccomp listener failed (Bad address): the sandbox was stopped"* ]] ||
		fail "the user was not told: $(excerpt "$ERR")"
	f=$(latest_log)
	grep -q '"event":"kill","signal":"SIGKILL","to":"sandbox","reason":"the seccomp listener failed (Bad address)"' "$f" ||
		fail "no kill event naming the listener: $(excerpt "$(grep -v '"exec"' "$f")")"
	grep -q '"event":"session.end","exit":125' "$f" || fail 'session.end does not say 125'
}

# Sandbox init's SEALED or READY that cannot be sent (init ends), one that
# comes out of turn or is no message at all (init killed, not waited for
# alive), and the supervisor's bytes that init waits for that cannot be
# sent (the session stops): in none does one side wait for the other for
# ever, as each once did.
test_fault_handshake_unsent() {
	wfault_lib
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30
	local which
	for which in 1 2; do
		WFAULT_READY=$which LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
		assert_rc 125 "init's message $which unsent"
		assert_out_lacks RAN "the command ran without init's message $which"
		[[ $ERR == *"init ended (status 125) before reporting"* ]] ||
			fail "message $which: not told: $(excerpt "$ERR")"
	done
	WFAULT_READY=3 LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	assert_rc 125 'init sent READY for SEALED'
	assert_out_lacks RAN 'the command ran after a message out of turn'
	[[ $ERR == *"init's message 1 came out of turn"* ]] || fail "not told: $(excerpt "$ERR")"
	WFAULT_READY=4 LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	assert_rc 125 'init sent two bytes for SEALED'
	assert_out_lacks RAN 'the command ran after a message that was none'
	[[ $ERR == *"init's message could not be read: Bad message"* ]] ||
		fail "not told: $(excerpt "$ERR")"
	WFAULT_GO=r LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	assert_rc 125 'the command never told to start'
	assert_out_lacks RAN 'the command ran'
	[[ $ERR == *"telling sandbox init to start the command: No buffer space available"* ]] ||
		fail "not told: $(excerpt "$ERR")"
	WFAULT_GO=c LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	assert_rc 125 'init never told its cgroups are set'
	assert_out_lacks RAN 'the command ran'
	[[ $ERR == *"telling sandbox init its cgroups are set: No buffer space available"* ]] ||
		fail "not told: $(excerpt "$ERR")"
}

# Init's EXITED (the command's status, sent before init's own exit so
# that the session's end begins beside it) lost, or garbled into two
# bytes: the end waits for init's exit instead, with the same status and
# session.end, and nothing hangs.
test_fault_exited_unsent() {
	wfault_lib
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30
	local which log
	for which in 1 2; do
		WFAULT_EXITED=$which LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN; exit 5'
		assert_rc 5 "EXITED $which: the command's status"
		assert_out_has RAN "EXITED $which: the command"
		log=$(latest_log)
		tail -n 1 "$log" | matches '"event":"session.end".*"exit":5' ||
			fail "EXITED $which: session.end: $(excerpt "$(tail -n 1 "$log")")"
	done
}

# Sandbox init that ends with a message of the network namespace's maker
# unread resets its socket: the kernel reports that once, ahead of what
# init sent before it. The supervisor's look for init's "s" (it runs) got
# the reset and left the "s", which it then read as init's next message,
# a garbled "message -615972749 came out of turn" in place of init's own
# error (CI, in a container whose default seccomp profile refused init's
# sethostname). The reset is read past now; injected here ahead of a
# session that is otherwise whole, which must run as if nothing happened.
test_fault_running_reset() {
	wfault_lib
	# shellcheck disable=SC2034 # read by wrun (lib.sh)
	local WARDEN_TIMEOUT=30
	WFAULT_RUNNING_RESET=1 LD_PRELOAD=$WFAULT wrun -- sh -c 'echo RAN'
	assert_rc 0 "a reset reported ahead of init's \"s\""
	assert_out_has RAN 'the command did not run'
	grep -q '"event":"session.end","exit":0' "$(latest_log)" ||
		fail "session.end does not say 0: $(excerpt "$(tail -n 2 "$(latest_log)")")"
}

# The network namespace's maker (made beside init, launch.c) that never
# hands init the namespace: refused its way into init's user namespace, it
# ends without a word to init, which waits for it. The session stops at
# once with the reason (a build once waited there until a signal came).
test_fault_netns_maker_unsent() {
	local t0=$SECONDS
	"$WPROBE" deny setns-user timeout -k 5 10 "$WARDEN" run -- sh -c 'echo RAN' \
		</dev/null >"$T_TMP/mk.out" 2>"$T_TMP/mk.err"
	RC=$? OUT=$(<"$T_TMP/mk.out") ERR=$(<"$T_TMP/mk.err")
	assert_rc 125 "the network namespace's maker refused"
	assert_out_lacks RAN 'the command ran without its network namespace'
	[[ $ERR == *"network namespace: its maker (warden-netns) could not enter sandbox init's user namespace (setns refused"* ]] ||
		fail "not told: $(excerpt "$ERR")"
	((SECONDS - t0 < 8)) || fail "warden waited $((SECONDS - t0)) s for the maker"
}

# Sandbox init's move of itself into the session's cgroup v1 ones (as root
# on a hybrid host: limits.h, limits_self_move) refused: warden moves it
# instead, before it starts anything, and the limit holds from the
# command's first fork.
test_fault_cgroup_self_move() {
	wfault_lib
	is_root || skip "a limit in a cgroup v1 is root's (unprivileged: RLIMIT_NPROC or a delegated cgroup v2)"
	grep -qE ' - cgroup cgroup [^ ]*pids' /proc/self/mountinfo ||
		skip "no cgroup v1 pids controller here (init is cloned into a cgroup v2)"
	printf 'limit pids 64\n' >"$T_TMP/p.profile"
	WFAULT_SELF_MOVE=1 LD_PRELOAD=$WFAULT wrun --profile "$T_TMP/p.profile" -- sh -c './wprobe forks 300; echo "probe=$?"'
	local f by
	f=$(latest_log)
	by=$(head -n 1 "$f" | grep -oE '"pids":\{"value":"64","by":"[^"]*"' | sed -E 's/.*"by":"([^"]*)"$/\1/')
	[[ $by == cgroup || $ERR == *'wfault: refused'* ]] ||
		skip "the pids limit is not in a cgroup here (by '${by:-nothing}')"
	assert_rc 0 'the session after the fork bomb'
	[[ $ERR == *'wfault: refused /sys/fs/cgroup/pids/'*'/warden-'*'/tasks'* ]] ||
		fail "init did not try to move itself into its pids cgroup: $(excerpt "$ERR")"
	[[ $by == cgroup ]] || fail "session.start says pids enforced by '$by', not its cgroup"
	assert_fork_bomb_stopped
}

test_fault_fifo_in_warden_state() {
	# A FIFO where warden keeps a file of its own (the checkpoint store's
	# lock and stamps, the log directory's reserve, a task's lock) is
	# opened without waiting: the session runs and ends (each of these hung
	# it before anything started, and SIGTERM then only asked it to finish).
	have git || skip 'git not installed (the task case)'
	wrun -q -- true
	assert_rc 0 'the first session'
	local store=$HOME/.local/share/warden/store state=$HOME/.local/state/warden f
	local -a fifos=("$store/lock" "$store/gc-stamp" "$store/wsrefs/complete" "$state/.log-reserve")
	for f in "$store"/pruned/*; do fifos+=("$f"); done
	((${#fifos[@]} == 5)) || fatal "no prune stamp to replace: $(ls -la "$store" "$store/pruned" 2>&1)"
	for f in "${fifos[@]}"; do
		rm -f "$f" && mkfifo "$f" || fatal "could not make the FIFO $f"
	done
	wrun -q -- sh -c 'echo ran'
	assert_rc 0 "FIFOs in warden's own files"
	assert_out_eq ran
	git init -q repo && git -C repo -c user.email=a@b -c user.name=a commit -q --allow-empty -m x ||
		fatal 'could not make the repository'
	wrun -q -w "$WS/repo" --task t -- true
	assert_rc 0 'the first task session'
	for f in "$state"/locks/task-*.lock; do
		rm -f "$f" && mkfifo "$f" || fatal "could not make the FIFO $f"
	done
	wrun -q -w "$WS/repo" --task t -- sh -c 'echo ran'
	assert_rc 0 "a FIFO as the task's lock"
	assert_out_eq ran
}

# notify_limited SYSCTL inotify|watch|fanotify: this user's limit of
# inotify instances, inotify watches or fanotify groups down to 1, with one
# held by a process of the test (python3's ctypes), so that warden can make
# none; the sysctl (the host's: root only) put back when the test's
# subshell exits.
notify_limited() {
	local name=$1 kind=$2 old
	old=$(sysctl -n "$name") || fatal "no sysctl $name"
	have python3 || skip 'python3 not installed (holds the one instance)'
	python3 -c 'import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.fanotify_init(0, 0) if sys.argv[1] == "fanotify" else libc.inotify_init()
if fd >= 0 and sys.argv[1] == "watch":
    fd = libc.inotify_add_watch(fd, b"/", 1)
print("held" if fd >= 0 else "failed %d" % ctypes.get_errno(), flush=True)
time.sleep(120)' "$kind" >"$T_TMP/hold.out" 2>&1 &
	local hold=$!
	# shellcheck disable=SC2064 # the values now
	trap "kill $hold 2>/dev/null; sysctl -qw $name=$old" EXIT
	wait_for "$T_TMP/hold.out" '^(held|failed)' 10 && grep -q '^held' "$T_TMP/hold.out" ||
		fatal "could not hold a $kind object: $(<"$T_TMP/hold.out")"
	sysctl -qw "$name=1" || fatal "could not set $name"
}

# host_limit_alerted RULE TEXT: the latest session's log has an alert RULE
# whose action says TEXT, and stderr no risk warning: a host's limit is
# rated low, not the agent's doing.
host_limit_alerted() {
	[[ $ERR != *'risk score'* ]] || fail "a risk warning for the host's limit: $(excerpt "$ERR")"
	local log
	log=$(latest_log)
	grep -F "\"rule\":\"$1\"" "$log" | matches -F "$2" ||
		fail "no $1 alert saying '$2': $(excerpt "$(grep alert "$log")")"
}

# The user's inotify instances used up (fs.inotify.max_user_instances,
# which editors and file watchers share): the workspace's watch, which
# masks and protects again what the host makes during the session, cannot
# be made, and the session is refused before anything runs, the sysctl
# named with its value rather than a bare "Too many open files" (which
# reads as `ulimit -n`).
test_fault_inotify_instances() {
	is_root || skip "the sysctl is the host's: root only"
	notify_limited fs.inotify.max_user_instances inotify
	wrun -- sh -c 'echo ran'
	assert_rc 125 'no inotify instance for the workspace watch'
	assert_out_lacks ran 'the command ran'
	assert_err_match "workspace watch: inotify: .*; the kernel's limit of inotify instances for your user is reached \(sysctl fs\.inotify\.max_user_instances, 1 here"
	assert_err_match 'sysctl -w fs\.inotify\.max_user_instances=1024'
}

# The user's fanotify groups used up (fs.fanotify.max_user_groups): the
# reads outside the workspace cannot be recorded; the session runs with its
# walls whole, and says so on stderr with the sysctl and in the log (an
# alert, rated low: the host's limit, not the agent's doing, so no risk
# warning).
test_fault_fanotify_groups() {
	is_root || skip "the sysctl is the host's: root only"
	notify_limited fs.fanotify.max_user_groups fanotify
	wrun -- sh -c 'cat /etc/hostname >/dev/null; echo ran'
	assert_rc 0 'no fanotify group for the file reads'
	assert_out_line ran
	assert_err_match "file reads outside the workspace are not recorded: .*; the kernel's limit of fanotify groups for your user is reached \(sysctl fs\.fanotify\.max_user_groups, 1 here"
	host_limit_alerted files.reads-unrecorded 'fs.fanotify.max_user_groups, 1 here'
	! grep -qF '"op":"open","access":"read"' "$(latest_log)" ||
		fail 'reads recorded without a fanotify group'
}

# The user's inotify watches used up (fs.inotify.max_user_watches): the
# decoy credentials in the sandbox's home cannot be watched. The session
# runs (the proxy still refuses their tokens), and says so for each decoy
# on stderr with the sysctl, and in the log: an alert canary.unwatched,
# rated low (the host's limit), whose absence of canary.opened otherwise
# reads as no decoy opened.
test_fault_inotify_watches() {
	is_root || skip "the sysctl is the host's: root only"
	notify_limited fs.inotify.max_user_watches watch
	wrun -- sh -c 'echo ran'
	assert_rc 0 'no inotify watch for the decoys'
	assert_out_line ran
	assert_err_match "canary credentials: ~/\.aws/credentials cannot be watched: .*; the kernel's limit of inotify watches for your user is reached \(sysctl fs\.inotify\.max_user_watches, 1 here"
	host_limit_alerted canary.unwatched '.aws/credentials cannot be watched'
}
