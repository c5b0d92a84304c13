# t_approve_terminal.sh - questions for a human answered at the user's
# terminal (issue 15): when warden relays the agent's pty and the user's
# keys, a question of an `ask` rule (`net ask`, `exec ask argv`) is drawn
# over the bottom lines of the screen and answered there by a key (y yes
# once, s yes for the session, n no), while the agent's output waits and
# the user's keys go to the question, never to the agent; no answer before
# `approve timeout` is a denial, and the agent cannot answer by writing to
# its own terminal. Each answer is an `approval` event with "by":"terminal"
# in the session's log, and the terminal's modes are back after each
# session. Each test runs warden in a tmux pane of its own
# (100x30, its own server socket in T_TMP): the test reads the screen and
# types the keys as the user would.
# shellcheck shell=bash

# at_start PROFILE-TEXT AGENT-SCRIPT: warden run --profile in a tmux pane
# in $WS, the agent running sh ./agent.sh (AGENT-SCRIPT, in the workspace);
# warden's exit status goes to $T_TMP/wrc. warden runs in the foreground of
# the pane's terminal (timeout --foreground), so its keys are relayed.
at_start() {
	have tmux || skip 'tmux not installed'
	have curl || skip 'curl not installed'
	printf '%s\n' "$1" >"$T_TMP/ask.profile"
	printf '%s\n' "$2" >"$WS/agent.sh"
	AT_TMUX=(tmux -S "$T_TMP/tmux.sock" -f /dev/null)
	trap '"${AT_TMUX[@]}" kill-server >/dev/null 2>&1' EXIT
	local cmd
	cmd="stty -g >$(printf '%q' "$T_TMP/stty.before"); $(printf '%q ' timeout --foreground -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run --profile "$T_TMP/ask.profile" -- sh ./agent.sh)"
	cmd+="; echo \$? >$(printf '%q' "$T_TMP/wrc.tmp"); stty -g >$(printf '%q' "$T_TMP/stty.after"); mv $(printf '%q %q' "$T_TMP/wrc.tmp" "$T_TMP/wrc"); sleep $WARDEN_TIMEOUT"
	"${AT_TMUX[@]}" new-session -d -s at -x 100 -y 30 -c "$WS" "$cmd" ||
		fatal 'tmux could not start a session'
}

# at_screen: the pane as the user sees it now, into SCREEN.
at_screen() { SCREEN=$("${AT_TMUX[@]}" capture-pane -p -t at 2>/dev/null); }

# at_wait ERE [SECONDS]: until the screen shows a line matching ERE; 1 if it
# never does (SCREEN holds the last look).
at_wait() {
	local i
	for ((i = 0; i < ${2:-15} * 10; i++)); do
		at_screen
		grep -qE -- "$1" <<<"$SCREEN" && return 0
		sleep 0.1
	done
	return 1
}

# at_keys KEY...: typed on the pane's terminal (tmux send-keys).
at_keys() { "${AT_TMUX[@]}" send-keys -t at "$@"; }

# at_asked: until a question is up with its keys counting (15 s at most);
# fatal if none comes.
at_asked() {
	at_wait '^ \[y\] yes once +\[s\] yes, this session +\[n\] no \(or Enter, Esc\)( +\|.*)?$' 15 ||
		fatal "no question on the screen: $(excerpt "$SCREEN")"
	printf -- '--- screen with the question\n%s\n' "$SCREEN"
}

# at_end: until warden has exited; WRC its status, SCREEN the last look;
# the terminal's modes must be what they were before.
at_end() {
	local i
	for ((i = 0; i < WARDEN_TIMEOUT * 10; i++)); do
		[[ -f $T_TMP/wrc ]] && break
		sleep 0.1
	done
	WRC=$(cat "$T_TMP/wrc" 2>/dev/null)
	at_screen
	printf -- '--- screen at the end (warden rc=%s)\n%s\n' "$WRC" "$SCREEN"
	[[ -n $WRC ]] || fatal "warden did not end: $(excerpt "$SCREEN")"
	[[ -s $T_TMP/stty.before && $(<"$T_TMP/stty.before") == "$(<"$T_TMP/stty.after")" ]] ||
		fail "the terminal's modes were not restored"
}

# at_events: the approval events of the session's log, into EVENTS.
at_events() {
	EVENTS=$(grep -h '"event":"approval"' "$HOME/.local/state/warden/"*.jsonl 2>/dev/null)
	printf -- '--- approval events\n%s\n' "$EVENTS"
}

# at_has_event WHAT STRING...: some approval event holds every STRING.
at_has_event() {
	local what=$1 line s ok
	shift
	while IFS= read -r line; do
		ok=1
		for s; do [[ $line == *"$s"* ]] || ok=0; done
		((ok)) && return 0
	done <<<"$EVENTS"
	fail "$what: no approval event with $* ($(excerpt "$EVENTS"))"
}

# at_count STRING: how many approval events hold STRING.
at_count() { grep -cF -- "$1" <<<"$EVENTS"; }

