# t_ci.sh - `warden run --ci` (issue 37), from the outside: CI=true turns it
# on (and --no-ci off); an `exec ask` question with no reviewer or webhook
# is refused at once (the approval event answered by "ci", saying why),
# with a reviewer command the reviewer answers it; a detector `risk ask`
# (a freeze and a question) ends in a kill at once instead of waiting for
# an answer nobody can give; the artifacts directory ($RUNNER_TEMP's here)
# holds the audit log (which `warden log verify` passes), the verdict, the
# OCSF events, the workspace's diff stat and the Markdown summary, which is
# appended to $GITHUB_STEP_SUMMARY; `--fail-on high` turns a high alert
# into exit status 123 and leaves a clean session's 0. And the GitHub
# Action's script (packaging/github/run.sh) run as a runner would run it.
# shellcheck shell=bash
# The inside commands are single-quoted: their $ is the sandbox's.
# shellcheck disable=SC2016

# ci_env: the variables a GitHub runner sets, in this test's own places.
ci_env() {
	export CI=true RUNNER_TEMP=$T_TMP/runner GITHUB_STEP_SUMMARY=$T_TMP/step-summary.md
	mkdir -p "$RUNNER_TEMP"
	printf '# an earlier step\n' >"$GITHUB_STEP_SUMMARY"
	ART=$RUNNER_TEMP/warden-artifacts
}


# ci_approval: the last approval event ending a question, in LINE.
ci_approval() {
	LINE=$(grep -F '"event":"approval"' "$(latest_log)" | grep -E '"phase":"(answered|timeout)"' | tail -n 1)
}

# An `exec ask` rule, no reviewer, no webhook: refused at once (not after
# `approve timeout 30`), the event says CI mode; the exec fails (126).
test_ci_ask_refused() {
	ci_env
	printf 'exec ask argv date *\napprove timeout 30\n' >"$T_TMP/p"
	local t0=$SECONDS
	wsh 'date +%Y >/dev/null 2>&1; echo "date=$?"' --profile "$T_TMP/p"
	((SECONDS - t0 < 15)) || fail "the question took $((SECONDS - t0)) s: it was not refused at once"
	assert_out_line 'date=126' 'the exec refused'
	ci_approval
	[[ $LINE == *'"decision":"deny"'* && $LINE == *'"by":"ci"'* && $LINE == *'CI mode'* ]] ||
		fail "no refusal by ci in the log: $(excerpt "$LINE")"
}

# The same with a reviewer command: the reviewer allows.
test_ci_ask_reviewer() {
	ci_env
	mkdir -p "$T_TMP/rv"
	printf '#!/bin/sh\ncat >/dev/null\necho "{\\"decision\\": \\"allow\\", \\"reason\\": \\"ci test\\"}"\n' >"$T_TMP/rv/ok"
	chmod 0755 "$T_TMP/rv/ok"
	printf 'exec ask argv date *\napprove timeout 30\napprove command %s\n' "$T_TMP/rv/ok" >"$T_TMP/p"
	wsh 'date +%Y >/dev/null 2>&1; echo "date=$?"' --profile "$T_TMP/p"
	assert_out_line 'date=0' 'the exec allowed by the reviewer'
	ci_approval
	[[ $LINE == *'"decision":"allow"'* && $LINE == *'"by":"reviewer"'* ]] ||
		fail "not allowed by the reviewer: $(excerpt "$LINE")"
}

# The detector's `risk ask` freezes the sandbox and asks: in CI mode nobody
# can answer, so it is killed at once (exit 137) rather than frozen until
# `approve timeout 30`.
test_ci_risk_ask_kills() {
	ci_env
	printf 'risk ask 20\nrisk freeze off\nrisk kill off\napprove timeout 30\n' >"$T_TMP/p"
	local t0=$SECONDS
	wsh './wprobe unshare user; echo after; sleep 3; echo end' --profile "$T_TMP/p"
	((SECONDS - t0 < 15)) || fail "the frozen sandbox waited $((SECONDS - t0)) s"
	assert_rc 137
	grep -qx end <<<"$OUT" && fail 'the sandbox went on after the risk question'
	ci_approval
	[[ $LINE == *'"kind":"risk"'* && $LINE == *'"by":"ci"'* ]] || fail "the risk question was not refused by ci: $(excerpt "$LINE")"
	grep -F '"event":"action"' "$(latest_log)" | grep -F '"action":"kill"' >/dev/null || fail 'no kill action'
}

