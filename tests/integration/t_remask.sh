# t_remask.sh - masks and protections that follow what the host replaces
# during a session (src/workspace/wswatch.c on the host, src/sandbox/remask.c
# inside): an editor saving .env by rename, git rewriting .git/config by
# rename; each an `alert` (rule workspace.replaced). A secret name the host
# makes during the session masked (a tool writing .env.production, a tree
# moved in; rule workspace.secret_created); the agent's own left to it.
# A key the host writes into a certificate file read as a copy does not
# come in. And the race: the host renaming .env over and over while the
# agent reads it, the worst case reported.
# shellcheck shell=bash

# remask_session SCRIPT: warden in the background running SCRIPT once the
# host has touched GO in the workspace; its output in T_TMP/rs.out.
remask_session() {
	warden_bg "$T_TMP/rs.out" --profile "$(no_detect_actions)" -- sh -c "while [ ! -e GO ]; do sleep 0.05; done; $1"
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
		grep -F "\"path\":\"$p\"" <<<"$OUT" | grep -F '"rule":"workspace.replaced"' >/dev/null ||
			fail "no workspace.replaced alert for $p: $(excerpt "$OUT")"
	done
}

# A *.pem of certificates alone is read inside as a copy made at the start
# (src/workspace/certcopy.c): a private key the host then writes into that
# file in place does not come in, and one it renames over it is masked
# whole, with its alert, as any secret name the host replaces.
test_remask_certificates_rewritten() {
	have openssl || skip 'openssl not installed'
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/k.pem" \
		-out "$T_TMP/c.pem" -subj '/CN=warden remask' -days 2 2>/dev/null || fatal 'openssl req failed'
	cp "$T_TMP/c.pem" inplace.pem && cp "$T_TMP/c.pem" renamed.pem
	remask_session 'for f in inplace.pem renamed.pem; do cat "$f"; echo "$f=$?"; done'
	cat "$T_TMP/k.pem" >>inplace.pem
	cat "$T_TMP/c.pem" "$T_TMP/k.pem" >renamed.new && mv renamed.new renamed.pem
	sleep 0.5
	touch GO
	remask_wait
	assert_rc 0
	assert_out_lacks 'PRIVATE KEY' 'a key the host wrote into a certificate file read inside'
	assert_out_line 'inplace.pem=0' 'the copy made at the start still read'
	assert_out_has "$(sed -n 2p "$T_TMP/c.pem")" 'the certificate read inside'
	assert_out_line 'renamed.pem=1' 'the file renamed over it unreadable'
	wardenc log show --event alert --json
	grep -F '"path":"renamed.pem"' <<<"$OUT" | matches -F '"rule":"workspace.replaced"' ||
		fail "no workspace.replaced alert for renamed.pem: $(excerpt "$OUT")"
}

# A tool on the host writes a new secret during the session: .env.production
# in place, a new directory tree with a .env at depth made at once (mkdir
# -p), a tree moved in from elsewhere, and a credential inside .git.
test_remask_host_creates() {
	have git || skip 'git not installed'
	git init -q . || fatal 'git init failed'
	mkdir -p "$T_TMP/elsewhere/conf" && echo MOVED-SECRET >"$T_TMP/elsewhere/conf/prod.key"
	remask_session 'for f in .env.production deep/a/b/c/.env moved/conf/prod.key .git/.git-credentials; do
			cat "$f"; echo "$f=$?"; done; echo notsecret >deep/a/plain && cat deep/a/plain'
	echo NEW-PROD >.env.production
	mkdir -p deep/a/b/c && echo NEW-DEEP >deep/a/b/c/.env
	mv "$T_TMP/elsewhere" moved
	echo 'https://user:NEW-GITCRED@host' >.git/.git-credentials
	sleep 0.5
	touch GO
	remask_wait
	assert_rc 0
	local p
	for p in NEW-PROD NEW-DEEP MOVED-SECRET NEW-GITCRED; do
		assert_out_lacks "$p" "a secret the host made during the session read inside"
	done
	for p in .env.production deep/a/b/c/.env moved/conf/prod.key .git/.git-credentials; do
		assert_out_line "$p=1" "$p unreadable"
	done
	assert_out_line notsecret 'a plain file in the new tree'
	wardenc log show --event alert --json
	for p in .env.production deep/a/b/c/.env moved/conf/prod.key .git/.git-credentials; do
		grep -F "\"path\":\"$p\"" <<<"$OUT" | grep -F '"rule":"workspace.secret_created"' >/dev/null ||
			fail "no workspace.secret_created alert for $p: $(excerpt "$OUT")"
	done
}

