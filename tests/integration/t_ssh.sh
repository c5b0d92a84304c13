# t_ssh.sh - SSH keys used, never inside (issue 36, item 2): `warden run
# --ssh-agent` (and the profile's `ssh-agent`) puts a socket inside,
# SSH_AUTH_SOCK pointing at it, that speaks to a host ssh-agent the test
# starts with two keys whose files it then deletes. From inside: `ssh` to a
# real sshd on the host's loopback (an allowed host loopback port) and
# `git push` over SSH succeed with the key named; `ssh-add -L` lists that
# key only; adding, removing all and locking are refused, and so is a
# signature with the key not named; each signature and refusal is an `ssh`
# event. No private key file is inside. Before the session: SSH_AUTH_SOCK
# unset, a regular file, a socket of another user or a dead one: a clear
# error; a host agent that hangs: the client gets a failure within the
# bound, the session goes on. A commit and a tag made inside are signed
# with the agent's key when the host's git signs with SSH; where they
# cannot be, a line says so at the start. Runs as root (sshd logs in as
# root) and unprivileged (sshd runs as the user and logs in as the user).
# Fails on a tree without the agent socket (no --ssh-agent: exit 2).
# shellcheck shell=bash

# ssh_need: the programs, or skip.
ssh_need() {
	local p
	for p in /usr/sbin/sshd ssh ssh-agent ssh-add ssh-keygen "$@"; do
		[[ -x $p ]] || have "$p" || skip "no $p"
	done
}

# ssh_agent_start DIR: a host ssh-agent on DIR/agent.sock holding two keys
# (comments warden-test-a, warden-test-b), their private files deleted.
# Sets SSH_AUTH_SOCK, SSH_AGENT_PID, FP_A, FP_B, PUB_A, PUB_B, KEYLINE (a
# line of key A's private file, to look for inside).
ssh_agent_start() {
	local d=$1 out
	mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -C warden-test-a -f "$d/ka" || fatal 'ssh-keygen a'
	ssh-keygen -q -t ed25519 -N '' -C warden-test-b -f "$d/kb" || fatal 'ssh-keygen b'
	out=$(ssh-agent -s -a "$d/agent.sock") || fatal "ssh-agent: $out"
	eval "$out" >/dev/null
	bg_track "$SSH_AGENT_PID"
	export SSH_AUTH_SOCK SSH_AGENT_PID
	ssh-add -q "$d/ka" "$d/kb" 2>/dev/null || fatal 'ssh-add on the host failed'
	FP_A=$(ssh-keygen -lf "$d/ka.pub" | awk '{ print $2 }')
	FP_B=$(ssh-keygen -lf "$d/kb.pub" | awk '{ print $2 }')
	PUB_A=$(<"$d/ka.pub")
	PUB_B=$(<"$d/kb.pub")
	KEYLINE=$(sed -n 2p "$d/ka")
	rm -f "$d/ka" "$d/kb"
}

# ssh_sshd DIR: an sshd on 127.0.0.1:SSH_PORT (a free high port) with its
# own host key, accepting key A only for this user. Sets SSH_PORT,
# SSHD_LOG, SSH_USER, HOST_FP.
ssh_sshd() {
	local d=$1/sshd try
	mkdir -p "$d"
	ssh-keygen -q -t ed25519 -N '' -C warden-test-host -f "$d/host" || fatal 'ssh-keygen host'
	HOST_FP=$(ssh-keygen -lf "$d/host.pub" | awk '{ print $2 }')
	printf '%s\n' "$PUB_A" >"$d/authorized_keys"
	chmod 0600 "$d/authorized_keys"
	SSH_USER=$(id -un)
	is_root && { mkdir -p /run/sshd && chmod 0755 /run/sshd; }
	SSHD_LOG=$d/log
	for try in 1 2 3 4 5; do
		SSH_PORT=$((20000 + RANDOM % 30000))
		cat >"$d/config" <<EOF
ListenAddress 127.0.0.1:$SSH_PORT
HostKey $d/host
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
LoginGraceTime 20
LogLevel VERBOSE
EOF
		: >"$SSHD_LOG"
		timeout -k 2 120 /usr/sbin/sshd -D -e -f "$d/config" >"$SSHD_LOG" 2>&1 &
		local tpid=$!
		bg_track "$tpid"
		wait_for "$SSHD_LOG" 'Server listening on|Address already in use|rror' 10
		# the runner kills what is tracked with SIGKILL: sshd itself too,
		# or it would outlive its timeout
		bg_track "$(pgrep -P "$tpid" | head -n 1)"
		grep -q 'Server listening on' "$SSHD_LOG" && return 0
	done
	skip "sshd does not start here: $(excerpt "$(<"$SSHD_LOG")")"
}

