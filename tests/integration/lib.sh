# lib.sh - helpers for the integration tests (sourced by run.sh): running
# warden with a timeout and capturing OUT/ERR/RC, batches of wprobe probes in
# one session, soft assertions that collect reasons, background processes that
# the runner cleans up. Each test runs in a subshell with cwd = $WS and these
# variables set: WARDEN, WPROBE, WS (fresh workspace holding ./wprobe),
# HOME (fake, with bait planted), T_TMP (scratch outside the workspace).
# shellcheck shell=bash

WARDEN_TIMEOUT=${WARDEN_TIMEOUT:-30}
BAIT='BAIT-NOT-A-REAL-KEY'

# ---- outcome ------------------------------------------------------------

# fail MSG: record a reason; the test goes on and is reported failed.
fail() { printf '%s\n' "$*" >>"$T_TMP/.reasons"; }
# fatal MSG: record and stop the test now.
fatal() { fail "$@"; exit 1; }
# skip MSG: the test cannot run here (counted as passed, marked SKIP).
skip() { printf '%s\n' "$*" >"$T_TMP/.skip"; exit 77; }
# A test that calls a helper the harness does not define (a misspelt
# assert_...) fails, rather than passing on a "command not found". Any
# other missing command is bash's usual error (tests check with `have`).
command_not_found_handle() {
	case $1 in
	assert_* | expect_*) fail "the test calls $1, which lib.sh does not define" ;;
	esac
	printf 'bash: %s: command not found\n' "$1" >&2
	return 127
}
# note MSG: informational line shown in verbose mode.
note() { printf '# %s\n' "$*"; }

