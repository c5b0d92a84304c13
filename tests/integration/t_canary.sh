# t_canary.sh - canary credentials, from the outside: the sandbox's home
# holds decoys (~/.aws/credentials, ~/.config/gh/hosts.yml, ~/.env, an SSH
# key pair) that differ in every session; opening one is a critical
# `canary.opened` alert naming its path inside, listing or stat'ing them is
# not; a decoy's token sent through the proxy (a header, a URL, a body) is
# refused and a critical `canary.token` alert that never holds the token;
# `canary off` places none; and the AWS CLI, when this machine has one,
# reads the decoy keys and fails cleanly, offline. Unprivileged too (the
# web server is on the host's loopback).
# shellcheck shell=bash

# shellcheck source=nethost.sh
source "$(dirname "${BASH_SOURCE[0]}")/nethost.sh"

# These tests look at the decoys and their alerts with the detector's
# thresholds off (CQ: the profile): under the defaults, the first decoy
# opened ends the session (t_detect.sh tests that).
cq() {
	printf 'risk freeze off\nrisk kill off\n%s\n' "${1:-}" >"$T_TMP/cq.profile"
	echo "$T_TMP/cq.profile"
}

# canary_alerts [RULE]: the newest session log's alert lines of RULE
# (canary.opened by default), in CALERTS.
canary_alerts() {
	local log
	log=$(latest_log)
	[[ -n $log ]] || fatal 'no session log'
	CALERTS=$(grep -F '"event":"alert"' "$log" | grep -F "\"rule\":\"${1:-canary.opened}\"")
}

test_canary_opened() {
	wsh 'cat ~/.aws/credentials' --profile "$(cq)"
	assert_rc 0 'cat ~/.aws/credentials'
	assert_out_match '^aws_access_key_id = AKIA[A-Z0-9]{16}$' 'an AWS key id shaped decoy'
	assert_out_match '^aws_secret_access_key = [A-Za-z0-9/+]{40}$' 'an AWS secret shaped decoy'
	canary_alerts
	grep -F '"path":"/home/agent/.aws/credentials"' <<<"$CALERTS" | grep -F '"severity":"critical"' >/dev/null ||
		fail "no critical canary.opened alert for ~/.aws/credentials: $(excerpt "$CALERTS")"
	[[ $(grep -c . <<<"$CALERTS") == 1 ]] || fail "one open, not one alert: $(excerpt "$CALERTS")"
	# the others, each by its own path, a write too
	wsh 'cat ~/.config/gh/hosts.yml ~/.ssh/id_ed25519 >/dev/null; echo x >> ~/.env' --profile "$(cq)"
	canary_alerts
	local p
	for p in .config/gh/hosts.yml .ssh/id_ed25519 .env; do
		grep -qF "\"path\":\"/home/agent/$p\"" <<<"$CALERTS" ||
			fail "no canary.opened alert for ~/$p: $(excerpt "$CALERTS")"
	done
	grep -qF '.aws/credentials' <<<"$CALERTS" && fail "an alert for a decoy this session did not open"
	return 0
}

# Listing the home and the decoys' directories, stat'ing a decoy: no open.
test_canary_untouched() {
	wsh 'ls -la ~ ~/.aws ~/.ssh ~/.config/gh >/dev/null && stat ~/.env >/dev/null &&
	     test -f ~/.aws/credentials && test -f ~/.ssh/id_ed25519 && echo present;
	     stat -c %a ~/.ssh/id_ed25519'
	assert_rc 0
	assert_out_has present 'the decoys are there'
	assert_out_line 600 'the private key is mode 0600'
	canary_alerts
	[[ -z $CALERTS ]] || fail "an alert without an open: $(excerpt "$CALERTS")"
}

