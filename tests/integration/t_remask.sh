# t_remask.sh - masks and protections that follow what the host replaces
# during a session (src/sandbox/wswatch.c on the host, src/sandbox/remask.c
# inside): an editor saving .env by rename, git rewriting .git/config by
# rename; each an `alert` (rule workspace.replaced). The agent's own new
# secret-named file stays its own. And the race: the host renaming .env
# over and over while the agent reads it, the worst case reported.
# shellcheck shell=bash

# remask_session SCRIPT: warden in the background running SCRIPT once the
# host has touched GO in the workspace; its output in T_TMP/rs.out.
remask_session() {
	warden_bg "$T_TMP/rs.out" -- sh -c "while [ ! -e GO ]; do sleep 0.05; done; $1"
	sleep 0.3 # the watch is up once the command runs; its first exec waits for it
}

remask_wait() {
	local i
	for ((i = 0; i < 400; i++)); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	wait "$TPID" 2>/dev/null
	RC=$?
	OUT=$(<"$T_TMP/rs.out")
	ERR=$(<"$T_TMP/rs.out.err")
	printf '%s\n--- stderr\n%s\n' "$OUT" "$ERR"
}

test_remask_host_replaces() {
	have git || skip 'git not installed'
	git init -q . || fatal 'git init failed'
	echo OLD-SECRET >.env
	mkdir sub && echo OLD-SUB >sub/.env
	remask_session 'cat .env; echo "env=$?"; cat sub/.env; echo "sub=$?";
		echo "[core] fsmonitor = touch /tmp/x" >> .git/config; echo "cfg=$?"; true'
	# as an editor saves, and as git rewrites its config
	echo NEW-SECRET >.env.swp && mv .env.swp .env
	echo NEW-SUB >sub/.env.new && mv sub/.env.new sub/.env
	cp .git/config .git/config.lock && mv .git/config.lock .git/config
	sleep 0.5
	touch GO
	remask_wait
	assert_rc 0
	assert_out_lacks NEW-SECRET 'the replaced .env read inside'
	assert_out_lacks NEW-SUB 'the replaced sub/.env read inside'
	assert_out_line 'env=1' 'the new .env unreadable'
	assert_out_line 'sub=1' 'the new sub/.env unreadable'
	assert_out_match '^cfg=[12]$' 'the new .git/config not writable'
	grep -q fsmonitor .git/config && fail 'the agent wrote the host'"'"'s new .git/config'
	wardenc log show --event alert --json
	local p
	for p in .env sub/.env .git/config; do
		grep -F "\"path\":\"$p\"" <<<"$OUT" | grep -qF '"rule":"workspace.replaced"' ||
			fail "no workspace.replaced alert for $p: $(excerpt "$OUT")"
	done
}

test_remask_agent_own_file() {
	# a secret-named file the agent makes stays readable to it
	wrun -- sh -c 'echo mine > .env && cat .env && echo k > tls.key && cat tls.key'
	assert_rc 0
	assert_out_line mine
	assert_out_line k
}

# The host renames a new .env over the old one 1,000 times while the agent
# reads .env as fast as it can: reads that got a new value are the window
# between the host's rename and the new mask. The worst case is reported;
# the steady state (the last .env, read after the host stopped) must be
# masked.
test_remask_race() {
	# shellcheck disable=SC2034 # read by warden_bg (lib.sh)
	local WARDEN_TIMEOUT=150
	echo SECRET-0 >.env
	# the reader: the shell's own read, no process per read
	remask_session 'n=0; leaks=0; while [ ! -e STOP ]; do
			v=; if read -r v < .env 2>/dev/null; then case $v in SECRET-0) ;; *) leaks=$((leaks+1)); esac; fi
			n=$((n+1)); done
		echo "reads=$n leaks=$leaks"; cat .env 2>/dev/null; echo "last=$?"'
	touch GO
	local i t0=$SECONDS
	if [[ -x /usr/bin/python3 ]]; then
		/usr/bin/python3 -c '
import os
for i in range(1, 1001):
    with open(".env.new", "w") as f:
        f.write("SECRET-%d\n" % i)
    os.rename(".env.new", ".env")'
	else
		for ((i = 1; i <= 1000; i++)); do
			echo "SECRET-$i" >.env.new && mv .env.new .env
		done
	fi
	sleep 0.5
	touch STOP
	remask_wait
	assert_rc 0
	assert_out_line 'last=1' 'the last .env, masked'
	local line
	line=$(grep -E '^reads=' <<<"$OUT")
	[[ -n $line ]] || fatal "the reader did not report: $(excerpt "$OUT")"
	note "race: 1000 renames in $((SECONDS - t0)) s; the agent's reads: $line"
	wardenc log show --event alert --json
	[[ $(grep -c '"rule":"workspace.replaced"' <<<"$OUT") == 1 ]] ||
		fail "expected one alert for the path, however often it was replaced: $(excerpt "$OUT")"
}