# The agent's own new secret-named files stay its own: the supervisor notes
# the secret names the sandbox makes before it makes them (src/sandbox/
# wsmade.h), so the watch leaves them readable and writable, with no alert:
# a copy from a template (.env.example, which the default leaves readable),
# a redirection, an editor's save by rename, a key in a new directory.
test_remask_agent_own_secret() {
	echo TEMPLATE >.env.example
	wrun -- sh -c 'cp .env.example .env; echo LOCAL > .env.local;
		echo SAVED > .env.swp && mv .env.swp .env.staging;
		mkdir -p certs && echo KEY > certs/server.key; ln -s .env .env.link;
		sleep 1; for f in .env .env.local .env.staging certs/server.key; do cat "$f"; echo "$f=$?"; done
		echo MORE >> .env; echo "append=$?"; cat .env; echo other > notes.txt; cat notes.txt'
	assert_rc 0
	local f
	for f in TEMPLATE LOCAL SAVED KEY MORE other; do
		assert_out_line "$f" "the agent's own file read back ($f)"
	done
	for f in .env .env.local .env.staging certs/server.key; do
		assert_out_line "$f=0" "the agent's own $f readable"
	done
	assert_out_line 'append=0' "the agent's own .env writable"
	wardenc log show --event alert --json
	assert_out_lacks 'workspace.secret_created' "an alert for the agent's own file"
}

# A directory holding secrets masked at the start, renamed by the agent
# (`mv config config.old`): the secrets stay masked under the new name (the
# mount moves with them) and no alert says the host made a secret (it said
# so for each, 10 risk points apiece, blaming the host for the agent's
# rename); a secret the host writes there afterwards still is one.
test_remask_masked_dir_renamed() {
	mkdir -p conf/deep
	echo HIDDEN >conf/.env
	echo HIDDEN2 >conf/deep/server.key
	warden_bg "$T_TMP/bg.out" -- sh -c 'mv conf conf2; echo moved; while [ ! -e go ]; do sleep 0.05; done
		for f in conf2/.env conf2/deep/server.key conf2/.env.host; do cat "$f" 2>/dev/null; echo "$f=$?"; done'
	wait_for "$T_TMP/bg.out" '^moved' 20 || fatal "no rename: $(<"$T_TMP/bg.out.err")"
	sleep 0.5
	echo HOSTMADE >conf2/.env.host
	sleep 0.5
	touch go
	wait "$TPID"
	OUT=$(<"$T_TMP/bg.out")
	assert_out_lacks HIDDEN 'a masked secret read after its directory moved'
	assert_out_lacks HOSTMADE "the host's new secret read"
	local f
	for f in conf2/.env conf2/deep/server.key conf2/.env.host; do
		assert_out_match "^$f=[1-9]" "$f unreadable"
	done
	local alerts
	alerts=$(grep -F '"rule":"workspace.secret_created"' "$(latest_log)")
	grep -F '"path":"conf2/.env.host"' <<<"$alerts" >/dev/null || fail "no alert for the host's new secret: $(excerpt "$alerts")"
	grep -E '"path":"conf2/(\.env|deep/server\.key)"' <<<"$alerts" >/dev/null &&
		fail "the moved secrets alerted as the host's: $(excerpt "$alerts")"
	return 0
}

