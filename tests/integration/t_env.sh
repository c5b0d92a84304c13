# t_env.sh - identity and environment: who the command is inside, which
# variables reach it.
# shellcheck shell=bash

test_identity() {
	wsh 'id -u; id -g; id -G; whoami; echo "$HOME"; cat /proc/sys/kernel/hostname; uname -n;
	     ls -A "$HOME" | grep -vxE "\.aws|\.config|\.env|\.ssh" | wc -l; id -un; echo "user=$USER logname=$LOGNAME"'
	assert_rc 0
	local -a l
	mapfile -t l <<<"$OUT"
	[[ ${l[0]:-} == 1000 ]] || fail "id -u = ${l[0]:-}"
	[[ ${l[1]:-} == 1000 ]] || fail "id -g = ${l[1]:-}"
	[[ ${l[2]:-} == 1000 ]] || fail "id -G = '${l[2]:-}' (expected no supplementary groups)"
	[[ ${l[3]:-} == agent ]] || fail "whoami = ${l[3]:-}"
	[[ ${l[4]:-} == /home/agent ]] || fail "HOME = ${l[4]:-}"
	[[ ${l[5]:-} == warden ]] || fail "hostname = ${l[5]:-}"
	[[ ${l[6]:-} == warden ]] || fail "uname -n = ${l[6]:-}"
	[[ ${l[7]:-} == 0 ]] || fail "HOME holds more than the decoys (${l[7]:-?} entries)"
	[[ ${l[8]:-} == agent ]] || fail "id -un = ${l[8]:-}"
	[[ ${l[9]:-} == 'user=agent logname=agent' ]] || fail "${l[9]:-USER/LOGNAME missing}"
	wrun -- ./wprobe ids
	assert_out_match '^ALLOWED uid=1000 euid=1000 gid=1000 egid=1000 groups=(1000)?$' 'getgroups'
	wsh 'echo x > "$HOME/file" && cat "$HOME/file"'
	assert_out_eq x 'HOME is writable'
	[[ $(hostname) != warden ]] || note 'the host is also called warden'
}

test_env_allowlist() {
	local extra
	export AWS_SECRET_ACCESS_KEY=bait-aws GITHUB_TOKEN=bait-gh WARDENTEST_SECRET=bait-x
	export SSH_AUTH_SOCK=/tmp/bait.sock DISPLAY=:99 XDG_RUNTIME_DIR=/run/user/4242
	export LD_PRELOAD='' LD_LIBRARY_PATH=/nonexistent-bait DBUS_SESSION_BUS_ADDRESS=unix:path=/bait
	export LANG=C.UTF-8 LC_MESSAGES=C TZ=UTC TERM=xterm-wardentest COLORTERM=truecolor NO_COLOR=1
	wrun -- env
	assert_rc 0
	for v in AWS_SECRET_ACCESS_KEY GITHUB_TOKEN WARDENTEST_SECRET SSH_AUTH_SOCK DISPLAY \
		XDG_RUNTIME_DIR LD_PRELOAD LD_LIBRARY_PATH DBUS_SESSION_BUS_ADDRESS; do
		grep -q "^$v=" <<<"$OUT" && fail "$v reached the command"
	done
	assert_out_lacks bait 'a bait value'
	for kv in LANG=C.UTF-8 LC_MESSAGES=C TZ=UTC TERM=xterm-wardentest COLORTERM=truecolor \
		NO_COLOR=1 HOME=/home/agent USER=agent LOGNAME=agent; do
		assert_out_line "$kv"
	done
	assert_out_match '^PATH=.' 'PATH'
	assert_out_match '^SHELL=/' 'SHELL'
	# warden's own proxy, and nothing else, is what tools are pointed at
	for kv in HTTP_PROXY=http://127.0.0.1:3128 HTTPS_PROXY=http://127.0.0.1:3128 \
		ALL_PROXY=socks5h://127.0.0.1:1080 NO_PROXY=localhost,127.0.0.1,::1 \
		http_proxy=http://127.0.0.1:3128 https_proxy=http://127.0.0.1:3128 \
		all_proxy=socks5h://127.0.0.1:1080 no_proxy=localhost,127.0.0.1,::1 NODE_USE_ENV_PROXY=1; do
		assert_out_line "$kv"
	done
	extra=$(grep -oE '^[A-Za-z_][A-Za-z0-9_]*=' <<<"$OUT" | tr -d = |
		grep -vxE 'PATH|LANG|LANGUAGE|LC_[A-Z_]+|TERM|COLORTERM|TZ|NO_COLOR|USER|LOGNAME|HOME|SHELL|PWD|(HTTP|HTTPS|ALL|NO)_PROXY|(http|https|all|no)_proxy|NODE_USE_ENV_PROXY' |
		grep -vxE "$ENV_QUIET" | tr '\n' ' ')
	[[ -z $extra ]] || fail "variables outside the allowlist: $extra"
}