# The ssh options of every client in these tests: no known hosts to keep.
SSH_OPTS='-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -o LogLevel=ERROR'

# ssh_schema: every line of this test's logs as the schema describes it
# (t_schema.sh's validator), when python3-jsonschema is there.
ssh_schema() {
	python3 -c 'import jsonschema' 2>/dev/null || { note 'no python3-jsonschema: logs not validated'; return 0; }
	sc_validate
	sc_covers ssh
}

# ssh_events: the latest session's ssh events (JSON lines) in SSHEV.
ssh_events() {
	SSHEV=$("$WARDEN" log show --event ssh --json 2>/dev/null)
}

# ssh_event_has JQ-FILTER LABEL: some ssh event satisfies the filter.
ssh_event_has() {
	jq -es "map(select($1)) | length > 0" <<<"$SSHEV" >/dev/null 2>&1 ||
		fail "$2: no ssh event with $1 (events: $(excerpt "$SSHEV"))"
}

test_ssh_agent_login() {
	ssh_need jq
	ssh_agent_start "$T_TMP/ag"
	ssh_sshd "$T_TMP"
	# the server takes key A from the host, without warden
	ssh $SSH_OPTS -F /dev/null -p "$SSH_PORT" "$SSH_USER@127.0.0.1" true ||
		fatal "ssh from the host fails: $(excerpt "$(tail -n 5 "$SSHD_LOG")")"
	wsh "echo \"sock=\$SSH_AUTH_SOCK\"
	     ssh-add -L | sed 's/^/key /'
	     ssh $SSH_OPTS -p $SSH_PORT $SSH_USER@127.0.0.1 echo logged-in-over-ssh; echo \"ssh rc=\$?\"
	     grep -rsF '$KEYLINE' /tmp . >/dev/null; echo \"keyfile rc=\$?\"
	     echo \"home-ssh \$(ls -A ~/.ssh | tr '\\n' ' ')\"" \
		--ssh-agent --ssh-key warden-test-a --allow-net "127.0.0.1:$SSH_PORT"
	assert_rc 0
	assert_out_line 'sock=/.warden/ssh-agent.sock' 'SSH_AUTH_SOCK inside'
	assert_out_line "key $PUB_A" 'ssh-add -L lists the key named'
	assert_out_lacks "$(awk '{ print $2 }' <<<"$PUB_B")" 'key B (not named) is listed'
	[[ $(grep -c '^key ' <<<"$OUT") == 1 ]] || fail "ssh-add -L lists other than one key: $(excerpt "$OUT")"
	assert_out_line 'logged-in-over-ssh' 'the command ran over ssh'
	assert_out_line 'ssh rc=0' 'ssh with the agent key'
	assert_out_line 'keyfile rc=1' 'the private key is nowhere inside'
	# (the decoy and its public half: canary.h; warden's ssh configuration)
	assert_out_line 'home-ssh config id_ed25519 id_ed25519.pub ' 'what ~/.ssh holds'
	grep -q "Accepted publickey for $SSH_USER .*$FP_A" "$SSHD_LOG" ||
		fail "sshd did not accept key A: $(excerpt "$(tail -n 5 "$SSHD_LOG")")"
	ssh_events
	ssh_event_has ".action == \"sign\" and .decision == \"allow\" and .key == \"$FP_A\" and
		.comment == \"warden-test-a\" and .user == \"$SSH_USER\" and .service == \"ssh-connection\" and
		.host_key == \"$HOST_FP\"" 'the signature'
	"$WARDEN" log show --event alert 2>/dev/null | matches canary &&
		fail 'ssh inside opened the decoy key'
	# the host agent still holds both keys
	[[ $(ssh-add -l | grep -c ED25519) == 2 ]] || fail "the host agent lost keys: $(ssh-add -l)"
	ssh_schema
}

test_ssh_agent_git_push() {
	ssh_need git jq
	ssh_agent_start "$T_TMP/ag"
	ssh_sshd "$T_TMP"
	git init -q --bare "$T_TMP/repo.git" || fatal 'git init --bare'
	printf 'ssh-agent %s\n' "$FP_A" >"$T_TMP/ssh.profile"
	wsh "git init -q -b main src && cd src && echo pushed-over-ssh >f &&
	     git add f && git -c user.name=t -c user.email=t@example.invalid commit -qm one &&
	     GIT_SSH_COMMAND=\"ssh $SSH_OPTS\" git push -q ssh://$SSH_USER@127.0.0.1:$SSH_PORT$T_TMP/repo.git main 2>&1
	     echo \"push rc=\$?\"" --profile "$T_TMP/ssh.profile" --allow-net "127.0.0.1:$SSH_PORT"
	assert_out_line 'push rc=0' 'git push over ssh'
	[[ $(git -C "$T_TMP/repo.git" show main:f 2>&1) == pushed-over-ssh ]] ||
		fail "the bare repository does not hold the commit: $(git -C "$T_TMP/repo.git" log --oneline 2>&1)"
	ssh_events
	ssh_event_has ".action == \"sign\" and .decision == \"allow\" and .key == \"$FP_A\"" 'the push signature'
}

