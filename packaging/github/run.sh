#!/usr/bin/env bash
# run.sh - the GitHub Action's step (action.yml at the tree's root): warden's
# .deb installed when WARDEN_DEB names one (a path, or an https:// URL
# downloaded to $RUNNER_TEMP), then `warden run --ci` running WARDEN_COMMAND
# in the sandbox (as is when it is a simple command, else with bash), with --fail-on WARDEN_FAIL_ON, --artifacts
# WARDEN_ARTIFACTS, --profile WARDEN_PROFILE and --agent WARDEN_AGENT when
# set (the command runs under bash: warden cannot pick the agent by name). The artifacts'
# directory goes to $GITHUB_OUTPUT (artifacts=DIR). Its exit status is
# warden's (doc/ci.md). tests/integration/t_ci.sh runs it as a runner would.
set -euo pipefail

die() { echo "warden action: $*" >&2; exit 125; }

# apt-get as root: directly, or with sudo (GitHub's runners have it).
as_root() {
	if [[ $(id -u) == 0 ]]; then "$@"; else sudo -n "$@"; fi
}

install_deb() {
	local deb=$1
	if [[ $deb == https://* ]]; then
		local to=${RUNNER_TEMP:-/tmp}/warden-action.deb
		curl -fsSL --retry 3 -o "$to" "$deb" || die "cannot download $deb"
		deb=$to
	elif [[ $deb == *://* ]]; then
		die "deb: only https:// URLs or a path ($deb)"
	fi
	[[ -f $deb ]] || die "deb: no file $deb"
	[[ $deb == /* ]] || deb=./$deb
	as_root apt-get install -y --no-install-recommends "$deb" >&2 || die "cannot install $deb"
}

[[ -n ${WARDEN_COMMAND:-} ]] || die 'the input command is empty'
[[ -n ${WARDEN_DEB:-} ]] && install_deb "$WARDEN_DEB"
command -v "${WARDEN:-warden}" >/dev/null || die 'warden is not installed: give the input deb'

artifacts=${WARDEN_ARTIFACTS:-${RUNNER_TEMP:+$RUNNER_TEMP/warden-artifacts}}
artifacts=${artifacts:-$PWD/warden-artifacts}
args=(run --ci --artifacts "$artifacts")
[[ -n ${WARDEN_FAIL_ON:-} ]] && args+=(--fail-on "$WARDEN_FAIL_ON")
[[ -n ${WARDEN_PROFILE:-} ]] && args+=(--profile "$WARDEN_PROFILE")
[[ -n ${WARDEN_AGENT:-} ]] && args+=(--agent "$WARDEN_AGENT")
[[ -n ${GITHUB_OUTPUT:-} ]] && printf 'artifacts=%s\n' "$artifacts" >>"$GITHUB_OUTPUT"

# A simple command (words and quotes: no $ ` \\ ; & | < > ( ) { } ~ # * ? [
# or newline) runs as is, so that warden finds the client by its name
# (its profile, its install tree); anything else is a shell line for bash.
cmd=(bash -c "$WARDEN_COMMAND")
if [[ $WARDEN_COMMAND != *[\$\`\\\;\&\|\<\>\(\)\{\}\~\#\*\?\[$'\n']* ]]; then
	eval "cmd=($WARDEN_COMMAND)" 2>/dev/null || cmd=(bash -c "$WARDEN_COMMAND")
	((${#cmd[@]})) || die 'the input command is empty'
fi

status=0
"${WARDEN:-warden}" "${args[@]}" -- "${cmd[@]}" || status=$?
exit "$status"
