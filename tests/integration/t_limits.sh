# t_limits.sh - limits (`limit pids|memory|cpu|tmp|home`): the built-in
# defaults in `policy show` and in force in a session, a fork bomb stopped at
# `limit pids` (and the invoking user's own processes outside not counted),
# /tmp full at `limit tmp` with a `limit` event, doctor naming each limit and
# what enforces it, notes only for limits a profile asked for that cannot be
# enforced, and memory and CPU through a cgroup where one is usable; the
# default memory limit, half of what the host has, where one is.
# shellcheck shell=bash


# limits_by KIND: how the last session enforced KIND ("cgroup",
# "RLIMIT_NPROC", "tmpfs"; "" when nothing did), from its session.start.
limits_by() {
	local f
	f=$(latest_log)
	[[ -n $f ]] || return 0
	head -n 1 "$f" | grep -oE "\"$1\":\\{\"value\":\"[^\"]*\",\"by\":\"[^\"]*\"" | sed -E 's/.*"by":"([^"]*)"$/\1/'
}

# limits_cgroup_gone KIND: the last session's cgroup of KIND was removed.
limits_cgroup_gone() {
	local f parent id
	f=$(latest_log)
	parent=$(head -n 1 "$f" | grep -oE "\"$1\":\{[^}]*\}" | sed -nE 's/.* below ([^"]*)".*/\1/p')
	id=$(basename "$f" .jsonl)
	[[ -n $parent ]] || { fail "session.start names no cgroup for $1"; return 0; }
	[[ ! -e $parent/warden-$id ]] || fail "the session's cgroup $parent/warden-$id is left behind"
}

# limits_events KIND: the limit events of KIND in the last session's log.
limits_events() {
	local f
	f=$(latest_log)
	[[ -n $f ]] && grep -F '"event":"limit"' "$f" | grep -F "\"kind\":\"$1\""
}

# doctor_line KIND [PROFILE]: doctor's line for the limit KIND into DLINE.
doctor_line() {
	if [[ -n ${2:-} ]]; then
		wardenc doctor --profile "$2"
	else
		wardenc doctor
	fi
	DLINE=$(grep -E "^  $1 " <<<"$OUT")
}

test_limits_defaults() {
	wardenc policy show
	assert_rc 0 'policy show'
	local flat
	flat=$(tr -d ' \n' <<<"$OUT")
	for want in '"pids":{"value":"4096","origin":"builtin:default:' \
		'"tmp":{"value":"4G","origin":"builtin:default:' \
		'"home":{"value":"2G","origin":"builtin:default:' \
		'"memory":{"value":"50%","origin":"builtin:default:' \
		'"cpu":{"value":"unlimited","origin":"builtin:default:'; do
		[[ $flat == *"$want"* ]] || fail "policy show lacks $want: $(excerpt "$flat")"
	done
	printf 'limit pids 64\nlimit tmp 1.5G\nlimit cpu 0.5\n' >"$T_TMP/l.profile"
	wardenc policy show --profile "$T_TMP/l.profile"
	flat=$(tr -d ' \n' <<<"$OUT")
	[[ $flat == *"\"pids\":{\"value\":\"64\",\"origin\":\"$T_TMP/l.profile:1\""[,}]* ]] ||
		fail "policy show: the profile's pids limit with its origin: $(excerpt "$flat")"
	[[ $flat == *'"tmp":{"value":"1536M"'* && $flat == *'"cpu":{"value":"0.5"'* ]] ||
		fail "policy show: tmp 1536M and cpu 0.5: $(excerpt "$flat")"
	printf 'limit pids 1\n' >"$T_TMP/bad.profile"
	wrun --profile "$T_TMP/bad.profile" -- true
	assert_rc 125 'a bad limit'
	assert_err_match "$T_TMP/bad.profile:1:12: limit pids: '1' is out of range" 'the error names FILE:LINE:COL'

	# In a session: the sizes of the scratch tmpfs (one for /tmp, /var/tmp and
	# /dev/shm) and of the home, and no note for the defaults.
	wrun -- sh -c 'df -k /tmp /var/tmp /dev/shm /home/agent | tail -n 4'
	assert_rc 0 'a session with the defaults'
	local n
	n=$(awk '$2 == 4194304' <<<"$OUT" | wc -l)
	((n == 3)) || fail "/tmp, /var/tmp and /dev/shm are not 4G tmpfs: $(excerpt "$OUT")"
	awk '$6 == "/home/agent" && $2 == 2097152 { found = 1 } END { exit !found }' <<<"$OUT" ||
		fail "the home is not a 2G tmpfs: $(excerpt "$OUT")"
	[[ $ERR != *'not enforced'* ]] || fail "the defaults gave a note: $(excerpt "$ERR")"
}