# ssh_git_host: the host's git configuration of the signing tests, in
# this test's fake HOME (never the real one): an identity, SSH signing
# of commits and tags with user.signingKey $1; a repository in the
# workspace with one commit made unsigned on the host.
ssh_git_host() {
	unset GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM
	export GIT_CONFIG_NOSYSTEM=1
	printf '[user]\n\tname = Host Person\n\temail = host@example.invalid\n\tsigningKey = %s\n[gpg]\n\tformat = ssh\n[commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n' \
		"$1" >"$HOME/.gitconfig"
	git init -q -b main . && echo a >f && git add f &&
		git -c commit.gpgsign=false commit -qm base || fatal 'git init on the host'
}

# ssh_host_git ARGS...: git as the host runs it on the workspace (a
# repository the sandbox's identity owns read, none of its hooks run)
ssh_host_git() { git -c safe.directory='*' -c core.hooksPath=/dev/null -C "$WS" "$@"; }

# A commit and a tag made inside with --ssh-agent are signed as the
# host's git signs them (gpg.format=ssh, commit.gpgSign, tag.gpgSign,
# user.signingKey a .pub file, then a private key's path with its .pub
# beside it, as `~/...`): warden's ~/.gitconfig carries the public key as
# a key:: literal (no path of the host), the agent signs through warden
# (an ssh event, namespace git), session.start names the key, and
# `git verify-commit` on the host with an allowed-signers file passes.
# Before, the sandbox's ~/.gitconfig had the identity alone and every
# commit inside was silently unsigned.
test_ssh_agent_git_signing() {
	ssh_need git jq
	ssh_agent_start "$T_TMP/ag"
	ssh_git_host "$T_TMP/ag/ka.pub"
	printf 'host@example.invalid %s\n' "$PUB_A" >"$T_TMP/allowed_signers"
	wsh 'echo b >>f && git commit -qam inside && git tag -a -m t v1; echo "commit rc=$?"; cat ~/.gitconfig' \
		--ssh-agent
	assert_rc 0
	assert_out_line 'commit rc=0' 'a signed commit and tag inside'
	assert_out_has "key::$(cut -d' ' -f1,2 <<<"$PUB_A")" 'the key carried as its public text'
	assert_out_lacks "$T_TMP" "a host path in the sandbox's ~/.gitconfig"
	[[ $ERR != *'will not be signed'* ]] || fail "a hint though commits are signed: $(excerpt "$ERR")"
	[[ $(ssh_host_git log -1 --format=%s) == inside ]] || fatal 'the commit made inside is not there'
	ssh_host_git cat-file -p HEAD | matches '^gpgsig ' || fail "the commit made inside is not signed: $(excerpt "$(ssh_host_git cat-file -p HEAD)")"
	ssh_host_git -c gpg.ssh.allowedSignersFile="$T_TMP/allowed_signers" verify-commit HEAD 2>"$T_TMP/verify" ||
		fail "git verify-commit on the host: $(excerpt "$(<"$T_TMP/verify")")"
	ssh_host_git -c gpg.ssh.allowedSignersFile="$T_TMP/allowed_signers" verify-tag v1 2>"$T_TMP/verify" ||
		fail "git verify-tag on the host: $(excerpt "$(<"$T_TMP/verify")")"
	ssh_events
	ssh_event_has ".action == \"sign\" and .decision == \"allow\" and .key == \"$FP_A\" and .namespace == \"git\"" \
		'the commit signature'
	[[ $(jq -s 'map(select(.action == "sign" and .namespace == "git")) | length' <<<"$SSHEV") == 2 ]] ||
		fail "not two git signatures (commit and tag): $(excerpt "$SSHEV")"
	"$WARDEN" log show --event session.start --json 2>/dev/null |
		jq -e ".git_signing.key == \"$FP_A\" and .git_signing.commit and .git_signing.tag" >/dev/null ||
		fail "session.start does not name the signing key: $(excerpt "$("$WARDEN" log show --event session.start --json 2>/dev/null)")"
	# user.signingKey a private key's path (as ~/...): the .pub beside it
	mkdir -p "$HOME/keys" && cp "$T_TMP/ag/ka.pub" "$HOME/keys/sign.pub"
	ssh_git_host '~/keys/sign'
	wsh 'echo c >>f && git commit -qam inside2; echo "commit rc=$?"' --ssh-agent
	assert_out_line 'commit rc=0' 'a signed commit inside (the key by its private path)'
	ssh_host_git -c gpg.ssh.allowedSignersFile="$T_TMP/allowed_signers" verify-commit HEAD 2>"$T_TMP/verify" ||
		fail "git verify-commit on the host (the key by its private path): $(excerpt "$(<"$T_TMP/verify")")"
	ssh_schema
}