# at_off_screen: the question is gone from the screen.
at_off_screen() {
	[[ $SCREEN != *'warden asks ('* && $SCREEN != *'[y] yes once'* ]] ||
		fail "the question is still on the screen: $(excerpt "$SCREEN")"
}

AT_NET='net ask example.invalid'
# shellcheck disable=SC2016 # for the agent's shell
AT_CURL='c=$(curl -s -o /dev/null -w "%{http_code}" http://example.invalid/); echo "code=$c"'

# y: the connection goes through the proxy (example.invalid does not
# resolve: a 502, not the proxy's 403); the question was drawn whole (its
# kind, id, seconds left, summary, keys) and is gone afterwards.
test_approve_terminal_net_yes() {
	at_start "$AT_NET
approve timeout 20" "echo agent-start; $AT_CURL >code.txt; echo agent-end"
	at_asked
	[[ $SCREEN =~ warden\ asks\ \(net,\ id\ [0-9a-f]+-1\):\ [0-9]+\ s\ left ]] ||
		fail "no header with the kind, id and seconds left: $(excerpt "$SCREEN")"
	[[ $SCREEN == *'connect to example.invalid:80 (HTTP)'* ]] || fail "no summary: $(excerpt "$SCREEN")"
	at_keys y
	at_end
	assert_host_file "$WS/code.txt" code=502 'the connection allowed'
	[[ $SCREEN == *agent-end* ]] || fail "the agent's output after the answer is missing: $(excerpt "$SCREEN")"
	at_off_screen
	at_events
	at_has_event 'y' '"phase":"answered"' '"decision":"allow"' '"by":"terminal"' '"scope":"once"'
}

# n: the proxy refuses (403), the denial is the terminal's.
test_approve_terminal_net_no() {
	at_start "$AT_NET
approve timeout 20" "$AT_CURL >code.txt"
	at_asked
	at_keys n
	at_end
	assert_host_file "$WS/code.txt" code=403 'the connection refused'
	at_off_screen
	at_events
	at_has_event 'n' '"phase":"answered"' '"decision":"deny"' '"by":"terminal"'
}

# No key within `approve timeout 3`: refused; meanwhile the seconds left
# count down and the question follows a resized terminal to its new bottom
# line; it is taken down at the timeout.
test_approve_terminal_net_timeout() {
	at_start "$AT_NET
approve timeout 3" "$AT_CURL >code.txt; echo agent-end"
	at_asked
	"${AT_TMUX[@]}" resize-window -t at -x 70 -y 20 2>/dev/null ||
		"${AT_TMUX[@]}" resize-pane -t at -x 70 -y 20
	at_wait '^ warden asks \(net, id [^)]*\): [12] s left' 5 ||
		fail "the seconds left do not count down: $(excerpt "$SCREEN")"
	local lines
	lines=$(wc -l <<<"$SCREEN")
	[[ $lines == 20 && $(tail -n 1 <<<"$SCREEN") == ' [y] yes once'* ]] ||
		fail "after the resize, the keys are not on the bottom line ($lines lines): $(excerpt "$SCREEN")"
	at_end
	assert_host_file "$WS/code.txt" code=403 'no answer is a denial'
	at_off_screen
	at_events
	at_has_event 'timeout' '"phase":"timeout"' '"decision":"deny"'
	[[ $(at_count '"phase":"answered"') == 0 ]] || fail "answered though no key was pressed"
}

# s: the second connection to the same destination in the session is not
# asked again: the answer is remembered.
test_approve_terminal_session_scope() {
	at_start "$AT_NET
approve timeout 20" "$AT_CURL >code1.txt; $AT_CURL >code2.txt"
	at_asked
	at_keys s
	at_end
	assert_host_file "$WS/code1.txt" code=502 'the first connection'
	assert_host_file "$WS/code2.txt" code=502 'the second connection'
	at_events
	at_has_event 's' '"phase":"answered"' '"decision":"allow"' '"by":"terminal"' '"scope":"session"'
	at_has_event 'the second' '"phase":"remembered"' '"decision":"allow"' '"by":"terminal"'
	[[ $(at_count '"phase":"asked"') == 1 ]] || fail "asked more than once"
}

# The agent writes y, s, Enter and the question's own text to its terminal
# (stdout and /dev/tty) and tries to type y into it (TIOCSTI: refused, logged) while the question is up (from when its connection
# to the proxy, port 3128, is open): none of it answers, none of it reaches
# the screen meanwhile (it is held, and shown after); the user's n does
# answer.
test_approve_terminal_agent_cannot_answer() {
	# shellcheck disable=SC2016 # for the agent's shell
	at_start "$AT_NET
approve timeout 25" '(until grep -q " 0100007F:0C38 01 " /proc/net/tcp; do sleep 0.05; done
	sleep 0.3
	python3 -c "import fcntl, termios; fcntl.ioctl(open(\"/dev/tty\"), termios.TIOCSTI, b\"y\")" 2>/dev/null
	i=0; while [ $i -lt 40 ]; do
	printf "y\n"; printf "y\r"; printf "s"; printf "\033[y\n"
	printf " [y] yes once   [s] yes, this session   [n] no (or Enter, Esc) AGENT\n"
	printf "y\n" >/dev/tty; i=$((i + 1)); sleep 0.1; done; echo agent-spam-done) &