test_limits_pids_fork_bomb() {
	# Children that sleep, forked until a fork fails: it stops at the limit
	# (init, sh and wprobe count), the command still exits with its children
	# running, and warden returns.
	printf 'limit pids 64\n' >"$T_TMP/p.profile"
	wrun --profile "$T_TMP/p.profile" -- sh -c './wprobe forks 300; echo "probe=$?"'
	assert_rc 0 'the session after the fork bomb'
	assert_fork_bomb_stopped
	local by
	by=$(limits_by pids)
	note "pids enforced by: ${by:-nothing}"
	case $by in
	cgroup)
		limits_events pids | grep -F '"limit":"64"' >/dev/null ||
			fail "no limit event of kind pids in $(latest_log)"
		limits_cgroup_gone pids
		;;
	RLIMIT_NPROC)
		is_root && fail 'RLIMIT_NPROC in force as root, where it never applies'
		;;
	*) fail "session.start says nothing enforced pids ('$by')" ;;
	esac

	# The smallest limit: init and the command, which cannot fork at all;
	# warden itself works as usual.
	printf 'limit pids 2\n' >"$T_TMP/p2.profile"
	wrun --profile "$T_TMP/p2.profile" -- ./wprobe forks 5
	assert_rc 1 'limit pids 2'
	assert_out_line 'forked 0'
	assert_out_has 'DENIED EAGAIN'
}

test_limits_pids_host_processes() {
	# The invoking user's processes outside do not count against the
	# sandbox's limit: 80 sleeping here, 40 forked inside under limit 64.
	local i
	for ((i = 0; i < 80; i++)); do
		sleep 60 &
		bg_track $!
	done
	printf 'limit pids 64\n' >"$T_TMP/p.profile"
	wrun --profile "$T_TMP/p.profile" -- ./wprobe forks 40
	assert_rc 0 '40 forks under limit pids 64 with 80 processes of the user outside'
	assert_out_has 'ALLOWED forked 40'
	note "pids enforced by: $(limits_by pids)"
}

test_limits_tmp_full() {
	printf 'limit tmp 8M\nlimit home 4M\n' >"$T_TMP/t.profile"
	wrun --profile "$T_TMP/t.profile" -- sh -c '
		dd if=/dev/zero of=/tmp/fill bs=1M count=20 2>&1 | head -n 1
		echo x >/var/tmp/more 2>&1 || echo "var-tmp=full"
		dd if=/dev/zero of=/home/agent/fill bs=1M count=20 2>&1 | head -n 1
		df -k /tmp /home/agent | tail -n 2'
	assert_rc 0 'the session after filling /tmp'
	local nospace
	nospace=$(grep -c 'No space left on device' <<<"$OUT")
	((nospace == 2)) || fail "writing past limit tmp 8M and limit home 4M: $(excerpt "$OUT")"
	assert_out_line 'var-tmp=full' '/var/tmp shares /tmp'"'"'s tmpfs'
	awk '$6 == "/tmp" && $2 == 8192 { found = 1 } END { exit !found }' <<<"$OUT" ||
		fail "/tmp is not an 8M tmpfs: $(excerpt "$OUT")"
	[[ $(limits_by tmp) == tmpfs ]] || fail "session.start: tmp not by tmpfs ('$(limits_by tmp)')"
	limits_events tmp | grep -F '"limit":"8M"' >/dev/null || fail "no limit event of kind tmp in $(latest_log)"
	limits_events home | grep -F '"limit":"4M"' >/dev/null || fail "no limit event of kind home in $(latest_log)"
	# said once at the end too (the summary of refusals)
	assert_err_match 'limit tmp 8M: .*full' 'the summary names the limit reached'
}