# Where the host's git signs commits and the sandbox's cannot, warden says
# so once at the start (and session.start's git_signing says why) and sets
# no signing inside, so that commits succeed unsigned rather than fail:
# SSH signing without --ssh-agent; OpenPGP (gpg.format unset), which needs
# a GnuPG agent; a key the session's agent does not offer (--ssh-key
# naming another); a private key's path with no .pub beside it. Before,
# the commits were unsigned and nothing said so.
test_ssh_git_signing_hints() {
	ssh_need git jq
	ssh_agent_start "$T_TMP/ag"
	ssh_git_host "$T_TMP/ag/ka.pub"
	local cmd='echo x >>f && git commit -qam inside; echo "commit rc=$?"'
	wsh "$cmd"
	assert_out_line 'commit rc=0' 'a commit inside without --ssh-agent'
	assert_err_match 'commits and tags inside will not be signed: .*gpg.format=ssh.*--ssh-agent'
	[[ $(grep -c 'will not be signed' <<<"$ERR") == 1 ]] || fail "not said once: $(excerpt "$ERR")"
	ssh_host_git cat-file -p HEAD | matches '^gpgsig ' && fail 'a signature without the agent?'
	"$WARDEN" log show --event session.start --json 2>/dev/null |
		jq -e '.git_signing.off and (.git_signing.why | test("--ssh-agent"))' >/dev/null ||
		fail "session.start does not say why: $(excerpt "$("$WARDEN" log show --event session.start --json 2>/dev/null)")"
	# the agent, but not the signing key
	wsh "$cmd" --ssh-agent --ssh-key warden-test-b
	assert_out_line 'commit rc=0' 'a commit inside, the key not offered'
	[[ $ERR == *"will not be signed: the session's SSH agent does not offer your signing key $FP_A"* ]] ||
		fail "no hint for the key not offered: $(excerpt "$ERR")"
	# a private key's path with no .pub beside it: nothing derived from it
	ssh_git_host "$T_TMP/ag/kb"
	rm -f "$T_TMP/ag/kb.pub"
	wsh "$cmd" --ssh-agent
	assert_out_line 'commit rc=0' 'a commit inside, the key a private path'
	assert_err_match "will not be signed: user.signingKey names $T_TMP/ag/kb, a private key file, and there is no"
	# OpenPGP
	git config --global --unset gpg.format
	wsh "$cmd; cat ~/.gitconfig" --ssh-agent
	assert_out_line 'commit rc=0' 'a commit inside, OpenPGP signing on the host'
	assert_out_lacks gpgSign 'signing set inside, where it cannot work'
	assert_err_match 'will not be signed: OpenPGP signing \(gpg.format unset\) needs a GnuPG agent'
	ssh_host_git cat-file -p HEAD | matches '^gpgsig ' && fail 'a signature with OpenPGP?'
	if python3 -c 'import jsonschema' 2>/dev/null; then sc_validate; fi
	return 0
}