# The artifacts and the summary of a session in a git workspace that
# changes a file.
test_ci_artifacts() {
	ci_env
	have git || skip 'git is not installed'
	git init -q . && git -c user.name=t -c user.email=t@t add wprobe &&
		git -c user.name=t -c user.email=t@t commit -qm init || fatal 'git init failed'
	echo one >tracked && git add tracked && git -c user.name=t -c user.email=t@t commit -qm t
	wsh 'echo two >>tracked; echo new >new-file; ls >/dev/null; true'
	assert_rc 0
	assert_err_match 'CI summary in' 'the user is told where'
	local log id
	log=$(latest_log)
	id=$(basename "$log" .jsonl)
	[[ -f $ART/$id.jsonl ]] || fatal "no log in the artifacts: $(ls "$ART" 2>&1)"
	cmp -s "$log" "$ART/$id.jsonl" || fail 'the artifact log is not the session log'
	grep -q 'chain ok' "$ART/verify.txt" || fail "verify.txt: $(excerpt "$(cat "$ART/verify.txt" 2>&1)")"
	mkdir -p "$T_TMP/xs/warden" && chmod 0700 "$T_TMP/xs" "$T_TMP/xs/warden"
	cp "$ART/$id.jsonl" "$T_TMP/xs/warden/"
	XDG_STATE_HOME=$T_TMP/xs wardenc log verify "$id"
	assert_rc 0
	assert_out_match 'chain ok' 'warden log verify on the artifact log'
	grep -q '"class_uid":1007' "$ART/$id.ocsf.jsonl" || fail "no OCSF process activity: $(excerpt "$(head -c 300 "$ART/$id.ocsf.jsonl" 2>&1)")"
	local s=$ART/summary.md
	[[ -f $s ]] || fatal "no summary.md: $(ls "$ART")"
	grep -qF "## warden session $id" "$s" || fail 'the summary names no session'
	grep -qF '### Execs by program' "$s" && grep -qF '| `ls` |' "$s" || fail "no execs by program: $(excerpt "$(cat "$s")")"
	grep -qF 'verified' "$s" || fail 'the summary has no verification'
	grep -qE 'tracked \| +1 \+' "$s" || fail "no diff stat: $(excerpt "$(cat "$s")")"
	# the session's own changes, by its checkpoint (what git shows also
	# holds what was not committed before; an untracked file is missing)
	grep -qE '^  modified +tracked$' "$ART/changes.txt" || fail "no changes.txt: $(excerpt "$(cat "$ART/changes.txt" 2>&1)")"
	grep -qE '^  added +new-file$' "$s" || fail "the summary lacks the session's new file: $(excerpt "$(cat "$s")")"
	[[ $(head -n 1 "$GITHUB_STEP_SUMMARY") == '# an earlier step' ]] || fail 'GITHUB_STEP_SUMMARY was not appended to'
	grep -qF "## warden session $id" "$GITHUB_STEP_SUMMARY" || fail 'no summary in GITHUB_STEP_SUMMARY'
}

# The artifacts directory in the workspace (no RUNNER_TEMP: GitLab's and
# most CI's default): the agent can neither plant a symlink there for
# warden to write through at the end, nor a FIFO to hang it on (it is
# read-only inside); in a directory the agent could write (an --output),
# what it left is replaced, never followed or opened. A file outside stays
# as it was, the session ends, the artifacts are warden's own files.
test_ci_artifacts_planted() {
	export CI=true
	unset RUNNER_TEMP GITHUB_STEP_SUMMARY
	local victim=$T_TMP/victim.txt out=$T_TMP/out
	echo VICTIM >"$victim"
	mkdir -p "$T_TMP/victimdir"
	wsh "mkdir -p warden-artifacts; ln -s $victim warden-artifacts/summary.md; mkfifo warden-artifacts/verify.txt; echo rc=\$?"
	assert_rc 0 'the session ends'
	assert_out_line 'rc=1' 'the FIFO refused in the artifacts directory'
	assert_err_match 'warden-artifacts/summary.md: protected path' 'the refused symlink listed'
	[[ -f warden-artifacts/summary.md && ! -L warden-artifacts/summary.md ]] ||
		fail "summary.md is not warden's file: $(ls -la warden-artifacts 2>&1)"
	[[ $(<"$victim") == VICTIM ]] || fail "a file outside the workspace was written: $(head -c 200 "$victim")"
	timeout 60 "$WARDEN" run -q --ci --output "$out" --artifacts "$out/art" -- sh -c \
		"ln -s $victim $out/art/summary.md && ln -s $T_TMP/victimdir/planted $out/art/verify.txt && mkfifo $out/art/diffstat.txt && echo planted" \
		>"$T_TMP/o" 2>"$T_TMP/e"
	RC=$?
	((RC != 124)) || fatal 'warden hung on what the agent left in the artifacts directory'
	assert_rc 0 'the session in an --output ends'
	grep -qx planted "$T_TMP/o" || fatal "the agent could not plant: $(cat "$T_TMP/o" "$T_TMP/e")"
	[[ $(<"$victim") == VICTIM ]] || fail "warden wrote through a planted symlink: $(head -c 200 "$victim")"
	[[ ! -e $T_TMP/victimdir/planted ]] || fail 'warden made a file where a planted symlink led'
	[[ -f $out/art/summary.md && ! -L $out/art/summary.md && -f $out/art/verify.txt ]] ||
		fail "the artifacts are not warden's files: $(ls -la "$out/art")"
	[[ ! -e $out/art/diffstat.txt ]] || fail 'the FIFO stayed as diffstat.txt'
}

