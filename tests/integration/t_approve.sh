# t_approve.sh - questions for a human and `warden approve`: a `net ask`
# destination waits, unread, until `warden approve ID allow|deny` from a
# second process (or the timeout, a denial); answers reach once, the
# session (`--session`), a pattern (`--pattern`), for a time (`--ttl`);
# `exec ask argv` holds an exec and `write ask` a write the same way; each
# step is an `approval` event. The agent cannot answer: the control socket
# is outside the sandbox, warden's own binary inside finds no session to
# answer, and a client of another uid is refused by the socket (root only).
# The test's servers are on the host's loopback (a rule naming
# 127.0.0.1:PORT is the one way the proxy dials it).
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"


# ap_web: an HTTP server of a token on the host's loopback; sets AP_PORT
# and AP_TOKEN (a second call, AP_PORT2).
ap_web() {
	nh_need curl
	AP_TOKEN=${AP_TOKEN:-$(unique)}
	mkdir -p "$T_TMP/www"
	printf '%s\n' "$AP_TOKEN" >"$T_TMP/www/token.txt"
	chmod -R a+rX "$T_TMP/www"
	nh_web "http${1:-}" "$T_TMP/www" 127.0.0.1 0
	nh_host_check "http://127.0.0.1:$PORT/token.txt"
}

# ap_inside SCRIPT [warden run args]: warden in the background running
# SCRIPT (a fetch helper defined, the proxy used for the host's loopback);
# its output in $T_TMP/ap.out.
ap_inside() {
	local script=$1
	shift
	{
		echo 'unset NO_PROXY no_proxy'
		echo 'fetch() { c=$(curl -s -m 30 -o "body.$1" -w "%{http_code}" "$2"); echo "$1 $c $(head -c 200 "body.$1" 2>/dev/null)"; }'
		printf '%s\n' "$script"
		echo 'echo done'
	} >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" "$@" -- sh ./inside.sh
}