test_ssh_agent_refusals() {
	ssh_need jq
	ssh_agent_start "$T_TMP/ag"
	ssh-keygen -q -t ed25519 -N '' -C warden-test-new -f "$WS/newkey" || fatal 'ssh-keygen new'
	printf '%s\n' "$PUB_B" >"$WS/kb.pub"
	# a signature request with key B, which the session does not name
	cat >"$WS/signb.py" <<'EOF'
import base64, os, socket, struct
blob = base64.b64decode(open('kb.pub').read().split()[1])
s = lambda b: struct.pack('>I', len(b)) + b
sk = socket.socket(socket.AF_UNIX)
sk.connect(os.environ['SSH_AUTH_SOCK'])
sk.sendall(s(bytes([13]) + s(blob) + s(b'data') + struct.pack('>I', 0)))
print('signb answer', sk.recv(5)[4])
EOF
	wsh "ssh-add newkey 2>&1; echo \"add rc=\$?\"
	     ssh-add -D 2>&1; echo \"removeall rc=\$?\"
	     printf 'pw\\npw\\n' | ssh-add -x 2>&1; echo \"lock rc=\$?\"
	     /usr/bin/python3 signb.py
	     ssh-add -l | grep -c ED25519 | sed 's/^/listed /'" \
		--ssh-agent --ssh-key "$FP_A" --profile "$(no_detect_actions)"
	assert_out_match '^add rc=[1-9]' 'ssh-add of a key inside'
	assert_out_match '^removeall rc=[1-9]' 'ssh-add -D inside'
	assert_out_match '^lock rc=[1-9]' 'ssh-add -x inside'
	assert_out_line 'signb answer 5' 'a signature with the key not named: SSH_AGENT_FAILURE'
	assert_out_line 'listed 1' 'the agent inside still lists the key named'
	[[ $(ssh-add -l | grep -c ED25519) == 2 ]] || fail "the host agent changed: $(ssh-add -l)"
	ssh-add -l | matches warden-test-new && fail 'the key added inside reached the host agent'
	ssh_events
	ssh_event_has '.action == "add" and .decision == "deny"' 'the add refused'
	ssh_event_has '.action == "remove-all" and .decision == "deny"' 'the remove-all refused'
	# protocol 1's request ssh-add -D sends too: named, not "type 9"
	jq -es 'map(select(.action | test("^type "))) | length == 0' <<<"$SSHEV" >/dev/null 2>&1 ||
		fail "an ssh event names a request by its number: $(excerpt "$SSHEV")"
	ssh_event_has '.action == "remove-all (protocol 1)" and .decision == "deny"' 'the protocol 1 remove-all named'
	ssh_event_has '.action == "lock" and .decision == "deny"' 'the lock refused'
	ssh_event_has ".action == \"sign\" and .decision == \"deny\" and .key == \"$FP_B\" and (.reason | test(\"does not name\"))" \
		'the signature with key B refused'
	# and in the end's list of what was refused, by action and key
	# (a fingerprint is base64: '+' and '/' in it, a fixed string)
	grep -qxF -- "  ssh-agent sign $FP_B: a key the policy does not name (ssh-agent KEY..., --ssh-key)" \
		<<<"$ERR" || fail "the refused signature is not in the end's list: $(excerpt "$ERR")"
	assert_err_match '^  ssh-agent add: '
	ssh_schema
}