# An artifacts directory that cannot be made fails the session before its
# command runs (not after a long agent run, with exit status 0); a FIFO
# nothing reads as $GITHUB_STEP_SUMMARY is said, not waited on.
test_ci_artifacts_unusable() {
	export CI=true
	unset RUNNER_TEMP GITHUB_STEP_SUMMARY
	touch "$T_TMP/afile"
	wsh 'echo ran' --artifacts "$T_TMP/afile"
	assert_rc 125
	assert_out_lacks ran 'the command ran though its artifacts had nowhere to go'
	assert_err_match "refusing --artifacts $T_TMP/afile: not a directory" 'the reason'
	mkfifo "$T_TMP/fifo"
	GITHUB_STEP_SUMMARY=$T_TMP/fifo timeout 60 "$WARDEN" run -q --artifacts "$T_TMP/art" -- true \
		>/dev/null 2>"$T_TMP/e"
	RC=$?
	((RC != 124)) || fatal 'warden waited on a FIFO nothing reads'
	assert_rc 0
	matches -F 'a FIFO nothing reads' <"$T_TMP/e" || fail "not said: $(excerpt "$(<"$T_TMP/e")")"
	[[ -f $T_TMP/art/summary.md ]] || fail 'no summary.md'
}

# An artifacts directory warden refuses is left as it was: nothing made
# or written there at the end (a .git in a workspace that is no
# repository, a credential directory of the home), the summary only in
# $GITHUB_STEP_SUMMARY, saying there are no artifacts.
test_ci_artifacts_refused_untouched() {
	ci_env
	wsh 'echo ran' --artifacts .git
	assert_rc 125
	assert_out_lacks ran 'the command ran'
	assert_err_match 'refusing --artifacts .*\.git' 'the reason'
	assert_err_match 'no artifacts written to \.git' 'no artifacts said'
	[[ ! -e .git ]] || fail "a .git made in the workspace: $(ls -la .git)"
	mkdir -p "$HOME/.ssh"
	wsh 'echo ran' --artifacts "$HOME/.ssh/ci"
	assert_rc 125
	assert_err_match 'refusing --artifacts' 'the reason'
	[[ ! -e $HOME/.ssh/ci ]] || fail "written in ~/.ssh: $(ls -la "$HOME/.ssh/ci")"
	matches -F -- '- artifacts: none (warden refused their directory' <"$GITHUB_STEP_SUMMARY" ||
		fail "the step summary does not say: $(excerpt "$(<"$GITHUB_STEP_SUMMARY")")"
}