# `limit log`: a program that makes events without end (a loop of execs,
# each on the record) ends the session when its log reaches the limit: a
# `limit` event of kind log naming it and what raises it, the same on
# stderr, exit 125, session.end written and the chain whole; the log stays
# within the limit and the room it keeps for the session's end.
test_limits_log() {
	printf 'limit log 1M\n' >"$T_TMP/t.profile"
	local WARDEN_TIMEOUT=300
	wrun --profile "$(no_detect_actions "$T_TMP/t.profile")" -- sh -c 'while :; do /bin/true; done'
	assert_rc 125 'a session past limit log 1M'
	assert_err_match 'limit log 1M' 'stderr names the limit'
	assert_err_match 'limit log SIZE' 'stderr says what raises it'
	[[ $(grep -c 'reached its limit' <<<"$ERR") == 2 ]] ||
		fail "the limit said other than once when reached and once at the end: $(excerpt "$ERR")"
	[[ $(limits_by log) == warden ]] || fail "session.start: log not by warden ('$(limits_by log)')"
	limits_events log | matches -F '"limit":"1M"' || fail "no limit event of kind log in $(latest_log)"
	local log size
	log=$(latest_log)
	size=$(stat -c %s "$log")
	((size > 1048576 && size < 1048576 + 262144)) || fail "the log is $size bytes for limit log 1M"
	tail -n 1 "$log" | matches -F '"event":"session.end","exit":125' ||
		fail "the last line is no session.end: $(excerpt "$(tail -n 1 "$log")")"
	wardenc log verify "$(basename "$log" .jsonl)"
	assert_out_match 'chain ok' 'the log past its limit verifies'
}

test_limits_doctor() {
	local line kind
	wardenc doctor
	for kind in pids memory cpu tmp home log; do
		grep -qE "^  $kind +[0-9A-Za-z.%]+ +(in force|NOT enforced|a .limit $kind. would)" <<<"$OUT" ||
			fail "doctor names no limit $kind: $(excerpt "$OUT")"
	done
	line=$(grep -E '^  pids ' <<<"$OUT")
	if is_root; then
		[[ $line == *'in force: pids.max'* || $line == *'NOT enforced here:'*'uid 0'* ]] ||
			fail "doctor as root: pids by a cgroup or said not enforced: $line"
	else
		[[ $line == *'in force: '* ]] || fail "doctor: pids not in force: $line"
	fi
	grep -qE '^  tmp +4G +in force: the size of the tmpfs' <<<"$OUT" || fail "doctor: tmp: $(excerpt "$OUT")"

	# A profile asking for memory: doctor says whether it is enforced, and a
	# session says so once (a note) exactly when it is not.
	printf 'limit memory 1G\nlimit cpu 1.5\n' >"$T_TMP/m.profile"
	doctor_line memory "$T_TMP/m.profile"
	line=$DLINE
	note "doctor: $line"
	[[ $line == *'1G'* ]] || fail "doctor --profile: memory 1G: $line"
	wrun --profile "$T_TMP/m.profile" -- true
	assert_rc 0 'a session with limit memory 1G'
	if [[ $line == *'NOT enforced here: '* ]]; then
		assert_err_match "limit memory 1G \\($T_TMP/m.profile:1\\) is not enforced here: " 'the note'
		[[ $(grep -c 'limit memory 1G' <<<"$ERR") == 1 ]] || fail "the note is not said once: $(excerpt "$ERR")"
	elif [[ $line == *'in force: '* ]]; then
		[[ $ERR != *'not enforced'* ]] || fail "a note for an enforced limit: $(excerpt "$ERR")"
		[[ $(limits_by memory) == cgroup ]] || fail "doctor says in force, the session's memory is by '$(limits_by memory)'"
	else
		fail "doctor --profile: memory line: $line"
	fi
}