'"$AT_CURL"' >code.txt; wait'
	at_asked
	sleep 2.5
	at_screen
	printf -- '--- screen 2.5 s later\n%s\n' "$SCREEN"
	at_events
	[[ $(at_count '"phase":"answered"') == 0 ]] || fail "the agent's writes answered the question"
	[[ $SCREEN != *AGENT* ]] || fail "the agent's output reached the screen while the question was up"
	[[ $SCREEN == *'warden asks (net'* ]] || fail "the question is not up any more: $(excerpt "$SCREEN")"
	at_keys n
	at_end
	assert_host_file "$WS/code.txt" code=403 'refused by the key'
	[[ $SCREEN == *agent-spam-done* ]] || fail "the agent's output after the question is missing: $(excerpt "$SCREEN")"
	at_events
	at_has_event 'n' '"phase":"answered"' '"decision":"deny"' '"by":"terminal"'
	[[ $(at_count '"phase":"answered"') == 1 ]] || fail "answered more than once"
	# typed (while the question was up) into its own terminal (TIOCSTI): refused, and on the record
	grep -h '"event":"syscall"' "$HOME/.local/state/warden/"*.jsonl | grep '"name":"ioctl"' |
		grep -q '"decision":"deny"' || fail "the agent's TIOCSTI is not on the record as refused"
}

# exec ask argv: y runs the program; n refuses it (the shell's exit 126) with
# an exec event "decision":"deny". (By its full path: a shell that finds
# its exec refused tries the next directory of PATH, and asks again.)
test_approve_terminal_exec() {
	# shellcheck disable=SC2016 # for the agent's shell
	at_start 'exec ask argv uname *
approve timeout 20' '/usr/bin/uname -s >one.txt; echo "rc=$?" >>one.txt; /usr/bin/uname -s >two.txt 2>/dev/null; echo "rc=$?" >>two.txt'
	at_asked
	if ! [[ $SCREEN =~ warden\ asks\ \(exec, && $SCREEN == *'run /usr/bin/uname -s (in '* ]]; then
		fail "not the exec's question: $(excerpt "$SCREEN")"
	fi
	local first=${SCREEN#*id }
	first=${first%%)*}
	at_keys y
	# the second question (a new id)
	at_wait "^ warden asks \(exec, id [0-9a-f]+-2\)" 10 || fail "no second question: $(excerpt "$SCREEN")"
	at_asked
	at_keys n
	at_end
	assert_host_file "$WS/one.txt" $'Linux\nrc=0' 'y: the program ran'
	assert_host_file "$WS/two.txt" 'rc=126' 'n: the program refused'
	at_events
	at_has_event 'y' "\"id\":\"$first\"" '"phase":"answered"' '"decision":"allow"' '"by":"terminal"'
	at_has_event 'n' '"phase":"answered"' '"decision":"deny"' '"by":"terminal"'
	grep -h '"event":"exec"' "$HOME/.local/state/warden/"*.jsonl | grep -F '"decision":"deny"' | grep -F uname >/dev/null ||
		fail "no exec event denying uname"
}

# Two questions at once: one on the screen, the other waiting (and said
# so); each answered in turn.
test_approve_terminal_queue() {
	# shellcheck disable=SC2016 # for the agent's shell
	at_start 'net ask a.invalid
net ask b.invalid
approve timeout 20' 'for h in a b; do (c=$(curl -s -o /dev/null -w "%{http_code}" http://$h.invalid/); echo "code=$c" >$h.txt) & done; wait'
	at_wait '1 more waiting' || fail "no second question waiting: $(excerpt "$SCREEN")"
	at_asked
	local first second
	first=$(grep -oE 'connect to [ab]\.invalid' <<<"$SCREEN" | head -n 1)
	first=${first#connect to }
	first=${first%.invalid}
	[[ -n $first ]] || fatal "which question is up: $(excerpt "$SCREEN")"
	second=$([[ $first == a ]] && echo b || echo a)
	at_keys y
	at_wait "connect to $second\\.invalid" 10 || fail "the second question did not come up: $(excerpt "$SCREEN")"
	[[ $SCREEN != *'more waiting'* ]] || fail "still more waiting: $(excerpt "$SCREEN")"
	at_asked
	at_keys n
	at_end
	assert_host_file "$WS/$first.txt" code=502 "the first ($first) allowed"
	assert_host_file "$WS/$second.txt" code=403 "the second ($second) refused"
	at_events
	[[ $(at_count '"by":"terminal"') == 2 ]] || fail "not two answers by the terminal"
}