# In one session the host writes secrets (a tool writing .env.production,
# sub/.env in a directory there at start) while the agent writes its own
# (.env, .env.local): the host's are unreadable inside, each with an alert,
# the agent's stay readable and unannounced; and the host's editor saving
# over the agent's .env.local by rename makes it the host's: masked.
test_remask_host_and_agent() {
	mkdir sub && echo TEMPLATE >env.template
	remask_session 'cp env.template .env; echo MINE > .env.local; touch MADE;
		while [ ! -e GO2 ]; do sleep 0.05; done
		for f in .env.production sub/.env .env .env.local; do cat "$f"; echo "$f=$?"; done
		echo MORE >> .env; echo "append=$?"'
	touch GO
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -e MADE ]] && break
		sleep 0.05
	done
	[[ -e MADE ]] || fatal 'the agent did not make its files'
	echo HOST-PROD >.env.production
	echo HOST-SUB >sub/.env
	echo HOST-LOCAL >.env.local.new && mv .env.local.new .env.local
	sleep 0.5
	touch GO2
	remask_wait
	assert_rc 0
	assert_out_lacks HOST- 'a secret the host wrote during the session read inside'
	assert_out_line '.env.production=1' 'the host'"'"'s .env.production unreadable'
	assert_out_line 'sub/.env=1' 'the host'"'"'s sub/.env unreadable'
	assert_out_line '.env.local=1' 'the agent'"'"'s .env.local, replaced by the host, unreadable'
	assert_out_line TEMPLATE 'the agent'"'"'s own .env readable'
	assert_out_line '.env=0' 'the agent'"'"'s own .env readable'
	assert_out_line 'append=0' 'the agent'"'"'s own .env writable'
	wardenc log show --event alert --json
	local p
	for p in .env.production sub/.env .env.local; do
		grep -F "\"path\":\"$p\"" <<<"$OUT" | grep -F '"rule":"workspace.secret_created"' >/dev/null ||
			fail "no workspace.secret_created alert for $p: $(excerpt "$OUT")"
	done
	grep -F '"path":".env"' <<<"$OUT" | grep -F 'secret_created' >/dev/null &&
		fail "an alert for the agent's own .env: $(excerpt "$OUT")"
	true
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

# dgram_receiver PATH OUT: a host tool's unix datagram socket at PATH, what
# it receives written to OUT, in the background.
dgram_receiver() {
	/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
open(sys.argv[2], "w").write("LISTENING\n")
s.settimeout(30)
try:
    while True:
        d = s.recv(100); open(sys.argv[2], "a").write("GOT %r\n" % d)
except OSError:
    pass' "$1" "$2" &
	bg_track $!
	wait_for "$2" '^LISTENING' 5 || fatal "the host's datagram socket $1 did not start"
}