test_limits_memory_cpu() {
	printf 'limit memory 64M\nlimit cpu 0.25\n' >"$T_TMP/m.profile"
	local mline cline
	doctor_line memory "$T_TMP/m.profile"
	mline=$DLINE
	doctor_line cpu "$T_TMP/m.profile"
	cline=$DLINE
	[[ -n $mline && -n $cline ]] || fatal "doctor names no limit memory or cpu: $(excerpt "$OUT")"
	[[ $mline == *'in force: '* || $cline == *'in force: '* ]] ||
		skip "no usable cgroup for memory or cpu here: ${mline#*NOT enforced here: }"
	note "memory: $mline"
	note "cpu: $cline"
	if [[ $mline == *'in force: '* ]]; then
		wrun --profile "$T_TMP/m.profile" -- sh -c 'dd if=/dev/zero of=/dev/null bs=256M count=1 2>/dev/null; echo "dd=$?"'
		# v2: memory.oom.group ends the whole sandbox; v1: the kernel kills dd
		if [[ $mline == *'of a cgroup v2 '* ]]; then
			assert_rc 137 'the sandbox killed at limit memory 64M (memory.oom.group)'
		else
			assert_out_line 'dd=137' 'dd killed at limit memory 64M'
		fi
		limits_events memory | grep -F '"limit":"64M"' >/dev/null || fail "no limit event of kind memory in $(latest_log)"
		limits_cgroup_gone memory
	fi
	if [[ $cline == *'in force: '* ]]; then
		# the CPU time (user and system) of 2 s of busy loop at 0.25 CPU,
		# against the time it took (/proc/uptime, read without a fork): a
		# slow machine (qemu without KVM: tests/vm/cgroup2.sh) takes far
		# longer than 2 s to start the loop, all of it at 0.25 CPU too
		wrun --profile "$T_TMP/m.profile" -- sh -c 'read -r u0 _ </proc/uptime
			timeout 2 sh -c "while :; do :; done"
			read -r u1 _ </proc/uptime; echo "wall=$u0 $u1"; times'
		local t wall
		t=$(tail -n 1 <<<"$OUT" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
		wall=$(sed -n 's/^wall=//p' <<<"$OUT" | awk '{ print $2 - $1 }')
		note "busy loop of 2 s at limit cpu 0.25: ${t}s of CPU in ${wall}s"
		if [[ -z $t || -z $wall ]] || ! awk -v t="$t" -v w="$wall" 'BEGIN { exit !(w >= 1.9 && t < 0.4 * w) }'; then
			fail "2 s of busy loop used ${t:-?}s of CPU in ${wall:-?}s under limit cpu 0.25: $(excerpt "$OUT")"
		fi
		# throttled: one event (then at most one a minute)
		local n
		n=$(limits_events cpu | grep -cF 'nr_throttled')
		[[ $n == 1 ]] || fail "$n limit events of kind cpu for a 2 s busy loop at limit cpu 0.25 (want 1): $(limits_events cpu)"
	fi
}

test_limits_cgroup_v2() {
	# memory, pids and cpu through a cgroup v2 subtree, where there is one.
	printf 'limit memory 64M\nlimit pids 64\n' >"$T_TMP/v2.profile"
	local mline
	doctor_line memory "$T_TMP/v2.profile"
	mline=$DLINE
	[[ -n $mline ]] || fatal "doctor names no limit memory: $(excerpt "$OUT")"
	if [[ $mline != *'in force: '*'of a cgroup v2 '* ]]; then
		local ctl=''
		[[ -r /sys/fs/cgroup/unified/cgroup.controllers ]] && ctl=$(</sys/fs/cgroup/unified/cgroup.controllers)
		skip "no cgroup v2 with the memory controller usable here (${mline#*: }${ctl:+; the hybrid v2 at /sys/fs/cgroup/unified has only: $ctl; the others are bound to cgroup v1, so a new cgroup2 mount is the same hierarchy})"
	fi
	wrun --profile "$T_TMP/v2.profile" -- sh -c 'cat /proc/self/cgroup; ./wprobe forks 300'
	assert_out_line '0::/' 'the sandbox sees its own cgroup as the root'
	assert_out_has 'DENIED EAGAIN'
	limits_events pids | grep -F '"limit":"64"' >/dev/null || fail "no limit event of kind pids"
	# the OOM kills the sandbox, all of it and nothing else: warden
	# survives it, ends the session on the record and says why
	wrun --profile "$T_TMP/v2.profile" -- sh -c 'dd if=/dev/zero of=/dev/null bs=256M count=1; echo "after=$?"'
	assert_rc 137 'memory.oom.group ends the sandbox'
	[[ $OUT != *after=* ]] || fail "the shell outlived the OOM kill of dd: $(excerpt "$OUT")"
	limits_events memory | grep -F '"limit":"64M"' >/dev/null || fail "no limit event of kind memory"
	local n
	n=$(limits_events memory | wc -l)
	[[ $n == 1 ]] || fail "$n limit events of kind memory for one out-of-memory kill of the sandbox (want 1): $(limits_events memory)"
	grep -qF '"event":"session.end"' "$(latest_log)" || fail "no session.end after the sandbox's OOM"
	assert_err_match 'limit memory 64M: the sandbox reached its memory limit' 'the summary names the limit'
	limits_cgroup_gone memory
}

test_limits_cgroup_stale() {
	# the cgroup of a session whose warden was killed (empty, made over a
	# minute ago) is removed by a later session; a recent one is not
	is_root || skip "the session's cgroups are made as root here (tested as root)"
	wrun -- true
	local parent
	parent=$(head -n 1 "$(latest_log)" | grep -oE '"memory":\{[^}]*\}' | sed -nE 's/.* below ([^":]*).*/\1/p')
	[[ -n $parent && -d $parent ]] || skip "no memory cgroup in force here"
	local old="$parent/warden-20000101T000000Z-00000000" new="$parent/warden-20000101T000000Z-00000001"
	mkdir "$old" "$new" || fatal "could not make cgroups in $parent"
	touch -d '2 minutes ago' "$old"
	wrun -- true
	assert_rc 0
	local left=0
	[[ -d $new ]] || fail "a recent cgroup $new was removed"
	rmdir "$new" 2>/dev/null
	[[ -d $old ]] && { left=1; rmdir "$old"; }
	((left == 0)) || fail "the stale cgroup $old is left behind"
}

# json_get JSON EXPR: the value of a Python expression on the parsed JSON j
# ("" for None).
json_get() {
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); v = eval(sys.argv[2]); print("" if v is None else v)' "$1" "$2"
}