test_ssh_agent_host_errors() {
	ssh_need
	# unset
	(unset SSH_AUTH_SOCK; wrun --ssh-agent -- true
	 assert_rc 125 'SSH_AUTH_SOCK unset'
	 [[ $ERR == *SSH_AUTH_SOCK*'not set'* ]] || fail "unset: the error does not say SSH_AUTH_SOCK is not set: $(excerpt "$ERR")")
	# a regular file
	: >"$T_TMP/notasock"
	SSH_AUTH_SOCK=$T_TMP/notasock wrun --ssh-agent -- true
	assert_rc 125 'a regular file'
	[[ $ERR == *"$T_TMP/notasock"*'not a socket'* ]] || fail "regular file: $(excerpt "$ERR")"
	# a dead agent: its socket is left, nobody listens
	local out pid
	out=$(ssh-agent -s -a "$T_TMP/dead.sock") || fatal "ssh-agent: $out"
	pid=$(sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p' <<<"$out")
	kill -9 "$pid"
	sleep 0.2
	[[ -S $T_TMP/dead.sock ]] || fatal 'the dead agent took its socket away'
	SSH_AUTH_SOCK=$T_TMP/dead.sock wrun --ssh-agent -- true
	assert_rc 125 'a dead agent'
	[[ $ERR == *'cannot be reached'* ]] || fail "dead agent: $(excerpt "$ERR")"
	# a key the agent does not hold
	ssh_agent_start "$T_TMP/ag"
	wrun --ssh-key SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA -- true
	assert_rc 125 'a key the agent does not hold'
	[[ $ERR == *'none of the keys named'* ]] || fail "missing key: $(excerpt "$ERR")"
	# a socket of another user
	local other=''
	if is_root; then
		other=$T_TMP/ag/agent.sock
		chown 65534 "$other"
	else
		other=$(find /run /tmp /var/run -maxdepth 3 -type s ! -user "$(id -u)" 2>/dev/null | head -n 1)
	fi
	if [[ -n $other ]]; then
		SSH_AUTH_SOCK=$other wrun --ssh-agent -- true
		assert_rc 125 'a socket of another user'
		[[ $ERR == *'not yours'* ]] || fail "another user's socket: $(excerpt "$ERR")"
	else
		note 'no socket of another user to try'
	fi
}

test_ssh_agent_hung() {
	ssh_need jq /usr/bin/python3
	# an agent that answers its first connection (the check before the
	# session) with no keys, and then never answers
	cat >"$T_TMP/hang.py" <<'EOF'
import socket, sys, time
srv = socket.socket(socket.AF_UNIX)
srv.bind(sys.argv[1]); srv.listen(8)
print('LISTENING', flush=True)
c, _ = srv.accept(); c.recv(100); c.sendall(b'\0\0\0\x05\x0c\0\0\0\0'); c.close()
held = []
while True:
    c, _ = srv.accept(); held.append(c)
EOF
	timeout -k 2 60 /usr/bin/python3 "$T_TMP/hang.py" "$T_TMP/hang.sock" >"$T_TMP/hang.out" 2>&1 &
	local tpid=$!
	bg_track "$tpid"
	wait_for "$T_TMP/hang.out" LISTENING 10 || fatal "the hanging agent did not start: $(<"$T_TMP/hang.out")"
	bg_track "$(pgrep -P "$tpid" | head -n 1)"
	SSH_AUTH_SOCK=$T_TMP/hang.sock wsh 's=$(date +%s); ssh-add -l >/dev/null 2>&1; echo "list rc=$? after $(( $(date +%s) - s ))s"
	     echo still-running' --ssh-agent
	assert_rc 0
	assert_out_match '^list rc=[1-9][0-9]* after [4-9]s$' 'the list fails after the bound (5 s)'
	assert_out_line still-running 'the session goes on'
	ssh_events
	ssh_event_has '.action == "list" and .decision == "deny" and (.reason | test("did not answer"))' 'the timeout'
}

# ssh_question SECONDS: the id of the first open question about an SSH key
# (QID), once `warden approve` lists it; 1 when none comes in time.
ssh_question() {
	local i
	QID=
	for ((i = 0; i < $1 * 5; i++)); do
		QID=$("$WARDEN" approve 2>/dev/null | grep -F 'sign with the SSH key' | awk '{ print $1; exit }')
		[[ -n $QID ]] && return 0
		sleep 0.2
	done
	return 1
}

# `ssh-agent ask`: each signature waits for a human. Denied once: the
# client gets a failure; allowed for the session: that signature and the
# next with the same key, with no second question.
test_ssh_agent_ask() {
	ssh_need jq
	ssh_agent_start "$T_TMP/ag"
	cp "$T_TMP/ag/ka.pub" "$WS/ka.pub"
	echo message >"$WS/msg"
	printf 'ssh-agent ask warden-test-a\n' >"$T_TMP/ask.profile"
	warden_bg "$T_TMP/ask.out" --profile "$T_TMP/ask.profile" -- sh -c '
		for i in 1 2 3; do
			ssh-keygen -Y sign -n git -f ka.pub msg >/dev/null 2>&1; echo "sign$i rc=$?"
			rm -f msg.sig
		done'
	ssh_question 20 || fatal "no question for the first signature: $(excerpt "$(cat "$T_TMP/ask.out.err")")"
	local q1=$QID
	"$WARDEN" approve "$q1" deny --reason 'not now' >/dev/null 2>&1 || fail "warden approve $q1 deny failed"
	ssh_question 20 || fatal 'no question for the second signature'
	[[ $QID != "$q1" ]] || fatal 'the first question is still open'
	"$WARDEN" approve "$QID" allow --session >/dev/null 2>&1 || fail "warden approve $QID allow failed"
	wait "$TPID"
	OUT=$(<"$T_TMP/ask.out")
	assert_out_match '^sign1 rc=[1-9]' 'the signature denied'
	assert_out_line 'sign2 rc=0' 'the signature allowed'
	assert_out_line 'sign3 rc=0' 'the next signature, allowed for the session'
	ssh_events
	ssh_event_has ".action == \"sign\" and .decision == \"deny\" and .question == \"$q1\" and (.reason | test(\"not now\"))" \
		'the denied signature names its question'
	ssh_event_has ".action == \"sign\" and .decision == \"allow\" and .question == \"$QID\" and .namespace == \"git\"" \
		'the allowed signature names its question'
	[[ $(jq -s 'map(select(.action == "sign" and .decision == "allow")) | length' <<<"$SSHEV") == 2 ]] ||
		fail "not two signatures allowed: $(excerpt "$SSHEV")"
	local asked
	asked=$("$WARDEN" log show --event approval --json 2>/dev/null |
		jq -s "map(select(.phase == \"asked\" and .kind == \"ssh\" and .subject == \"$FP_A\")) | length")
	[[ $asked == 2 ]] || fail "not two ssh questions asked (subject the key): $asked"
}

# `ssh-agent ask` for a login: the question names the user and the
# server, by its host key's fingerprint (what `ssh-keygen -lF` shows on
# the host), so that the human knows where the key would be used.
test_ssh_agent_ask_login_names_server() {
	ssh_need jq
	ssh_agent_start "$T_TMP/ag"
	ssh_sshd "$T_TMP"
	printf 'ssh-agent ask warden-test-a\nnet allow 127.0.0.1:%s\n' "$SSH_PORT" >"$T_TMP/ask.profile"
	warden_bg "$T_TMP/ask.out" --profile "$T_TMP/ask.profile" -- sh -c "
		ssh $SSH_OPTS -p $SSH_PORT $SSH_USER@127.0.0.1 echo logged-in; echo \"ssh rc=\$?\""
	ssh_question 20 || fatal "no question for the login: $(excerpt "$(cat "$T_TMP/ask.out.err")")"
	local line
	line=$("$WARDEN" approve 2>/dev/null | grep -F "$QID")
	[[ $line == *"to log in as $SSH_USER at the server whose host key is $HOST_FP"* ]] ||
		fail "the question does not name the server: $line"
	"$WARDEN" approve "$QID" allow >/dev/null 2>&1 || fail "warden approve $QID allow failed"
	wait "$TPID"
	OUT=$(<"$T_TMP/ask.out")
	assert_out_line 'logged-in' 'the login, allowed'
	ssh_events
	ssh_event_has ".action == \"sign\" and .decision == \"allow\" and .question == \"$QID\" and .host_key == \"$HOST_FP\"" \
		'the allowed login names its question and server'
}

# Plain ssh and scp to an allowed host (in a network namespace of the test,
# nethost.sh), with no ProxyCommand written by anyone: warden's
# ~/.ssh/config sends them through the proxy, and the key comes from the
# host agent. As root only (the namespace).
test_ssh_agent_proxied_host() {
	nh_need_root
	ssh_need jq scp
	nh_netns
	local name out
	name=$(nh_name host)
	nh_hosts_add "$name" "$NH_IP"
	nh_sshd "$T_TMP/client"
	out=$(ssh-agent -s -a "$T_TMP/agent.sock") || fatal "ssh-agent: $out"
	eval "$out" >/dev/null
	bg_track "$SSH_AGENT_PID"
	export SSH_AUTH_SOCK
	ssh-add -q "$T_TMP/client/id_ed25519" 2>/dev/null || fatal 'ssh-add'
	rm -f "$T_TMP/client/id_ed25519"
	printf 'ssh-agent on\nnet allow %s:22 private\n' "$name" >"$T_TMP/p.profile"
	wsh "unset GIT_SSH_COMMAND
	     ssh $SSH_OPTS root@$name echo over-the-proxy; echo \"ssh rc=\$?\"
	     echo copied-by-scp >f; scp -O $SSH_OPTS f root@$name:$T_TMP/scp-copy; echo \"scp rc=\$?\"" \
		--profile "$T_TMP/p.profile"
	assert_out_line over-the-proxy 'the command ran over ssh'
	assert_out_line 'ssh rc=0' 'plain ssh to the allowed host'
	assert_out_line 'scp rc=0' 'scp to the allowed host'
	[[ $(cat "$T_TMP/scp-copy" 2>&1) == copied-by-scp ]] || fail 'the file scp copied is not there'
	out=$("$WARDEN" log show --event net --json 2>/dev/null)
	[[ $(jq -s "map(select(.method == \"CONNECT\" and .host == \"$name\" and .port == 22 and
		.decision == \"allow\")) | length" <<<"$out") -ge 2 ]] ||
		fail "not two CONNECTs to $name:22 through the proxy: $(excerpt "$out")"
	ssh_events
	ssh_event_has '.action == "sign" and .decision == "allow" and .user == "root"' 'the signatures'
}

# The host keys: the lines of the user's ~/.ssh/known_hosts for the hosts
# the session may reach are in the sandbox's, hashed ones too, so that ssh
# inside checks the server's key with StrictHostKeyChecking on and no
# question (every session said "Host key verification failed", pushing
# users to turn the check off); a line for a host the rules do not allow
# stays out; a key that is not the server's still fails the check.
test_ssh_known_hosts() {
	ssh_need jq
	ssh_agent_start "$T_TMP/ag"
	ssh_sshd "$T_TMP"
	local strict='-o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o LogLevel=ERROR'
	mkdir -p "$HOME/.ssh"
	printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$T_TMP/sshd/host.pub")" >"$HOME/.ssh/known_hosts"
	ssh-keygen -q -H -f "$HOME/.ssh/known_hosts" >/dev/null 2>&1 || fatal 'ssh-keygen -H'
	grep -q '^|1|' "$HOME/.ssh/known_hosts" || fatal "not hashed: $(cat "$HOME/.ssh/known_hosts")"
	printf 'private-host.example %s\n' "$(cut -d' ' -f1,2 "$T_TMP/sshd/host.pub")" >>"$HOME/.ssh/known_hosts"
	wsh "ssh $strict -p $SSH_PORT $SSH_USER@127.0.0.1 echo host-key-checked; echo \"ssh rc=\$?\"
	     echo \"private=\$(grep -c private-host ~/.ssh/known_hosts)\"" \
		--ssh-agent --ssh-key warden-test-a --allow-net "127.0.0.1:$SSH_PORT"
	assert_rc 0
	assert_out_line 'host-key-checked' 'ssh with the host key checked'
	assert_out_line 'private=0' 'a host the rules do not allow was in known_hosts inside'
	# another key for the same host: refused, as ssh outside would
	ssh-keygen -q -t ed25519 -N '' -f "$T_TMP/other" || fatal 'ssh-keygen other'
	printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cut -d' ' -f1,2 "$T_TMP/other.pub")" >"$HOME/.ssh/known_hosts"
	wsh "ssh $strict -p $SSH_PORT $SSH_USER@127.0.0.1 echo host-key-checked; echo \"ssh rc=\$?\"" \
		--ssh-agent --ssh-key warden-test-a --allow-net "127.0.0.1:$SSH_PORT"
	assert_out_lacks 'host-key-checked' 'a server whose key is not the one known was let in'
	assert_out_line 'ssh rc=255' 'ssh refused the changed key'
}