# The summary of a session warden could not run (a published port already
# in use) says warden failed and why, and --fail-on was not evaluated (it
# said "passed"); a session --fail-on fails gives the command's own exit
# status too; the risk peak is the score's highest (a medium and a low
# alert: 12, where the `risk` events mark only the threshold 10 crossed);
# a program name with a terminal's escape sequences, or with a
# right-to-left override that would make it read as another, is shown
# escaped.
test_ci_summary_says() {
	ci_env
	have python3 || skip 'python3 is not installed'
	local port
	python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T_TMP/port" &
	bg_track $!
	wait_for "$T_TMP/port" '^[0-9]' 10 || fatal 'no port'
	port=$(<"$T_TMP/port")
	wsh 'echo ran' --publish "$port:8000" --fail-on low
	assert_rc 125
	grep -qF -- '- --fail-on low: **not evaluated** (exit status 125: warden failed)' "$ART/summary.md" ||
		fail "--fail-on said evaluated: $(excerpt "$(cat "$ART/summary.md")")"
	grep -qE "^- warden's error: .*$port" "$ART/summary.md" || fail "the summary gives no error: $(excerpt "$(cat "$ART/summary.md")")"
	printf 'risk warn off\nrisk ask off\nrisk freeze off\nrisk kill off\n' >"$T_TMP/quiet"
	cp /bin/true "$(printf 'x\033]0;pwned\007')"
	cp /bin/true "$(printf 'y\u202etxt.sh')"
	wsh 'env >/dev/null; cat /proc/self/environ >/dev/null; ./x*; ./y*; exit 3' --profile "$T_TMP/quiet" --fail-on low
	assert_rc 123
	grep -qF -- "- exit status: 123 (an alert at or above --fail-on; the command's own: 3)" "$ART/summary.md" ||
		fail "no command status: $(grep 'exit status' "$ART/summary.md")"
	grep -qE 'risk peak 12\.0$' "$ART/summary.md" || fail "not the peak: $(grep 'risk peak' "$ART/summary.md")"
	! grep -qF "$(printf '\033')" "$ART/summary.md" || fail 'an escape byte in the summary'
	grep -qF 'x\x1b]0;pwned\x07' "$ART/summary.md" || fail "the program not shown escaped: $(grep -F pwned "$ART/summary.md")"
	! grep -qF "$(printf '\u202e')" "$ART/summary.md" || fail 'a right-to-left override in the summary'
	grep -qF 'y\u202etxt.sh' "$ART/summary.md" || fail "the program not shown escaped: $(grep -F txt.sh "$ART/summary.md")"
}

# --no-ci: CI=true or not, no artifacts.
test_ci_no_ci() {
	ci_env
	wsh 'true' --no-ci
	assert_rc 0
	[[ -e $ART ]] && fail "--no-ci made $ART"
	wsh 'true'
	[[ -f $ART/summary.md ]] || fail 'CI=true did not turn CI mode on'
}

# --fail-on high: a session with a high alert (escape.namespace) ends 123,
# a clean one 0; --fail-on names a severity.
test_ci_fail_on() {
	ci_env
	printf 'risk warn off\nrisk ask off\nrisk freeze off\nrisk kill off\n' >"$T_TMP/quiet"
	wsh './wprobe unshare user; true' --profile "$T_TMP/quiet" --fail-on high
	assert_rc 123
	grep -F '"event":"alert"' "$(latest_log)" | matches -F '"severity":"high"' || fail 'no high alert in the log'
	grep -qF -- '--fail-on high: **failed**' "$ART/summary.md" || fail "the summary does not say it failed"
	wsh 'true' --profile "$T_TMP/quiet" --fail-on high
	assert_rc 0
	wsh 'true' --fail-on severe
	assert_rc 125
	# given twice: refused, not the last one silently taken
	wsh 'echo ran' --fail-on critical --fail-on low
	assert_rc 125 '--fail-on twice'
	assert_out_lacks ran '--fail-on twice'
	assert_err_match 'given twice' 'said'
}

# An alert of a check other than the detector's rules (exec.denied, rated
# medium by the built-in `rate` lines) carries its rating in the log and
# counts for --fail-on and the summary as the risk score counts it (it had
# no severity: --fail-on low passed a session whose denied program ran).
test_ci_fail_on_rated_alert() {
	ci_env
	local t
	t=$(readlink -f /usr/bin/id)
	printf 'risk warn off\nrisk ask off\nrisk freeze off\nrisk kill off\nexec deny %s\n' "$t" >"$T_TMP/deny"
	wsh 'id; true' --profile "$T_TMP/deny" --fail-on medium
	assert_rc 123 'a denied program and --fail-on medium'
	grep -F '"event":"alert"' "$(latest_log)" | grep -F '"rule":"exec.denied"' |
		matches -F '"severity":"medium"' || fail "exec.denied without its rating in the log"
	grep -qE 'alerts: [0-9]+ \(critical 0, high 0, medium [1-9]' "$ART/summary.md" ||
		fail "the summary does not count it: $(excerpt "$(cat "$ART/summary.md")")"
	wsh 'id; true' --profile "$T_TMP/deny" --fail-on high
	assert_rc 0 'a medium alert and --fail-on high'
}