# Short one-line excerpt of a text for a failure reason.
excerpt() {
	local s=${1//$'\r'/}
	s=${s//$'\n'/ ⏎ }
	((${#s} > 240)) && s="${s:0:240}..."
	printf '%s' "$s"
}

# ---- running warden -----------------------------------------------------

# wrun [warden run options] [--] COMMAND...: run `warden run` with stdin from
# /dev/null (or $WSTDIN), a timeout, and the default disposition for the
# signals a background shell ignores. Sets OUT, ERR, RC; always returns 0.
wrun() {
	timeout -k 5 "$WARDEN_TIMEOUT" env --default-signal=INT,QUIT,TERM,HUP \
		"$WARDEN" run "$@" <"${WSTDIN:-/dev/null}" >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out")
	ERR=$(<"$T_TMP/.err")
	if ((RC == 124)); then
		fail "warden run $* timed out after ${WARDEN_TIMEOUT}s"
	fi
	printf '$ warden run %s\n-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$*" "$RC" "$OUT" "$ERR"
	return 0
}

# wsh SCRIPT [warden run options]: wrun -- sh -c SCRIPT.
wsh() {
	local script=$1
	shift
	wrun "$@" -- sh -c "$script"
}

# wardenc ARGS...: any other warden subcommand (policy show ...), same capture.
wardenc() {
	timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" "$@" </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out")
	ERR=$(<"$T_TMP/.err")
	printf '$ warden %s\n-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$*" "$RC" "$OUT" "$ERR"
	return 0
}

# wbatch [warden run options --] 'LABEL|wprobe args' ...: run several probes in
# one session. Each probe yields a line "LABEL|RC|LAST-OUTPUT-LINE" in BATCH.
# Args are spliced into a sh script: plain words only (no quotes/spaces).
# $WBATCH_PRE, if set, is a sh snippet run first in the same session.
wbatch() {
	local opts=() spec label args script="${WBATCH_PRE:+$WBATCH_PRE; }"
	if [[ " $* " == *' -- '* ]]; then
		while [[ $1 != -- ]]; do opts+=("$1"); shift; done
		shift
	fi
	for spec; do
		label=${spec%%|*}
		args=${spec#*|}
		script+="o=\$(./wprobe $args 2>&1); r=\$?; printf '%s|%s|%s\\n' '$label' \"\$r\" \"\$(printf '%s\\n' \"\$o\" | tail -n 1)\"; "
	done
	wrun "${opts[@]}" -- sh -c "$script"
	BATCH=$OUT
}

# bexpect LABEL allowed|denied [ERRNO[,ERRNO...]]: check one batch result.
bexpect() {
	local label=$1 want=$2 errnos=${3:-} line rc msg word
	line=$(awk -F'|' -v l="$label" '$1 == l { print; exit }' <<<"$BATCH")
	if [[ -z $line ]]; then
		fail "$label: no result (session rc=$RC, stderr: $(excerpt "$ERR"))"
		return 0
	fi
	rc=$(cut -d'|' -f2 <<<"$line")
	msg=$(cut -d'|' -f3- <<<"$line")
	check_probe "$label" "$want" "$errnos" "$rc" "$msg"
}

# check_probe LABEL WANT ERRNOS RC MSG
check_probe() {
	local label=$1 want=$2 errnos=$3 rc=$4 msg=$5 word
	case $want in
	allowed)
		[[ $rc == 0 && $msg == ALLOWED* ]] ||
			fail "$label: expected ALLOWED, got rc=$rc '$msg'"
		;;
	denied)
		if [[ $rc != 1 || $msg != DENIED* ]]; then
			if ((rc > 128 && rc < 160)); then
				fail "$label: expected DENIED${errnos:+ $errnos}, process killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
			else
				fail "$label: expected DENIED${errnos:+ $errnos}, got rc=$rc '$msg'"
			fi
			return 0
		fi
		if [[ -n $errnos ]]; then
			word=$(awk '{ print $2 }' <<<"$msg")
			[[ ",$errnos," == *",$word,"* ]] ||
				fail "$label: expected DENIED $errnos, got '$msg'"
		fi
		;;
	*) fatal "bexpect: bad expectation '$want'" ;;
	esac
	return 0
}

# probe_host ARGS...: run wprobe on the host; sets HRC and HOUT.
probe_host() {
	HOUT=$("$WPROBE" "$@" 2>&1 | tail -n 1)
	HRC=${PIPESTATUS[0]}
}

# tscript SHELL-COMMAND: run it on a terminal of its own (script(1) makes the
# pty). script's stdin stays open while the command runs: at EOF script would
# type an end-of-file into the terminal. Sets OUT (CRs removed, stderr merged,
# the pty echo of nothing else) and RC.
tscript() {
	local sleeper
	exec {sleeper}< <(exec sleep "$WARDEN_TIMEOUT")
	bg_track $!
	OUT=$(timeout -k 5 "$WARDEN_TIMEOUT" script -qec "$1" /dev/null <&"$sleeper" 2>&1)
	RC=$?
	exec {sleeper}<&-
	OUT=${OUT//$'\r'/}
	printf '$ script -qec "%s"\n-> rc=%s\n--- output\n%s\n' "$1" "$RC" "$OUT"
	return 0
}

# ttyjob COMMAND STEP...: ttyjob.py (a terminal typed at, shown byte for
# byte: expect=RE, send=TEXT, sleep=S, run=CMD) under a timeout; OUT its
# output (the screen as a Python bytes literal, where a CR is \r), RC its
# status, ERR empty.
ttyjob() {
	have python3 || skip 'python3 not installed'
	OUT=$(timeout -k 5 120 python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ttyjob.py" "$@" 2>&1)
	RC=$? ERR=''
	printf '%s\n' "$OUT"
}

# wscript [warden run args...]: warden run on a terminal of its own.
wscript() {
	tscript "$(printf '%q ' "$WARDEN" run "$@")"
}

# ---- assertions on OUT / ERR / RC --------------------------------------

assert_rc() { # WANT [LABEL]
	[[ $RC == "$1" ]] || fail "${2:+$2: }expected exit $1, got $RC (stdout: $(excerpt "$OUT"); stderr: $(excerpt "$ERR"))"
}
assert_rc_nonzero() { # [LABEL]
	[[ $RC != 0 ]] || fail "${1:+$1: }expected a non-zero exit, got 0 (stdout: $(excerpt "$OUT"))"
}
assert_out_eq() { # WANT [LABEL]
	[[ $OUT == "$1" ]] || fail "${2:+$2: }expected output '$(excerpt "$1")', got '$(excerpt "$OUT")' (rc=$RC, stderr: $(excerpt "$ERR"))"
}
assert_out_has() { # STRING [LABEL]
	[[ $OUT == *"$1"* ]] || fail "${2:+$2: }output lacks '$1' (rc=$RC, stdout: $(excerpt "$OUT"); stderr: $(excerpt "$ERR"))"
}
assert_out_lacks() { # STRING [LABEL]
	[[ $OUT != *"$1"* ]] || fail "${2:+$2: }output contains '$1': $(excerpt "$OUT")"
}
assert_out_line() { # LINE [LABEL]: some line of OUT is exactly LINE
	grep -qxF -- "$1" <<<"$OUT" || fail "${2:+$2: }no output line '$1' (rc=$RC, stdout: $(excerpt "$OUT"); stderr: $(excerpt "$ERR"))"
}
assert_fork_bomb_stopped() { # : OUT of `wprobe forks 300; echo "probe=$?"` under `limit pids 64`
	assert_out_has 'DENIED EAGAIN' 'a fork failed at the limit'
	assert_out_line 'probe=1'
	local n
	n=$(sed -nE 's/^forked ([0-9]+)$/\1/p' <<<"$OUT")
	if [[ -z $n ]] || ((n < 55 || n > 61)); then
		fail "forked '$n' processes with limit pids 64 (init, sh and wprobe make 3 more): $(excerpt "$OUT")"
	fi
}
assert_out_match() { # ERE [LABEL]
	grep -qE -- "$1" <<<"$OUT" || fail "${2:+$2: }output does not match /$1/ (rc=$RC, stdout: $(excerpt "$OUT"); stderr: $(excerpt "$ERR"))"
}
assert_err_match() { # ERE [LABEL]
	grep -qE -- "$1" <<<"$ERR" || fail "${2:+$2: }stderr does not match /$1/ (rc=$RC, stderr: $(excerpt "$ERR"))"
}
assert_host_absent() { # PATH [LABEL]
	[[ ! -e $1 && ! -L $1 ]] || fail "${2:+$2: }$1 exists on the host"
}
assert_host_file() { # PATH CONTENT [LABEL]
	if [[ ! -f $1 ]]; then
		fail "${3:+$3: }$1 missing on the host"
	elif [[ $(<"$1") != "$2" ]]; then
		fail "${3:+$3: }$1 on the host holds '$(excerpt "$(<"$1")")', expected '$2'"
	fi
}
# assert_streamed FIRST_ERE LAST_ERE: a stream in OUT, each line stamped
# inside with the time it was read (got=TIME), came event by event: the first
# line matching FIRST_ERE was read before the first line matching LAST_ERE
# was sent (its sent=TIME, or else the server's time after the event's word,
# its first bare number). 1 when the stream did not arrive whole.
assert_streamed() {
	local first_got last_sent
	first_got=$(awk -v re="$1" '$0 ~ re {
		for (i = 1; i <= NF; i++) if ($i ~ /^got=/) { print substr($i, 5); exit } }' <<<"$OUT")
	last_sent=$(awk -v re="$2" '$0 ~ re {
		for (i = 1; i <= NF; i++) if ($i ~ /^sent=/) { print substr($i, 6); exit }
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) { print $i; exit } }' <<<"$OUT")
	if [[ -z $first_got || -z $last_sent ]]; then
		fail "the stream did not arrive whole: $(excerpt "$OUT")"
		return 1
	fi
	awk -v g="$first_got" -v l="$last_sent" 'BEGIN { exit !(g < l) }' ||
		fail "the first event arrived ($first_got) only after the last was sent ($last_sent): buffered"
}

# ---- background processes ----------------------------------------------

# bg_track PID: the runner kills it (and its process group) after the test.
bg_track() { printf '%s\n' "$1" >>"$T_TMP/.bgpids"; }

# warden_pid REGEX: the pid of the warden run whose command line matches
# REGEX (pgrep -f), not one of its helpers: the file-read helper and the
# stream's sender are forks with the same command line, and pids wrap
# (pid_max 32768 here), so the lowest match may be a helper. The match
# whose parent is not itself a match is the supervisor.
warden_pid() {
	local pids p pp
	pids=$(pgrep -f -- "$1") || return 0
	for p in $pids; do
		pp=$(ps -o ppid= -p "$p" 2>/dev/null) || continue
		grep -qx -- "${pp// /}" <<<"$pids" || { printf '%s\n' "$p"; return 0; }
	done
}

# wait_for FILE REGEX [SECONDS]: wait until FILE has a line matching REGEX.
wait_for() {
	local i n=$((${3:-10} * 20))
	for ((i = 0; i < n; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# warden_bg OUTFILE [warden run args...]: start warden in the background under
# a timeout; sets TPID (the timeout process) and WPID (warden itself; empty
# when the whole session was over before it could be seen: a session killed
# at once takes some 20 ms, a pgrep on a loaded machine can take longer,
# and the caller checks how it ended).
warden_bg() {
	local outfile=$1 i
	shift
	timeout -k 5 "$WARDEN_TIMEOUT" env --default-signal=INT,QUIT,TERM,HUP \
		"$WARDEN" run "$@" </dev/null >"$outfile" 2>"$outfile.err" &
	TPID=$!
	bg_track "$TPID"
	WPID=
	for ((i = 0; i < 200; i++)); do
		WPID=$(pgrep -P "$TPID" | head -n 1)
		[[ -n $WPID ]] && break
		[[ $(ps -o stat= -p "$TPID") == Z* || -z $(ps -o stat= -p "$TPID") ]] && return 0
		sleep 0.02
	done
	# env execs warden, so the child of timeout is warden itself
	[[ -n $WPID ]] || fatal "warden did not start"
	bg_track "$WPID"
}

# ---- misc ---------------------------------------------------------------

# no_detect_actions [FILE]: a profile (FILE, else a new one) with the
# detector's thresholds off: for the tests of the walls that try many
# forbidden things in one session, which the default thresholds would freeze
# or end (t_detect.sh tests that). Appends to FILE; prints its path.
no_detect_actions() {
	local f=${1:-$T_TMP/no-detect.profile}
	printf 'risk freeze off\nrisk kill off\nrisk ask off\n' >>"$f"
	echo "$f"
}

is_root() { [[ $(id -u) == 0 ]]; }
# The test's sessions' control directory (run.sh gives each test its own
# XDG_RUNTIME_DIR).
control_dir() { printf '%s/warden/control' "$XDG_RUNTIME_DIR"; }
# backlog_filler FILE: FILE made a python script `FILE SOCK FLAG [SECONDS
# [listen]]` that connects to the unix socket SOCK until its listener's
# backlog is full (a listener that accepts nothing: a stopped warden's),
# makes FLAG, and holds the connections SECONDS (60); with `listen`, that
# listener is its own, bound at SOCK first.
backlog_filler() {
	cat >"$1" <<'PY'
import socket, sys, time
if len(sys.argv) > 4 and sys.argv[4] == "listen":
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[1])
    s.listen(0)
held = []
for _ in range(4096):
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except BlockingIOError:
        break
    held.append(c)
open(sys.argv[2], "w").close()
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 60)
PY
}
# control_as USER SOCKET LINE: LINE sent to a control socket as USER, the
# reply printed (warden's own client looks only in directories of its
# user's, so another uid talks to the socket itself); 1 when it could not
# connect.
control_as() {
	runuser -u "$1" -- /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e)
    sys.exit(1)
s.sendall(sys.argv[2].encode() + b"\n")
try:
    print(s.recv(65536).decode(errors="replace").strip())
except OSError as e:
    print("recv:", e)' "$2" "$3"
}
have() { command -v "$1" >/dev/null 2>&1; }

# WFAULT: the fault injector beside wprobe (tests/helpers/wfault.c), loaded
# into warden with LD_PRELOAD; skips when it was not built.
wfault_lib() {
	WFAULT=$(dirname "$WPROBE")/wfault.so
	[[ -r $WFAULT ]] || skip "no $WFAULT (the fault injector, built with the tests)"
}
# matches GREP-ARGS: grep -q at the end of a pipeline, but reading all of its
# input: grep -q leaves at its first match, the command before it then dies of
# SIGPIPE, and run.sh's pipefail fails a pipeline whose line was there (seen
# under load). tests/lint/pipes.sh keeps `| grep -q` out of the tests.
matches() { grep "$@" >/dev/null; }

# latest_log: the newest session log of this test's HOME (nothing when
# there is none).
# shellcheck disable=SC2012 # warden's own file names
latest_log() { ls -t "$HOME/.local/state/warden/"*.jsonl 2>/dev/null | head -n 1; }

# path_without_home_tools: $PATH without what would have warden expose an
# interpreter from the home for what a command runs by name inside
# (t_vmshim.sh, test_vmshim_*_by_name_inside): the version managers' shims
# directories (a .../shims entry: pyenv, rbenv, asdf, mise) and the
# directories in the invoking user's own home (nvm's versions/node/V/bin).
# The tests of what a session shows or exposes with nothing asked run with it.
path_without_home_tools() {
	local d out='' IFS=: home
	home=$(getent passwd "$(id -u)" | cut -d: -f6)
	for d in $PATH; do
		[[ $d == */shims || (-n $home && $home != / && $d == "$home"/*) ]] || out+=${out:+:}$d
	done
	printf '%s' "$out"
}
# A name nobody else uses, for host-side markers.
unique() { printf 'wardentest-%s-%s-%s' "$$" "$RANDOM" "$RANDOM"; }

# ---- agent clients ------------------------------------------------------

# tests/agents, beside this directory (scripts/test copies both for the
# unprivileged run).
AGENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../agents" 2>/dev/null && pwd)

# PY_ACL: Python that defines acl(uid), the value of a POSIX access ACL as
# setfacl writes it (the system.posix_acl_access attribute: version 2, then
# the owner's, a named user's, the group's, the mask's and the others'
# entries) with an entry that lets user uid read: for the tests that set
# one inside a session.
PY_ACL='import struct
def acl(uid):
    entries = [(0x01, 6, 0xffffffff), (0x02, 4, uid), (0x04, 4, 0xffffffff),
               (0x10, 4, 0xffffffff), (0x20, 4, 0xffffffff)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
'

# agent_install PACKAGE NAME TITLE: the real client installed once by
# tests/agents/install.sh --package PACKAGE, copied to ~/.npm-global as a user
# has it (hard links when the cache allows them). Sets AGENT_BIN (its bin
# directory), or skips when it cannot be installed.
agent_install() {
	local package=$1 name=$2 title=$3 prefix rc
	[[ -n $AGENTS_DIR && -x $AGENTS_DIR/install.sh ]] || skip "tests/agents/install.sh not found beside tests/integration"
	prefix=$("$AGENTS_DIR/install.sh" --package "$package" 2>"$T_TMP/install.err")
	rc=$?
	if ((rc == 3)); then
		skip "$title could not be installed: $(excerpt "$(tail -n 3 "$T_TMP/install.err")")"
	fi
	((rc == 0)) || fatal "install.sh --package $package failed (exit $rc): $(excerpt "$(<"$T_TMP/install.err")")"
	mkdir -p "$HOME/.npm-global"
	cp -al "$prefix/." "$HOME/.npm-global/" 2>/dev/null ||
		{ rm -rf "$HOME/.npm-global" && cp -a "$prefix/." "$HOME/.npm-global/"; } ||
		fatal "could not copy $prefix to $HOME/.npm-global"
	AGENT_BIN=$HOME/.npm-global/bin
	[[ -x $AGENT_BIN/$name ]] || fatal "$AGENT_BIN/$name missing after the copy"
}

# AGENT_PROBE: a script run inside an agent's session (sh -c "$AGENT_PROBE"
# sh HEADER VAR LABEL=METHOD:URL...): each request with the key the variable
# VAR holds inside (the phantom) in the header HEADER ("x-api-key: "), a
# POST with the body {}; for each, a line LABEL=STATUS and, when warden
# answered, LABEL-reason=X-Warden-Reason: ...
# shellcheck disable=SC2016 # expanded inside
AGENT_PROBE='h=$1 k=$(printenv "$2"); shift 2
	for r; do
		l=${r%%=*} m=${r#*=}; u=${m#*:} m=${m%%:*}
		if [ "$m" = POST ]; then set -- --data "{}"; else set --; fi
		o=$(curl -sS -m 20 -X "$m" -H "$h$k" -H "content-type: application/json" "$@" -D - -o /dev/null \
			-w "code=%{http_code}" "$u" | tr -d "\r")
		echo "$l=${o##*code=}"
		echo "$o" | grep -i "^x-warden-reason:" | sed "s/^/$l-reason=/"
	done'