# ssh that fails for want of keys says why at the end: without
# --ssh-agent (the host has an agent), warden names the flag, and with no
# agent on the host, how to start one; with
# `ssh -F /dev/null` (which leaves warden's configuration aside and reads
# the default key files: the sandbox's decoys, so the session is killed),
# warden says ssh opened a decoy and what to run instead. Before, ssh's
# own "Permission denied (publickey)" or a bare kill was all there was.
test_ssh_hints() {
	ssh_need
	ssh_agent_start "$T_TMP/agent"
	ssh_sshd "$T_TMP"
	# shellcheck disable=SC2086
	wrun --allow-net "127.0.0.1:$SSH_PORT" -- ssh $SSH_OPTS -p "$SSH_PORT" "$SSH_USER@127.0.0.1" true
	assert_rc 255
	assert_err_match 'ssh ran inside without your keys: .*--ssh-agent'
	# no agent on the host at all: how to start one
	# shellcheck disable=SC2086
	SSH_AUTH_SOCK='' wrun --allow-net "127.0.0.1:$SSH_PORT" -- ssh $SSH_OPTS -p "$SSH_PORT" "$SSH_USER@127.0.0.1" true
	assert_rc 255
	assert_err_match 'no agent runs here \(SSH_AUTH_SOCK is not set\): start one .*ssh-add'
	# shellcheck disable=SC2086
	wrun --ssh-agent --allow-net "127.0.0.1:$SSH_PORT" -- ssh -F /dev/null $SSH_OPTS -p "$SSH_PORT" "$SSH_USER@127.0.0.1" true
	assert_err_match 'ssh opened a decoy key .*-F FILE'
	[[ $ERR != *'without your keys'* ]] || fail "both hints said: $(excerpt "$ERR")"
	# with the agent and warden's configuration: no hint
	# shellcheck disable=SC2086
	wrun --ssh-agent --allow-net "127.0.0.1:$SSH_PORT" -- ssh $SSH_OPTS -p "$SSH_PORT" "$SSH_USER@127.0.0.1" echo LOGGED-IN
	assert_rc 0
	assert_out_has LOGGED-IN
	[[ $ERR != *'ssh ran inside'* ]] || fail "a hint with the agent: $(excerpt "$ERR")"
}

