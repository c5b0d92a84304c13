# t_hostid.sh - as root, the agent's own host identity (hostid.h): the
# sandbox's processes run as a uid from warden's pool, never root; what the
# agent makes in a workspace belongs to the workspace's owner on the host
# (an idmapped mount), also when that is another user with a 0700 checkout;
# a setuid bit is refused and nothing setuid-root appears; two sessions at
# once get two identities; an identity goes back to the pool when its
# session ends, also when warden is killed with SIGKILL; an id the name
# service gives to a user is passed over.
# shellcheck shell=bash

# shellcheck disable=SC2012 # warden's own file names
hostid_logs() { ls -t "$HOME/.local/state/warden/"*.jsonl 2>/dev/null; }

# hostid_uid FILE: the host uid session.start of FILE names ("" none).
hostid_uid() {
	head -n 1 "$1" | grep -oE '"host_id":\{"uid":[0-9]+' | grep -oE '[0-9]+$'
}

# hostid_holders UID: the processes that have the lock file of UID open.
hostid_holders() {
	local f
	for f in /proc/[0-9]*/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) == "/run/warden/ids/$1" ]] && { f=${f#/proc/}; echo "${f%%/*}"; }
	done | sort -u
}

# hostid_owned_ws: a workspace owned by uid 4321 (no passwd entry), mode
# 0700 as a build user's checkout is, holding a file of its owner; cd there.
hostid_owned_ws() {
	local ws=$T_TMP/owned-ws
	mkdir -p "$ws/src"
	echo 'int main(void) { return 0; }' >"$ws/src/main.c"
	echo 'theirs' >"$ws/README"
	chown -R 4321:4321 "$ws"
	chmod 0700 "$ws" "$ws/src"
	chmod 0600 "$ws/README"
	cd "$ws" || fatal "cd $ws"
}

test_hostid_owner() {
	is_root || skip "the pool of host identities is for warden run as root"
	hostid_owned_ws
	wsh 'id -u; id -g; cat README; echo made >new.txt; mkdir newdir; echo x >newdir/f;
	     ls -ln new.txt | awk "{print \$3\":\"\$4}"; grep -E "^Uid" /proc/self/status' \
		--profile "$(no_detect_actions)"
	assert_rc 0 'a 0700 workspace of another user starts'
	assert_out_line '1000' 'the agent is uid 1000 inside'
	assert_out_line 'theirs' "the owner's 0600 file is readable inside"
	assert_out_line '1000:1000' "the agent's new file is its own inside"
	local f
	f=$(hostid_logs | head -n 1)
	local x
	x=$(hostid_uid "$f")
	[[ -n $x ]] || fatal "session.start names no host_id: $(excerpt "$(head -c 600 "$f")")"
	((x >= 65536)) || fail "the host uid $x is not from the pool"
	for p in new.txt newdir newdir/f; do
		[[ $(stat -c %u:%g "$p") == 4321:4321 ]] ||
			fail "$p is owned by $(stat -c %u:%g "$p") on the host, not by the workspace's owner 4321:4321"
	done
	[[ $(stat -c %u README) == 4321 ]] || fail "README changed owner"
}

# A workspace on a file system that takes no idmapped mount (ramfs here;
# FUSE, NFS and SMB mostly): as root the session refuses to start, naming
# the file system and what to do, where it said "Invalid argument".
test_hostid_no_idmap_fs() {
	is_root || skip "the pool of host identities is for warden run as root"
	local r=$T_TMP/ramfs
	mkdir -p "$r"
	mount -t ramfs ramfs "$r" 2>/dev/null || skip 'cannot mount a ramfs here'
	mkdir "$r/proj"
	(cd "$r/proj" && wsh 'touch ran'; echo "$RC" >"$T_TMP/rc")
	RC=$(<"$T_TMP/rc") OUT=$(<"$T_TMP/.out") ERR=$(<"$T_TMP/.err")
	[[ ! -e $r/proj/ran ]] || fail 'the command ran'
	umount "$r"
	assert_rc 125 'a workspace on ramfs as root'
	assert_err_match "$r/proj is on a file system that takes no idmapped mount \\(ramfs\\)"
	assert_err_match 'Run warden as a user, not root'
	grep -q '"event":"session.end","exit":125,"error":"host identities: .*takes no idmapped mount (ramfs)' \
		"$(hostid_logs | head -n 1)" || fail 'session.end does not say why'
}

test_hostid_setuid() {
	is_root || skip "the pool of host identities is for warden run as root"
	hostid_owned_ws
	wsh 'cp /bin/true ./t; chmod 4755 ./t; echo "chmod=$?"; ls -ln t' --profile "$(no_detect_actions)"
	assert_out_line 'chmod=1' 'chmod u+s is refused inside'
	local mode owner
	mode=$(stat -c %a t)
	owner=$(stat -c %u t)
	[[ $owner != 0 ]] || fail "the agent's file is owned by root on the host"
	((8#$mode & 8#6000)) && fail "the agent's file has mode $mode on the host"
	[[ $owner == 4321 ]] || fail "the agent's file is owned by $owner, not the workspace's owner"
}

test_hostid_processes() {
	is_root || skip "the pool of host identities is for warden run as root"
	warden_bg "$T_TMP/a.out" -- sh -c 'echo started; sleep 20'
	wait_for "$T_TMP/a.out" started 15 || fatal "the session did not start: $(excerpt "$(cat "$T_TMP/a.out.err")")"
	local f x
	f=$(hostid_logs | head -n 1)
	x=$(hostid_uid "$f")
	[[ -n $x ]] || fatal "session.start names no host_id"
	# every process of the sandbox runs as the pool's uid, none as root
	local sleeper
	sleeper=$(pgrep -u "$x" -x sleep | head -n 1)
	[[ -n $sleeper ]] || fail "no process of uid $x runs the session's sleep"
	if [[ -n $sleeper ]]; then
		local uids
		uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$sleeper/status")
		[[ $uids == "$x $x $x $x" ]] || fail "the sandbox's sleep has uids $uids on the host"
	fi
	# the lock of the identity is held while the session runs
	flock -n "/run/warden/ids/$x" true && fail "the lock of $x is free while its session runs"
	kill "$WPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
}

test_hostid_concurrent() {
	is_root || skip "the pool of host identities is for warden run as root"
	warden_bg "$T_TMP/a.out" -- sh -c 'echo started; sleep 20'
	wait_for "$T_TMP/a.out" started 15 || fatal "the first session did not start"
	local fa xa
	fa=$(hostid_logs | head -n 1)
	xa=$(hostid_uid "$fa")
	wsh 'echo second'
	assert_rc 0
	local fb xb
	fb=$(hostid_logs | head -n 1)
	xb=$(hostid_uid "$fb")
	[[ $fa != "$fb" ]] || fail "no second session log"
	[[ -n $xa && -n $xb ]] || fatal "a session.start names no host_id ($xa, $xb)"
	[[ $xa != "$xb" ]] || fail "two sessions at once share the host uid $xa"
	kill "$WPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
}

test_hostid_kill9() {
	is_root || skip "the pool of host identities is for warden run as root"
	warden_bg "$T_TMP/a.out" -- sh -c 'echo started; sleep 30'
	wait_for "$T_TMP/a.out" started 15 || fatal "the session did not start"
	local f x i
	f=$(hostid_logs | head -n 1)
	x=$(hostid_uid "$f")
	[[ -n $x ]] || fatal "session.start names no host_id"
	pgrep -u "$x" >/dev/null || fail "no process runs as $x"
	local killed
	killed=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", $1 * hz }' /proc/uptime)
	kill -9 "$WPID"
	wait "$TPID" 2>/dev/null
	# the sandbox dies with its supervisor, and the identity is free again
	for ((i = 0; i < 100; i++)); do
		pgrep -u "$x" >/dev/null || break
		sleep 0.05
	done
	pgrep -u "$x" >/dev/null && fail "processes of uid $x outlive warden killed with SIGKILL"
	# free again: unlocked, or locked only by a process started after the
	# kill (another session on this machine that took it since)
	if ! flock -n "/run/warden/ids/$x" true; then
		local h start
		for h in $(hostid_holders "$x"); do
			start=$(awk '{ print $22 }' "/proc/$h/stat" 2>/dev/null)
			[[ -n $start ]] && ((start < killed)) &&
				fail "the identity $x is still held by process $h, older than the kill"
		done
	fi
	# and the next session starts
	wsh 'true'
	assert_rc 0 'a session after the kill'
}

# hostid_session WHAT: a session of `true`; HS_UID: the host uid its
# session.start names.
hostid_session() {
	wsh 'true'
	assert_rc 0 "$1"
	HS_UID=$(hostid_uid "$(hostid_logs | head -n 1)")
}

# hostid_dropin UID on|off: a systemd userdb drop-in giving UID to a user
# "wtaken" (the name service reads those with nss-systemd), or none; only
# the test's own two files are touched.
hostid_dropin() {
	rm -f /etc/userdb/wtaken.user "/etc/userdb/$1.user"
	[[ $2 == on ]] || return 0
	printf '{"userName":"wtaken","uid":%d,"gid":%d,"disposition":"regular"}\n' "$1" "$1" \
		>/etc/userdb/wtaken.user
	ln -s wtaken.user "/etc/userdb/$1.user"
}

# An id the name service gives to a user is passed over; its "no entry"
# for an id stands (kept as the lock file's mtime) until /etc/passwd (or
# group, nsswitch.conf) changes, or while the time it was asked is not
# in the future (the five minutes it stands at most: the unit test).
test_hostid_taken() {
	is_root || skip "the pool of host identities is for warden run as root"
	local x y made=0
	hostid_session 'a first session'
	x=$HS_UID
	[[ -n $x ]] || fatal "session.start names no host_id"
	[[ ! -e /etc/userdb/wtaken.user && ! -e /etc/userdb/$x.user ]] ||
		skip "/etc/userdb has a wtaken.user or $x.user of its own"
	[[ -e /etc/userdb ]] || { mkdir /etc/userdb && made=1; }
	# shellcheck disable=SC2064 # x and made are known now
	trap "rm -f /etc/userdb/wtaken.user /etc/userdb/$x.user; ((!$made)) || rmdir /etc/userdb" EXIT
	hostid_dropin "$x" on
	getent passwd "$x" >/dev/null ||
		skip "the name service does not read systemd userdb drop-ins (no nss-systemd)"
	hostid_session 'a session while the answer stands'
	y=$HS_UID
	[[ $y == "$x" ]] || fail "the name service was asked again at once ($x, then $y)"
	touch /etc/passwd
	hostid_session 'a session after /etc/passwd changed'
	y=$HS_UID
	[[ -n $y && $y != "$x" ]] || fail "the agent got $x, the uid of user wtaken, after /etc/passwd changed"
	hostid_dropin "$x" off
	hostid_session 'a session once the user is gone'
	y=$HS_UID
	[[ $y == "$x" ]] || fail "$x, free again, was not the agent's (got $y)"
	hostid_dropin "$x" on
	touch -m -d '+1 hour' "/run/warden/ids/$x"
	hostid_session 'a session after the clock went back'
	y=$HS_UID
	[[ -n $y && $y != "$x" ]] ||
		fail "the agent got $x, the uid of user wtaken, by an answer dated in the future"
}

test_hostid_unprivileged_none() {
	is_root && skip "an unprivileged run maps the invoking user (tested as that user)"
	wsh 'id -u'
	assert_out_line '1000'
	local f
	f=$(hostid_logs | head -n 1)
	[[ -z $(hostid_uid "$f") ]] || fail "an unprivileged session names a host_id"
}