# What the default profile sets to switch off tools' own update checks and
# telemetry (src/policy/builtin.c).
ENV_QUIET='NPM_CONFIG_UPDATE_NOTIFIER|NO_UPDATE_NOTIFIER|PIP_DISABLE_PIP_VERSION_CHECK|DENO_NO_UPDATE_CHECK|HOMEBREW_NO_AUTO_UPDATE|DO_NOT_TRACK|NEXT_TELEMETRY_DISABLED|DOTNET_CLI_TELEMETRY_OPTOUT'

# npm checks the registry for a newer npm at each run (its timestamp lives in
# the home, which starts empty each session): the proxy refused it and every
# `npm test` ended with a refusal listed. The default profile switches it
# off; a profile's `env unset` turns it back on.
test_env_update_checks_off() {
	have npm && have node || skip 'npm is not installed'
	printf '{"name":"t","version":"1.0.0","scripts":{"test":"node -e \\"process.exit(0)\\""}}\n' >package.json
	wrun -- npm test
	assert_rc 0 'npm test'
	[[ $ERR == *'refused during this session'* ]] && fail "a refusal listed: $(excerpt "$ERR")"
	grep -F '"event":"net"' "$(latest_log)" && fail 'npm tried a connection'
	wrun -- env
	local kv
	for kv in NPM_CONFIG_UPDATE_NOTIFIER=false NO_UPDATE_NOTIFIER=1 PIP_DISABLE_PIP_VERSION_CHECK=1 DO_NOT_TRACK=1; do
		assert_out_line "$kv"
	done
	printf 'env unset NPM_CONFIG_UPDATE_NOTIFIER\n' >"$T_TMP/notifier.profile"
	wrun --profile "$T_TMP/notifier.profile" -- npm test
	assert_rc 0 'npm test, the check on'
	grep -F '"event":"net"' "$(latest_log)" | matches -F '"host":"registry.npmjs.org"' ||
		fail 'no update check with the variable unset: the first half showed nothing'
	assert_err_match 'registry\.npmjs\.org:443: no rule allows it' 'the refusal listed'
}

test_env_option() {
	export GITHUB_TOKEN=passed-on-purpose AWS_SECRET_ACCESS_KEY=bait-aws
	wrun --env GITHUB_TOKEN --env WARDENTEST_SET=hello --env 'WARDENTEST_SP=a b=c' -- env
	assert_rc 0
	assert_out_line GITHUB_TOKEN=passed-on-purpose '--env NAME'
	assert_out_line WARDENTEST_SET=hello '--env NAME=VALUE'
	assert_out_line 'WARDENTEST_SP=a b=c' '--env NAME=VALUE with = and space'
	assert_out_lacks AWS_SECRET_ACCESS_KEY 'only the named variable'
}

# An --env that names no variable is an error before anything runs, not
# something quietly dropped (or passed on as a malformed entry).
test_env_option_refused() {
	local a
	for a in '=' '=x' '' 'A-B' 'A B=c' '1X=y' 'X.Y' 'é=1'; do
		wrun --env "$a" -- sh -c 'echo ran-anyway'
		assert_rc 125 "--env '$a'"
		assert_out_lacks ran-anyway "--env '$a': the command ran"
		assert_err_match '^warden: --env .*(empty argument|name before .=. is missing|is not a variable name)' \
			"--env '$a': a clear message"
	done
	export WARDENTEST_PASSED=from-host
	wrun --env _X1=ok --env WARDENTEST_PASSED --env 'Y=' -- sh -c 'echo "$_X1 $WARDENTEST_PASSED [${Y-unset}]"'
	assert_rc 0 'valid names'
	assert_out_eq 'ok from-host []' 'NAME=VALUE, NAME and an empty VALUE'
}