# ap_question KIND [SECONDS]: the id of an open question of KIND, waited
# for (empty when none came).
ap_question() {
	local i id
	for ((i = 0; i < ${2:-15} * 10; i++)); do
		id=$("$WARDEN" approve --json 2>/dev/null | awk -v k="\"kind\": \"$1\"" '
			/"id":/ { gsub(/[",]/, "", $2); id = $2 } index($0, k) { print id; exit }')
		[[ -n $id ]] && { printf '%s\n' "$id"; return 0; }
		sleep 0.1
	done
	return 1
}

ap_answer() { # ID allow|deny [options]
	"$WARDEN" approve "$@" >"$T_TMP/ap.answer" 2>&1 || fail "warden approve $* failed: $(<"$T_TMP/ap.answer")"
}

ap_wait_done() {
	wait_for "$T_TMP/ap.out" '^done' 60 || fail "the session did not finish: $(excerpt "$(<"$T_TMP/ap.out")")"
	wait "$TPID"
	RC=$?
	OUT=$(<"$T_TMP/ap.out")
	ERR=$(<"$T_TMP/ap.out.err")
}

# approval events of the last session matching all the given strings
ap_events() {
	local f line ok s n=0
	f=$(latest_log)
	while IFS= read -r line; do
		ok=1
		for s; do [[ $line == *"$s"* ]] || ok=0; done
		((ok)) && n=$((n + 1))
	done < <(grep '"event":"approval"' "$f")
	printf '%s\n' "$n"
}

test_approve_net_allow_deny_timeout() {
	ap_web
	printf 'net ask 127.0.0.1:%s\napprove timeout 3\n' "$PORT" >"$T_TMP/p"
	ap_inside "fetch one http://127.0.0.1:$PORT/token.txt
		fetch two http://127.0.0.1:$PORT/token.txt
		fetch three http://127.0.0.1:$PORT/token.txt" --profile "$T_TMP/p"
	local id
	id=$(ap_question net) || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve >"$T_TMP/list"
	grep -q "$id .*connect to 127.0.0.1:$PORT" "$T_TMP/list" || fail "warden approve does not list it: $(<"$T_TMP/list")"
	ap_answer "$id" allow
	id=$(ap_question net) || fatal 'no second question'
	ap_answer "$id" deny --reason 'not now'
	# the third: nobody answers
	ap_wait_done
	assert_out_line "one 200 $AP_TOKEN" 'allowed once'
	assert_out_match '^two 403 ' 'denied'
	assert_out_match '^three 403 .*no answer within 3 s' 'no answer in time'
	[[ $(ap_events '"phase":"answered"' '"decision":"allow"' '"by":"approve"' '"scope":"once"') == 1 ]] ||
		fail 'no approval event for the allow'
	[[ $(ap_events '"phase":"answered"' '"decision":"deny"' '"reason":"not now"') == 1 ]] ||
		fail 'no approval event for the deny'
	[[ $(ap_events '"phase":"timeout"' '"decision":"deny"') == 1 ]] || fail 'no approval event for the timeout'
	[[ $(ap_events '"phase":"asked"') == 3 ]] || fail 'not three questions asked'
	# the refusals' list at the end names the two answers that were no,
	# each on its line (not both under the first one's words)
	assert_err_match "^  127\\.0\\.0\\.1:$PORT: asked by rule 127\\.0\\.0\\.1:$PORT, and denied by approve: not now\$" \
		'the denied question in the refusals'\'' list'
	assert_err_match "^  127\\.0\\.0\\.1:$PORT: asked by rule 127\\.0\\.0\\.1:$PORT, and denied by timeout" \
		'the question nobody answered in the refusals'\'' list'
	# no terminal to ask on: each question said on stderr, with how to
	# answer it (it waited in silence)
	[[ $(grep -cE "^warden: question [^ ]+ waits for an answer \\(connect to 127\\.0\\.0\\.1:$PORT \\(HTTP\\)\\), with no terminal here to ask on: .warden approve [^ ]+ allow. \\(or deny\\) from another; unanswered, it is denied in 3 s$" <<<"$ERR") == 3 ]] ||
		fail "the questions are not said on stderr: $(excerpt "$ERR")"
}

test_approve_scopes() {
	ap_web
	local p1=$PORT
	ap_web 2
	local p2=$PORT
	printf 'net ask 127.0.0.1:%s\nnet ask 127.0.0.1:%s\napprove timeout 5\n' "$p1" "$p2" >"$T_TMP/p"
	ap_inside "fetch a http://127.0.0.1:$p1/token.txt
		fetch b http://127.0.0.1:$p1/token.txt
		fetch c http://127.0.0.1:$p2/token.txt
		sleep 3
		fetch d http://127.0.0.1:$p2/token.txt" --profile "$T_TMP/p"
	local id
	id=$(ap_question net) || fatal 'no question came'
	ap_answer "$id" allow --session
	# b: the same destination, answered by the session's answer
	id=$(ap_question net) || fatal 'no question for the second port'
	"$WARDEN" approve "$id" allow --pattern '10.0.0.*' >/dev/null 2>&1 &&
		fail 'a pattern that does not match the question was taken'
	ap_answer "$id" allow --pattern '127.0.0.1:*' --ttl 2
	# d comes after the ttl: asked again
	id=$(ap_question net) || fatal 'the pattern outlived its ttl: no question'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line "a 200 $AP_TOKEN" 'the first answer'
	assert_out_line "b 200 $AP_TOKEN" 'the session scope'
	assert_out_line "c 200 $AP_TOKEN" 'the pattern'
	assert_out_match '^d 403 ' 'after the ttl'
	[[ $(ap_events '"phase":"remembered"' '"decision":"allow"') == 1 ]] || fail 'no remembered answer'
	[[ $(ap_events '"scope":"pattern"' '"pattern":"127.0.0.1:*"' '"ttl_s":2') == 1 ]] ||
		fail 'the pattern answer is not on the record'
}

test_approve_exec_and_write() {
	printf 'exec ask argv date *\nwrite ask *.secret\napprove timeout 10\n' >"$T_TMP/p"
	rm -f "$WS"/*.secret
	{
		echo 'date +%Y >/dev/null; echo "date1=$?"'
		echo 'date +%Y >/dev/null 2>&1; echo "date2=$?"'
		echo 'echo x > a.secret; echo "write1=$?"'
		echo 'echo y > b.secret 2>/dev/null; echo "write2=$?"'
		echo 'echo z > c.other; echo "write3=$?"'
		echo 'echo done'
	} >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	local id
	id=$(ap_question exec) || fatal 'no exec question'
	ap_answer "$id" allow
	id=$(ap_question exec) || fatal 'no second exec question'
	ap_answer "$id" deny
	id=$(ap_question write) || fatal 'no write question'
	ap_answer "$id" allow
	id=$(ap_question write) || fatal 'no second write question'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line 'date1=0' 'an exec allowed'
	assert_out_line 'date2=126' 'an exec denied'
	assert_out_line 'write1=0' 'a write allowed'
	assert_out_line 'write2=2' 'a write denied'
	assert_out_line 'write3=0' 'a write no rule names'
	assert_host_file "$WS/a.secret" x 'the allowed write'
	assert_host_absent "$WS/b.secret" 'the denied write'
	local f
	f=$(latest_log)
	grep '"event":"exec"' "$f" | grep '"argv":\["date"' | grep '"decision":"deny","reason":"denied by approve' >/dev/null ||
		fail 'the denied exec is not on the record'
	grep '"event":"file"' "$f" | grep 'b.secret' | grep '"decision":"deny"' >/dev/null ||
		fail 'the denied write is not on the record'
}

# `net ask 127.0.0.1:PORT` is a host loopback port as `net allow` makes
# one, asked at each connection: the client inside connects to the port
# (NO_PROXY sends it there), waits for the answer, then reaches the host's
# server; a no resets it. It used to listen on nothing: the client failed
# to connect, unasked, unrecorded.
test_approve_net_ask_loopback_port() {
	ap_web
	printf 'net ask 127.0.0.1:%s\napprove timeout 20\n' "$PORT" >"$T_TMP/p"
	{
		echo "c=\$(curl -s -m 30 http://127.0.0.1:$PORT/token.txt); echo \"first=\$? \$c\""
		echo "curl -s -m 30 -o /dev/null http://127.0.0.1:$PORT/token.txt; echo \"second=\$?\""
		echo 'echo done'
	} >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	local id
	id=$(ap_question net) || fatal "no question for the loopback port: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	ap_answer "$id" allow
	id=$(ap_question net) || fatal 'no second question'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line "first=0 $AP_TOKEN" 'allowed: the host port reached'
	assert_out_match '^second=(56|52|7)$' 'denied: the connection ended'
	(($(ap_events '"decision":"allow"') >= 1 && $(ap_events '"decision":"deny"') >= 1)) ||
		fail "no approval events: $(grep '"event":"approval"' "$(latest_log)" | head -c 600)"
	# the question says what the connection is: TCP to a host port, not a
	# CONNECT through the proxy
	(($(ap_events '"phase":"asked"' "(TCP, host loopback port)") == 2)) ||
		fail "the question misnames the connection: $(grep '"phase":"asked"' "$(latest_log)" | head -c 600)"
}

# Bad answers say what is wrong before the usage (they printed the usage
# alone); an answer nobody takes exits 1, as warden-approve(1) says.
test_approve_usage_errors() {
	wardenc approve q1 maybe
	assert_rc 2 'a bad verb'
	assert_err_match '^warden approve: the answer is allow or deny$'
	wardenc approve --ttl 5 q1 allow
	assert_rc 2 '--ttl alone'
	assert_err_match '^warden approve: --ttl is for an answer that lasts'
	wardenc approve --session --pattern 'x*' q1 allow
	assert_rc 2 '--session and --pattern'
	assert_err_match 'exclude each other'
	wardenc approve q1 allow
	assert_rc 1 'a question no session has'
	assert_err_match 'no running session has question q1'
}

# `write ask DIR/GLOB` holds a write however the path is spelled: ./docs,
# docs//, docs/./, docs/../docs (each went through unasked); in CI mode the
# question is refused at once. The log records the path written plainly.
test_approve_write_spellings() {
	printf 'write ask docs/*.md\n' >"$T_TMP/p"
	mkdir -p "$WS/docs"
	printf 'orig\n' >"$WS/docs/a.md"
	local sp
	for sp in ./docs/a.md docs//a.md docs/./a.md docs/../docs/a.md "$WS/./docs/a.md"; do
		wsh "echo x >> '$sp' 2>/dev/null; echo rc=\$?" --profile "$T_TMP/p" --ci --artifacts "$T_TMP/art"
		assert_out_line 'rc=2' "the write to $sp held and refused (CI mode)"
		[[ $(<"$WS/docs/a.md") == orig ]] || fail "the write to $sp went through"
		grep -F '"event":"file"' "$(latest_log)" | grep -F '"decision":"deny"' |
			matches -F "\"path\":\"$WS/docs/" || fail "$sp: no refused file event under $WS/docs/"
	done
	grep -F '"event":"file"' "$(latest_log)" | matches -F "$WS/./docs" && fail 'the path is not written plainly in the log'
	wsh 'echo x >> ./docs/b.txt; echo rc=$?' --profile "$T_TMP/p" --ci --artifacts "$T_TMP/art"
	assert_out_line 'rc=0' 'a write no rule names'
}

# A write in a directory deeper than PATH_MAX has no absolute path for the
# rule to match (the file record says it partial): the name alone still
# asks. A rule of one component (*.secret) matches the file's name, as
# at any depth; one of several (docs/*.md) cannot be told from here and
# asks when the name could be its (fail closed). In CI mode each question
# is refused: the write fails, the file is not made, the event says so.
test_approve_write_deep_path() {
	have python3 || skip 'python3 not installed'
	printf 'write ask *.secret\nwrite ask docs/*.md\n' >"$T_TMP/p"
	wrun --profile "$T_TMP/p" --ci --artifacts "$T_TMP/art" -- python3 -c '
import os
n = "d" * 250
for i in range(20):
    os.mkdir(n); os.chdir(n)
for name in ("deep.secret", "deep.md", "deep.txt"):
    try:
        open(name, "w").write("x"); print(name, "written")
    except OSError as e:
        print(name, "refused", e.errno)
print("done")'
	assert_out_has done
	assert_out_line 'deep.secret refused 13' 'a deep write the name rule names, held and refused'
	assert_out_line 'deep.md refused 13' 'a deep write a path rule could name, held and refused'
	assert_out_line 'deep.txt written' 'a deep write no rule could name'
	local ev
	ev=$(grep -F '"event":"file"' "$(latest_log)" | grep -F '"path":"deep.secret"')
	[[ $ev == *'"decision":"deny"'* && $ev == *'"path_partial":true'* ]] ||
		fail "no refused, partial event for deep.secret: $(excerpt "$ev")"
	grep -F '"event":"approval"' "$(latest_log)" | matches -F 'too deep to name' ||
		fail "the question does not say the path is partial: $(excerpt "$(grep -F approval "$(latest_log)")")"
}

# A write held for a question keeps the whole of what it was: answered
# later, the event of a symlink made names its target, and that of an
# extended attribute set its name, as given (they were read from the
# notification's memory, gone by the answer: the event showed whatever
# the supervisor's stack held then).
test_approve_write_held_keeps_target_and_attr() {
	have python3 || skip 'python3 not installed'
	printf 'write ask *.secret\napprove timeout 20\n' >"$T_TMP/p"
	printf 'x\n' >"$WS/a.secret"
	printf 'y\n' >"$WS/plain.txt"
	# while both wait, a link and an attribute no rule asks about: their
	# notifications' memory where the held ones' was
	cat >"$WS/inside.sh" <<'EOF'
(ln -s the-link-target-of-the-test b.secret; echo "link=$?") &
(python3 -c 'import os; os.setxattr("a.secret", "user.the-attr-of-the-test", b"1"); print("xattr=0")') &
sleep 2
ln -s another-target plain.link
python3 -c 'import os; os.setxattr("plain.txt", "user.another-attr", b"1")'
echo between >between
wait
echo done
EOF
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	wait_for "$WS/between" between 20 || fatal "the unasked writes did not happen: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	local id i
	for i in 1 2; do
		id=$(ap_question write) || fatal "no question $i: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
		ap_answer "$id" allow
	done
	ap_wait_done
	assert_out_line 'link=0' 'the link allowed'
	assert_out_line 'xattr=0' 'the attribute allowed'
	local fl
	fl=$(grep -F '"event":"file"' "$(latest_log)")
	grep -F '"op":"symlink"' <<<"$fl" | grep -F '"decision":"allow"' | grep -F '"access":"write"' |
		matches -F '"target":"the-link-target-of-the-test"' ||
		fail "the answered link's event lost its target: $(excerpt "$(grep -F symlink <<<"$fl")")"
	grep -F '"op":"setxattr"' <<<"$fl" | grep -F '"decision":"allow"' |
		matches -F '"attr":"user.the-attr-of-the-test"' ||
		fail "the answered attribute's event lost its name: $(excerpt "$(grep -F setxattr <<<"$fl")")"
}

# A question naming what the sandbox chose (a file name with an OSC 52 and
# a screen clear in it) is listed by `warden approve` escaped: the
# reviewer's terminal gets no sequence of the agent's.
test_approve_list_shows_names() {
	printf 'write ask *.secret\napprove timeout 10\n' >"$T_TMP/p"
	# shellcheck disable=SC2016 # the sandbox's script
	printf '%s\n' 'n=$(printf "a\033]52;c;aGk=\007\033[2Jb")' 'echo x >"$n.secret"; echo "write=$?"' \
		'echo done' >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	local id
	id=$(ap_question write) || fatal "no write question: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve >"$T_TMP/list"
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line 'write=2' 'the write denied'
	grep -qF "$id" "$T_TMP/list" || fail "warden approve does not list the question: $(<"$T_TMP/list")"
	grep -qF 'a\x1b]52;c;aGk=\x07\x1b[2Jb.secret' "$T_TMP/list" ||
		fail "the name is not shown escaped: $(cat -v "$T_TMP/list")"
	if LC_ALL=C grep -q $'[\x1b\x07]' "$T_TMP/list"; then
		fail "an escape sequence reached the listing: $(cat -v "$T_TMP/list")"
	fi
}

# The agent tries to answer its own question: the control socket's path
# (outside, in the fake HOME) does not exist inside (a connect there is an
# alert, rule control.inside), and warden's binary inside finds no session; the question stays open until the test denies.
test_approve_agent_cannot_answer() {
	ap_web
	printf 'net ask 127.0.0.1:%s\napprove timeout 20\n' "$PORT" >"$T_TMP/p"
	ap_inside "fetch asked http://127.0.0.1:$PORT/token.txt &
		sleep 2
		for s in $(control_dir)/*.sock; do
		  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' \"\$s\" 2>/dev/null && echo CONNECTED
		done
		ls $(control_dir) 2>/dev/null && echo SEEN
		for w in /.warden/warden warden; do \$w approve 2>&1 | head -n 1; done
		wait" --profile "$T_TMP/p"
	local id
	id=$(ap_question net) || fatal 'no question came'
	sleep 4
	"$WARDEN" approve --json >"$T_TMP/list"
	grep -q "\"$id\"" "$T_TMP/list" || fail 'the question was answered from inside'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_lacks CONNECTED 'the agent reached the control socket'
	assert_out_lacks SEEN "the agent sees warden's control directory"
	grep '"event":"alert"' "$(latest_log)" | grep '"rule":"control.inside"' |
		grep -q "\"where\":\"$(control_dir)/" ||
		fail "the agent's connect to the control socket is not on the record"
	assert_out_match '^asked 403 .*denied by approve' 'the question stayed the test'\''s to answer'
	[[ $(ap_events '"phase":"answered"' '"by":"approve"' '"decision":"deny"') == 1 ]] ||
		fail 'the answer on the record is not the test'\''s'
}

# A client of another uid: the directory keeps it out, and the socket's
# peer check refuses it even when the directory is opened up (root only:
# another uid is needed).
test_approve_control_other_uid() {
	is_root || skip 'needs root to connect as another user'
	ap_web
	printf 'net ask 127.0.0.1:%s\napprove timeout 20\n' "$PORT" >"$T_TMP/p"
	ap_inside "fetch asked http://127.0.0.1:$PORT/token.txt" --profile "$T_TMP/p"
	local id dir
	id=$(ap_question net) || fatal 'no question came'
	dir=$(control_dir)
	[[ $(stat -c %a "$dir") == 700 ]] || fail "the control directory is not 0700: $(stat -c %a "$dir")"
	chmod 755 "$XDG_RUNTIME_DIR" "$dir/.." "$dir"
	chmod 666 "$dir"/*.sock
	runuser -u nobody -- env HOME="$HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$WARDEN" approve "$id" allow \
		>"$T_TMP/nobody" 2>&1 && fail "another uid answered: $(<"$T_TMP/nobody")"
	control_as nobody "$(ls "$dir"/*.sock | head -n 1)" \
		"{\"op\":\"answer\",\"id\":\"$id\",\"decision\":\"allow\",\"scope\":\"once\"}" >>"$T_TMP/nobody" 2>&1
	grep -q '"ok": *true' "$T_TMP/nobody" && fail "another uid answered: $(<"$T_TMP/nobody")"
	chmod 700 "$dir"
	ap_answer "$id" deny
	ap_wait_done
	assert_out_match '^asked 403 .*denied by approve' 'the other uid did not answer'
	grep -q '"rule":"control.refused"' "$(latest_log)" || fail 'the refused client is not on the record'
}

# An ask rule on a method and path: the question names the request, and
# the answer decides that request (plain HTTP, which warden reads).
test_approve_request_rule() {
	ap_web
	printf 'net ask 127.0.0.1:%s GET /token.txt\napprove timeout 20\n' "$PORT" >"$T_TMP/p"
	ap_inside "fetch one http://127.0.0.1:$PORT/token.txt
		fetch two http://127.0.0.1:$PORT/token.txt" --profile "$T_TMP/p"
	local id
	id=$(ap_question net) || fatal "no question came: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	"$WARDEN" approve >"$T_TMP/list"
	grep -q "$id .*GET http://127.0.0.1:$PORT/token.txt" "$T_TMP/list" ||
		fail "warden approve does not name the request: $(<"$T_TMP/list")"
	ap_answer "$id" allow
	id=$(ap_question net) || fatal 'no second question'
	ap_answer "$id" deny --reason 'not this one'
	ap_wait_done
	assert_out_line "one 200 $AP_TOKEN" 'the request allowed once'
	assert_out_match '^two 403 ' 'the request denied'
	[[ $(ap_events '"phase":"asked"' '"method":"GET"' '"path":"/token.txt"') == 2 ]] ||
		fail 'the questions do not name the method and path'
}

# ap_summary ID: the summary of open question ID, as `warden approve` lists it
ap_summary() {
	"$WARDEN" approve 2>/dev/null | awk -v id="$1" '$1 == id { sub(/^[^ ]+ +[^ ]+ +[0-9]+s +/, ""); print }'
}

# An answer for the session covers the argv the human was shown and no
# other: the subject used to be the argv joined by spaces and cut at
# 2 KiB, so `touch ././...(2100 bytes) ok1` allowed for the session let
# `touch ././... EVIL` run unasked, and `touch "a b"` answered `touch a b`. The
# question shows a long argv's start and end, and says how much was left
# out between (it stopped at 2 KiB, with neither the end nor a sign).
test_approve_exec_session_exact() {
	printf 'exec ask argv touch *\napprove timeout 20\n' >"$T_TMP/p"
	rm -f "$WS"/ok1 "$WS"/EVIL_tail "$WS"/a "$WS"/b "$WS/a b"
	{
		echo 'A=$(printf "./%.0s" $(seq 1 1050))'
		echo 'touch "$A" ok1; echo "first=$?"'
		echo 'touch "$A" EVIL_tail; echo "second=$?"'
		echo 'touch "a b"; echo "third=$?"'
		echo 'touch a b; echo "fourth=$?"'
		echo 'echo done'
	} >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	local id sum
	id=$(ap_question exec) || fatal 'no exec question'
	sum=$(ap_summary "$id")
	[[ $sum == 'run touch ./././'*' [... '*' bytes not shown ...] '*'/./ ok1 (in '* ]] ||
		fail "the long question does not show its end: $(excerpt "$sum")"
	ap_answer "$id" allow --session
	id=$(ap_question exec) || fatal 'the argv with another end was not asked about'
	sum=$(ap_summary "$id")
	[[ $sum == *'/./ EVIL_tail (in '* ]] || fail "the second question: $(excerpt "$sum")"
	ap_answer "$id" deny
	id=$(ap_question exec) || fatal 'no question for touch "a b"'
	sum=$(ap_summary "$id")
	[[ $sum == "run touch 'a b' (in "* ]] || fail "the argument is not quoted: $(excerpt "$sum")"
	ap_answer "$id" allow --session
	id=$(ap_question exec) || fatal 'touch a b was not asked about'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line 'first=0' 'the exec allowed'
	assert_out_line 'second=126' 'another argv, denied'
	assert_out_line 'third=0' 'touch "a b" allowed'
	assert_out_line 'fourth=126' 'touch a b, denied'
	assert_host_absent "$WS/EVIL_tail" 'the argv the human did not allow'
	assert_host_absent "$WS/a" 'touch a b'
	[[ -e "$WS/a b" && -e "$WS/ok1" ]] || fail 'the allowed execs did not run'
	(($(ap_events '"phase":"remembered"' '"decision":"allow"') == 0)) ||
		fail "an answer was remembered for another argv: $(grep '"phase":"remembered"' "$(latest_log)" | head -c 600)"
}

# An `exec ask argv` rule whose match lies past what warden reads of an
# argument (4096 bytes) asks rather than lets the exec through: it used to
# match the cut text only, and `sh -c "<4,200 bytes> touch EVIL"` ran
# unasked. The question says warden did not read it all, and a yes for the
# session covers that exec only: the next one like it is asked again.
test_approve_exec_argv_unread() {
	printf 'exec ask argv sh -c *EVIL*\napprove timeout 20\n' >"$T_TMP/p"
	rm -f "$WS"/EVIL*
	{
		echo 'P=$(printf ":;%.0s" $(seq 1 2100))'
		echo 'sh -c "$P touch EVIL1"; echo "long1=$?"'
		echo 'sh -c "$P touch EVIL2"; echo "long2=$?"'
		echo 'echo done'
	} >"$WS/inside.sh"
	warden_bg "$T_TMP/ap.out" --profile "$T_TMP/p" -- sh ./inside.sh
	local id sum
	id=$(ap_question exec) || fatal "the exec was not asked about: $(excerpt "$(cat "$T_TMP/ap.out"*)")"
	sum=$(ap_summary "$id")
	[[ $sum == *'[... and more that warden did not read'*'a yes covers this exec only]'* ]] ||
		fail "the question does not say it was cut: $(excerpt "$sum")"
	"$WARDEN" approve --json 2>/dev/null | grep '"rule": "exec ask argv sh -c \*EVIL\* (perhaps' >/dev/null ||
		fail "the rule does not say why: $("$WARDEN" approve --json 2>&1 | grep '"rule"' | head -c 300)"
	ap_answer "$id" allow --session
	id=$(ap_question exec) || fatal 'the second long exec was not asked about'
	ap_answer "$id" deny
	ap_wait_done
	assert_out_line 'long1=0' 'the exec allowed'
	assert_out_line 'long2=126' 'the second, denied'
	[[ -e "$WS/EVIL1" ]] || fail 'the allowed exec did not run'
	assert_host_absent "$WS/EVIL2" 'the denied exec'
	(($(ap_events '"phase":"answered"' '"scope":"once"' 'taken for this question only') == 1)) ||
		fail "the --session answer is not said to be this question's: $(grep '"phase":"answered"' "$(latest_log)" | head -c 600)"
	grep '"event":"exec"' "$(latest_log)" | grep '"argv_truncated":true' | grep '"decision":"deny"' >/dev/null ||
		fail 'the denied exec is not on the record'
}