# memory_room DIR FILE: MemTotal, or the lowest memory limit (FILE:
# memory.max or memory.limit_in_bytes) of DIR and the cgroups above it, in
# bytes, as warden works it out (read here from the kernel's files).
memory_room() {
	local dir=$1 file=$2 room v
	room=$(($(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024))
	while [[ -r $dir/$file ]]; do
		v=$(<"$dir/$file")
		[[ $v =~ ^[0-9]+$ ]] && ((v < 1 << 60 && v < room)) && room=$v
		dir=${dir%/*}
	done
	echo "$room"
}

# memory_default: the default memory limit in policy show (no `limit
# memory` line) into MEM (its JSON); fails unless it is 50%.
memory_default() {
	have python3 || skip 'python3 not installed'
	wardenc policy show
	assert_rc 0 'policy show'
	MEM=$(json_get "$OUT" 'json.dumps(j["limits"]["memory"])')
	note "policy show: memory $MEM"
	[[ $(json_get "$MEM" 'j["value"]') == 50% ]] || fail "policy show: the default memory limit is not 50%: $MEM"
}

# No `limit memory` line where no cgroup is usable (unprivileged without
# delegation): policy show says the default is not set and why, and a
# session runs without it, with no note.
test_limits_memory_default_none() {
	memory_default
	[[ $(json_get "$MEM" 'j.get("by")') == cgroup ]] &&
		skip "a cgroup is usable for memory here: test_limits_memory_default"
	is_root && fail "as root the default memory limit is not in force: $MEM"
	[[ -n $(json_get "$MEM" 'j.get("why")') && $MEM == *'"by": null'* ]] ||
		fail "policy show: the default memory limit neither in force nor said why: $MEM"
	wrun -- true
	assert_rc 0 'a session where the default memory limit cannot be set'
	[[ $ERR != *'not enforced'* ]] || fail "a note for the default memory limit: $(excerpt "$ERR")"
	[[ -z $(limits_by memory) ]] || fail "session.start: memory by '$(limits_by memory)' where policy show said none"
}

# No `limit memory` line where a cgroup is usable (root, or a delegated
# cgroup v2): the built-in default, 50% of what the host has (MemTotal, or a
# lower limit of the cgroups above the session's), said by policy show,
# written to the session's cgroup (read from the kernel's file while it
# runs), and in session.start; a share past which dd is killed and the
# limit reported; `limit memory unlimited` turns the default off.
test_limits_memory_default() {
	memory_default
	local mem=$MEM
	if [[ $(json_get "$mem" 'j.get("by")') != cgroup ]]; then
		is_root && fail "as root the default memory limit is not in force: $mem"
		skip "no usable cgroup for memory here: $(json_get "$mem" 'j.get("why")')"
	fi
	# what the kernel's files say the share is
	local detail parent file room want inforce
	detail=$(json_get "$mem" 'j["detail"]')
	parent=$(sed -nE 's/.* below (.*): [0-9]+[KMGT]?, 50% of .*/\1/p' <<<"$detail")
	[[ -d $parent ]] || fatal "policy show names no parent cgroup: $detail"
	file=memory.limit_in_bytes
	[[ $detail == *'of a cgroup v2 '* ]] && file=memory.max
	room=$(memory_room "$parent" "$file")
	want=$((room / 1024 * 50 / 100 * 1024 / 1048576 * 1048576))
	inforce=$(json_get "$mem" 'j["in_force"]')
	note "MemTotal or the cgroups' limit: $room; 50%: $want; policy show: $inforce"
	[[ $inforce == "$((want >> 20))M" || $inforce == "$((want >> 30))G" && $((want % (1 << 30))) == 0 ]] ||
		fail "policy show: in force $inforce, 50% of $room is $want bytes"

	# a session: the share written to its cgroup
	warden_bg "$T_TMP/bg.out" -- sleep 2
	local i log id got=''
	for ((i = 0; i < 100; i++)); do
		log=$(latest_log)
		id=$(basename "${log:-x}" .jsonl)
		# (the cgroup is made, then its limit written: read until it is)
		[[ -n $log && -r $parent/warden-$id/$file ]] && got=$(<"$parent/warden-$id/$file") &&
			[[ $got == "$want" ]] && break
		sleep 0.05
	done
	wait "$TPID"
	[[ $got == "$want" ]] || fail "the session's $parent/warden-$id/$file is '$got', want $want"
	[[ $(limits_by memory) == cgroup ]] || fail "session.start: memory by '$(limits_by memory)'"
	head -n 1 "$log" | matches -F '"share":"50%"' || fail "session.start does not say the share: $(head -c 600 "$log")"

	# a smaller share, reached: dd killed (v2: the whole sandbox), reported
	printf 'limit memory 1%%\n' >"$T_TMP/one.profile"
	wardenc policy show --profile "$T_TMP/one.profile"
	inforce=$(json_get "$OUT" 'j["limits"]["memory"].get("in_force")')
	[[ -n $inforce ]] || fatal "policy show: limit memory 1% not in force: $(excerpt "$OUT")"
	wrun --profile "$T_TMP/one.profile" -- sh -c "dd if=/dev/zero of=/dev/null bs=$(((want / 50 >> 20) + 64))M count=1 2>/dev/null; echo dd=\$?"
	if [[ $file == memory.max ]]; then
		assert_rc 137 "the sandbox killed at limit memory 1% ($inforce)"
	else
		assert_out_line 'dd=137' "dd killed at limit memory 1% ($inforce)"
	fi
	limits_events memory | grep -F "\"limit\":\"$inforce\"" >/dev/null ||
		fail "no limit event of kind memory at $inforce in $(latest_log)"
	assert_err_match "limit memory $inforce: the sandbox reached its memory limit" 'the summary names the limit'

	# turned off
	printf 'limit memory unlimited\n' >"$T_TMP/off.profile"
	wardenc policy show --profile "$T_TMP/off.profile"
	[[ $(json_get "$OUT" 'json.dumps(j["limits"]["memory"], sort_keys=True)') == '{"origin": "'"$T_TMP"'/off.profile:1", "value": "unlimited"}' ]] ||
		fail "policy show: limit memory unlimited: $(excerpt "$OUT")"
	wrun --profile "$T_TMP/off.profile" -- true
	assert_rc 0 'a session with limit memory unlimited'
	[[ -z $(limits_by memory) ]] || fail "limit memory unlimited: the session's memory is by '$(limits_by memory)'"
}