# A host tool's unix datagram socket in the workspace, there at start or
# bound on the host during the session: a datagram sent to it from inside
# with sendmsg or sendmmsg (an address seccomp cannot see) never reaches
# it, because the socket is masked (a `workspace.host_socket` alert for the
# new one); connect and sendto are refused with EPERM as before. A socket
# the agent binds in the workspace works.
test_remask_host_sockets() {
	[[ -x /usr/bin/python3 ]] || skip '/usr/bin/python3 not installed'
	mkdir sub
	dgram_receiver "$WS/start.dgram" "$T_TMP/start.out"
	remask_session 'for s in start.dgram sub/new.dgram; do for how in sendmsg sendmmsg; do
			echo "$how $s: $(./wprobe $how $s)"; done; done
		/usr/bin/python3 -c "
import socket
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for p in (\"start.dgram\", \"sub/new.dgram\"):
    try:
        c.sendto(b\"x\", p); print(\"sendto\", p, \"sent\")
    except OSError as e:
        print(\"sendto\", p, e.errno)
r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind(\"own.dgram\")
import time; time.sleep(1)
print(\"own\", c.sendto(b\"mine\", \"own.dgram\"), r.recv(10).decode())"'
	dgram_receiver "$WS/sub/new.dgram" "$T_TMP/new.out"
	sleep 0.5
	touch GO
	remask_wait
	assert_rc 0
	local s how
	for s in start.dgram sub/new.dgram; do
		for how in sendmsg sendmmsg; do
			assert_out_match "^$how $s: DENIED " "$how to the host's $s refused"
		done
		assert_out_line "sendto $s 1" "sendto the host's $s: EPERM"
	done
	assert_out_line 'own 4 mine' 'a socket the agent bound in the workspace'
	grep -q GOT "$T_TMP/start.out" && fail "the host's start.dgram got a datagram: $(<"$T_TMP/start.out")"
	grep -q GOT "$T_TMP/new.out" && fail "the host's sub/new.dgram got a datagram: $(<"$T_TMP/new.out")"
	wardenc log show --event alert --json
	grep -F '"path":"sub/new.dgram"' <<<"$OUT" | grep -F '"rule":"workspace.host_socket"' >/dev/null ||
		fail "no workspace.host_socket alert for sub/new.dgram: $(excerpt "$OUT")"
	grep -F '"path":"own.dgram"' <<<"$OUT" && fail "an alert for the agent's own socket"
	wardenc log show --event net --json
	grep -q '"method":"unix".*"path":"sub/new.dgram"' <<<"${OUT// /}" ||
		fail "no net event for the sendto to sub/new.dgram: $(excerpt "$OUT")"
	true
}

test_remask_watch_limit() {
	# Past the kernel's limit of inotify watches for the user, the
	# directories left unwatched (whose files the host replaces are not
	# masked or protected again) are counted and said: a line on stderr and
	# an alert (rule workspace.unwatched), at the start and once more when
	# the session makes more. The limit is a user namespace's
	# (user.max_inotify_watches, 40) around warden, which runs in a user
	# namespace below it as an ordinary user.
	have unshare || skip 'unshare not installed'
	unshare -Ur sh -c 'echo 40 > /proc/sys/user/max_inotify_watches' 2>/dev/null ||
		skip 'cannot lower the inotify limit in a user namespace here'
	mkdir -p deep/{1..100}
	local uid gid
	uid=$(id -u) gid=$(id -g)
	((uid != 0)) || uid=1000 gid=1000 # not root below either way
	timeout -k 5 "$WARDEN_TIMEOUT" unshare -Ur sh -c 'echo 40 > /proc/sys/user/max_inotify_watches &&
		exec unshare -U --map-user="$1" --map-group="$2" "$0" run -- sh -c "mkdir -p made/1 made/2 made/3 && sleep 1 && echo ran"' \
		"$WARDEN" "$uid" "$gid" </dev/null >"$T_TMP/wl.out" 2>"$T_TMP/wl.err"
	RC=$?
	OUT=$(<"$T_TMP/wl.out") ERR=$(<"$T_TMP/wl.err")
	printf -- '-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$RC" "$OUT" "$ERR"
	assert_rc 0
	assert_out_has ran
	local said n
	said=$(grep -o '[0-9]* directories of the workspace are not watched (the kernel.s limit of inotify watches' <<<"$ERR")
	n=$(head -n 1 <<<"$said" | cut -d' ' -f1)
	[[ -n $n ]] || fatal "no word on stderr of the directories not watched: $(excerpt "$ERR")"
	((n >= 50 && n <= 102)) || fail "stderr counts $n directories not watched, of 103 with 40 watches"
	[[ $(wc -l <<<"$said") == 2 ]] || fail "not said twice (at the start, and for the session's own): $(excerpt "$said")"
	wardenc log show --event alert --json
	local alerts
	alerts=$(grep -F '"rule":"workspace.unwatched"' <<<"$OUT")
	[[ $(grep -c . <<<"$alerts") == 2 ]] || fail "not two workspace.unwatched alerts: $(excerpt "$OUT")"
	grep -qF "\"action\":\"$n directories not watched: the kernel's limit" <<<"$alerts" ||
		fail "the alert does not give the count $n: $(excerpt "$alerts")"
}