# Your ~/.ssh/config's hosts work inside: an alias's HostName, Port and
# User are carried into the sandbox's config (a ProxyCommand or an
# IdentityFile of the block is not: what ssh would run or read is the
# host's), and a host named without a user logs in as you, as outside
# (inside, ssh's default was the sandbox's `agent`). Before, `ssh ALIAS`
# went to a host named ALIAS on port 22, and the hint to allow ALIAS led
# nowhere.
test_ssh_config_aliases() {
	ssh_need
	ssh_agent_start "$T_TMP/agent"
	ssh_sshd "$T_TMP"
	mkdir -p "$HOME/.ssh"
	printf 'Host myalias\n  HostName 127.0.0.1\n  Port %s\n  User %s\n  ProxyCommand false\n  IdentityFile ~/.ssh/id_other\n' \
		"$SSH_PORT" "$SSH_USER" >"$HOME/.ssh/config"
	# shellcheck disable=SC2086
	wrun --ssh-agent --allow-net "127.0.0.1:$SSH_PORT" -- sh -c "ssh $SSH_OPTS myalias echo ALIAS-OK; ssh $SSH_OPTS -p $SSH_PORT 127.0.0.1 echo DEFAULT-USER-OK; cat ~/.ssh/config"
	assert_rc 0
	assert_out_has ALIAS-OK 'the alias did not lead to its host'
	assert_out_has DEFAULT-USER-OK 'a host named without a user did not log in as the user'
	assert_out_lacks 'ProxyCommand false' "the alias's ProxyCommand was carried"
	assert_out_lacks id_other "the alias's IdentityFile was carried"
}