test_canary_unique() {
	local script='cat ~/.aws/credentials ~/.config/gh/hosts.yml ~/.env ~/.ssh/id_ed25519.pub'
	wsh "$script" --profile "$(cq)"
	assert_rc 0
	local a=$OUT
	grep -qE '^    oauth_token: gho_[A-Za-z0-9]{36}$' <<<"$a" || fail "no gho_ token: $(excerpt "$a")"
	grep -qE '^OPENAI_API_KEY=sk-proj-[A-Za-z0-9]{20,}$' <<<"$a" || fail "no API key in .env: $(excerpt "$a")"
	grep -qE '^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/]{43} ' <<<"$a" ||
		fail "no ed25519 public key: $(excerpt "$a")"
	wsh "$script" --profile "$(cq)"
	local b=$OUT line
	[[ -n $a && -n $b ]] || fatal 'no decoys read'
	while read -r line; do
		[[ $line == *[0-9]* && ${#line} -ge 20 ]] || continue
		grep -qxF -- "$line" <<<"$b" && fail "the same in two sessions: $line"
	done <<<"$a"
	return 0
}

test_canary_off() {
	printf 'canary off\n' >"$T_TMP/c.profile"
	wardenc policy show --profile "$T_TMP/c.profile"
	assert_out_match '"canary": ?false' 'policy show says canary false'
	wardenc policy show
	assert_out_match '"canary": ?true' 'policy show says canary true by default'
	wsh 'ls -A ~; for f in .aws/credentials .config/gh/hosts.yml .env .ssh/id_ed25519; do
	       test -e ~/$f && echo "present $f"; done; true' --profile "$T_TMP/c.profile"
	assert_rc 0
	assert_out_lacks present 'a decoy with canary off'
	assert_out_lacks .aws 'a decoy directory with canary off'
	canary_alerts
	[[ -z $CALERTS ]] || fail "an alert with canary off: $(excerpt "$CALERTS")"
}

# A decoy's token through the proxy to an allowed loopback server: in a
# header, a URL (percent-encoded too), a body: each refused, each a
# critical canary.token alert without the token; a clean request passes.
test_canary_token_refused() {
	nh_need curl
	NH_WHERE=host nh_web web "$T_TMP" 127.0.0.1 0
	local port=$PORT u=http://127.0.0.1:$PORT
	# shellcheck disable=SC2016 # expanded inside
	wrun --profile "$(cq)" --allow-net "127.0.0.1:$port" -- sh -c '
		id=$(sed -n "s/^aws_access_key_id = //p" ~/.aws/credentials)
		gho=$(sed -n "s/^ *oauth_token: //p" ~/.config/gh/hosts.yml)
		sec=$(sed -n "s/^aws_secret_access_key = //p" ~/.aws/credentials | sed "s|/|%2F|g; s|+|%2B|g")
		printf "Authorization: Bearer %s\n" "$id" >/tmp/h
		echo "header=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" -H @/tmp/h '"$u"'/)"
		echo "url=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" "'"$u"'/?t=$gho")"
		echo "urlenc=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" "'"$u"'/?s=$sec")"
		echo "body=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" --data-binary @$HOME/.env '"$u"'/upload)"
		echo "clean=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" '"$u"'/)"'
	assert_out_has 'clean=200' 'a request without a token'
	local k
	for k in header url urlenc body; do
		grep -q "^$k=200" <<<"$OUT" && fail "a decoy token in the $k went through"
		grep -q "^$k=" <<<"$OUT" || fail "no result for $k"
	done
	# a host loopback port is relayed as a stream (no head parsed): each
	# refusal is where "stream" (heads and URLs: test_session_egress)
	canary_alerts canary.token
	[[ $(grep -c . <<<"$CALERTS") == 4 ]] || fail "expected four canary.token alerts: $(excerpt "$CALERTS")"
	grep -v "\"port\":$port" <<<"$CALERTS" | grep . >/dev/null && fail "a canary.token alert without the port"
	grep -F '"where":"stream"' <<<"$CALERTS" | grep -F '"path":"/home/agent/.env"' >/dev/null ||
		fail "no canary.token alert naming the .env decoy: $(excerpt "$CALERTS")"
	grep -v '"severity":"critical"' <<<"$CALERTS" | grep . >/dev/null && fail "a canary.token alert not critical"
	grep -qF '"host":"127.0.0.1"' <<<"$CALERTS" || fail "canary.token alerts lack their host"
	grep -qE 'AKIA|gho_|sk-proj-|sk_live_' <<<"$CALERTS" && fail "a token written into an alert"
	# what reached the server: nothing with a token
	grep -qE 'AKIA|gho_|%2F|sk-proj-' "$T_TMP/web.err" && fail "a token reached the server: $(excerpt "$(<"$T_TMP/web.err")")"
	return 0
}

# The AWS CLI with the decoys: it reads them and fails cleanly offline
# (skipped where there is no aws CLI this session can run).
test_canary_aws_cli() {
	local aws real py prefix
	aws=$(command -v aws 2>/dev/null) || skip 'no aws CLI on this machine'
	real=$aws
	# a pyenv shim runs pyenv, which the sandbox lacks: the real script
	if grep -q pyenv "$aws" 2>/dev/null; then
		real=$(ls -d "$(dirname "$aws")"/../versions/*/bin/aws 2>/dev/null | head -n 1)
		[[ -n $real ]] || skip "aws is a pyenv shim whose script is not found"
	fi
	real=$(realpath "$real" 2>/dev/null) && [[ -r $real ]] || skip "aws ($aws) is not readable here"
	py=$(head -n 1 "$real" | sed -n 's/^#! *//p' | awk '{print $1}')
	[[ -x $py ]] || skip "aws's interpreter ($py) is not runnable here"
	prefix=$(dirname "$(dirname "$real")")
	printf 'read-only %s\nrisk freeze off\nrisk kill off\n' "$prefix" >"$T_TMP/aws.profile"
	WARDEN_TIMEOUT=60 wrun --profile "$T_TMP/aws.profile" -- "$py" "$real" sts get-caller-identity \
		--cli-connect-timeout 3 --cli-read-timeout 3
	((RC != 0)) || fail 'aws succeeded with decoy keys'
	((RC != 124 && RC != 137)) || fail "aws did not end by itself (rc $RC)"
	grep -qiE 'Traceback' <<<"$ERR" && fail "aws crashed: $(excerpt "$ERR")"
	grep -qiE 'connect|proxy|refused|could not|unable' <<<"$ERR" || fail "aws did not say it could not connect: $(excerpt "$ERR")"
	canary_alerts
	grep -qF '"path":"/home/agent/.aws/credentials"' <<<"$CALERTS" ||
		fail "aws read the decoy keys without an alert: $(excerpt "$CALERTS")"
}