# A question refused in CI mode is one refusal in the summary: the
# operation's own event counts, not the answer's approval event too (one
# denied exec was counted twice).
test_ci_refusal_counted_once() {
	ci_env
	have bash || skip 'bash is not installed'
	printf 'exec ask argv id *\n' >"$T_TMP/ask"
	wsh 'bash -c "id -u; true"' --profile "$T_TMP/ask"
	assert_rc 0
	grep -F '"event":"approval"' "$(latest_log)" | matches -F '"decision":"deny"' ||
		fail 'no refused question in the log'
	grep -qE '^- refusals: 1$' "$ART/summary.md" || fail "not one refusal: $(grep refusals "$ART/summary.md")"
}

# The GitHub Action: the step action.yml runs, run as a runner runs it (its
# inputs in the environment, GITHUB_ACTION_PATH the tree's root, warden on
# PATH: installed already, no deb), with a plain command (not an agent):
# the command runs in the sandbox, a high alert fails the step with 123,
# the artifacts' directory is the step's output, the summary appended.
test_ci_github_action() {
	ci_env
	local root here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	# the tree (tests/integration), or scripts/test's copy (integration)
	root=$here/../..
	[[ -f $root/action.yml ]] || root=$here/..
	[[ -f $root/action.yml && -f $root/packaging/github/run.sh ]] || skip "no action.yml or packaging/github/run.sh beside the tests ($root)"
	local step
	step=$(sed -n 's/^ *run: //p' "$root/action.yml")
	[[ -n $step ]] || fatal 'action.yml has no run step'
	mkdir -p "$T_TMP/bin"
	ln -sf "$WARDEN" "$T_TMP/bin/warden"
	printf 'risk warn off\nrisk ask off\nrisk freeze off\nrisk kill off\n' >"$T_TMP/quiet"
	: >"$T_TMP/gh-output"
	GITHUB_ACTION_PATH=$root GITHUB_OUTPUT=$T_TMP/gh-output PATH=$T_TMP/bin:$PATH \
		WARDEN_COMMAND='echo "inside $(cat /proc/1/comm)" >action.out; ./wprobe unshare user; true' \
		WARDEN_DEB='' WARDEN_FAIL_ON=high WARDEN_ARTIFACTS='' WARDEN_PROFILE=$T_TMP/quiet \
		timeout -k 5 "$WARDEN_TIMEOUT" bash -c "$step" </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out") ERR=$(<"$T_TMP/.err")
	printf -- '-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$RC" "$OUT" "$ERR"
	assert_rc 123 'the step fails on the high alert'
	grep -qF 'inside ' "$WS/action.out" 2>/dev/null || fail 'the command did not run'
	grep -qF "artifacts=$ART" "$T_TMP/gh-output" || fail "no artifacts output: $(excerpt "$(cat "$T_TMP/gh-output")")"
	[[ -f $ART/summary.md ]] || fail "no summary in $ART"
	grep -qF -- '--fail-on high: **failed**' "$GITHUB_STEP_SUMMARY" || fail 'the step summary does not say it failed'
	grep -qF '"event":"session.start"' "$(latest_log)" || fail 'no session log'
	GITHUB_ACTION_PATH=$root PATH=$T_TMP/bin:$PATH WARDEN_COMMAND=true WARDEN_DEB=$T_TMP/missing.deb \
		bash -c "$step" </dev/null >/dev/null 2>"$T_TMP/.err"
	RC=$?
	ERR=$(<"$T_TMP/.err")
	assert_rc 125 'a deb that is not there'
	assert_err_match 'deb: no file' 'it says so'
}

# A detector freeze with nobody to decide: even on a terminal (script(1)'s),
# CI mode assumes no one reads it, so under `freeze timeout auto` the frozen
# sandbox is killed at once (exit 137) rather than in 10 minutes.
test_ci_freeze_on_terminal() {
	have script || skip 'script(1) is not installed'
	ci_env
	local t0=$SECONDS
	wscript -- sh -c './wprobe unshare user; ./wprobe ptrace 1; ./wprobe bpf; echo went-on; sleep 60'
	((SECONDS - t0 < 20)) || fail "the frozen session lasted $((SECONDS - t0)) s"
	assert_rc 137
	grep -qx went-on <<<"$OUT" && fail 'the sandbox went on after its freeze'
	grep -F '"event":"action"' "$(latest_log)" | grep -F '"action":"kill"' | matches -F 'nobody to decide' ||
		fail "no kill for want of someone to decide: $(excerpt "$(grep -F '"event":"action"' "$(latest_log)")")"
}

# The Action's step with the real Claude Code (agent input claude) against
# the mock of the Anthropic API (t_agent_claude.sh's), the command given as
# a user would (a simple command: run as is, the client found by its name):
# the agent's Bash tool writes its marker, the step passes, the summary
# counts the tool's shell among the execs.
test_ci_github_action_claude() {
	have python3 || skip 'python3 is not installed (the mock needs it)'
	ci_env
	local here root step
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	root=$here/../..
	[[ -f $root/action.yml ]] || root=$here/..
	[[ -f $root/action.yml ]] || skip "no action.yml beside the tests"
	# shellcheck source=t_agent_claude.sh
	source "$here/t_agent_claude.sh"
	claude_install
	mock_start 'echo e2e-marker > marker.txt'
	step=$(sed -n 's/^ *run: //p' "$root/action.yml")
	mkdir -p "$T_TMP/bin"
	ln -sf "$WARDEN" "$T_TMP/bin/warden"
	GITHUB_ACTION_PATH=$root GITHUB_OUTPUT=$T_TMP/gh-output PATH=$T_TMP/bin:$CLAUDE_BIN:$PATH \
		ANTHROPIC_BASE_URL=http://127.0.0.1:$MOCK_PORT ANTHROPIC_API_KEY=$CLAUDE_KEY \
		WARDEN_COMMAND='claude -p "do the task" --dangerously-skip-permissions' WARDEN_AGENT=claude \
		WARDEN_FAIL_ON=high timeout -k 5 120 bash -c "$step" </dev/null >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out") ERR=$(<"$T_TMP/.err")
	printf -- '-> rc=%s\n--- stdout\n%s\n--- stderr\n%s\n' "$RC" "$OUT" "$ERR"
	assert_rc 0 'the step'
	assert_host_file "$WS/marker.txt" e2e-marker "the agent's Bash tool"
	grep -qE '^\| `(bash|sh)` \|' "$ART/summary.md" || fail "the summary has no shell exec (the Bash tool): $(excerpt "$(sed -n '/Execs/,$p' "$ART/summary.md")")"
	grep -q 'chain ok' "$ART/verify.txt" || fail 'the artifact log is not verified'
}

# An alert's `what` quotes what the agent wrote (here a git config's
# section name): in the summary it is a code span, so that no Markdown in
# it renders on the job's page (emphasis, a link, HTML closing the table:
# "**All clear: no alerts** [open full report](...)").
test_ci_summary_alert_markdown() {
	ci_env
	have git || skip 'git is not installed'
	printf 'risk warn off\nrisk ask off\nrisk freeze off\nrisk kill off\n' >"$T_TMP/quiet"
	wsh 'git init -q sub && printf "[remote \"</td></tr></table>**All clear** [report](https://evil.example/r)\"]\n\tuploadpack = y\n" >> sub/.git/config' \
		--profile "$T_TMP/quiet"
	assert_rc 0
	local row
	row=$(grep -F 'All clear' "$ART/summary.md") || fail "no alert row: $(excerpt "$(cat "$ART/summary.md")")"
	[[ $row =~ ^\|\ \`git\.created-in-sandbox\ \(high\)\`\ \|\ \`[^\`]*\*\*All\ clear\*\*[^\`]*\`\ \|\ 1\ \|$ ]] ||
		fail "the alert's text is not a code span: $row"
}

# The artifacts directory in the workspace of a git repository (no
# RUNNER_TEMP): ignored by git, so that the job's `git add -A` does not
# commit the audit log nor `git status` list warden's files as the
# project's.
test_ci_artifacts_git_ignored() {
	export CI=true
	unset RUNNER_TEMP GITHUB_STEP_SUMMARY
	have git || skip 'git is not installed'
	git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m i ||
		fatal 'no repository'
	wsh 'echo work > work.txt'
	assert_rc 0
	[[ -f warden-artifacts/summary.md ]] || fatal "no artifacts: $(ls -A)"
	local st
	st=$(git status --porcelain --untracked-files=all)
	[[ $st == *'?? work.txt'* ]] || fail "git status does not list the agent's file: $st"
	[[ $st != *warden-artifacts* ]] || fail "git status lists warden's artifacts: $st"
}
