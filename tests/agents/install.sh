#!/usr/bin/env bash
# tests/agents/install.sh - install a real agent CLI for the end-to-end agent
# tests, once, into a cache prefix that later runs reuse, and print that
# prefix on stdout. Two clients:
#   claude (default): npm @anthropic-ai/claude-code, cache .../npm
#   codex:            npm @openai/codex,             cache .../npm-codex
#   mise:             npm @jdxcode/mise,             cache .../npm-mise (the
#                     version manager the discovery tests resolve shims of)
#   playwright:       npm playwright-core,           cache .../npm-playwright
#                     (drives the system Chromium in the browser tests)
#
#   install.sh [--package claude|codex|mise|playwright] [PREFIX]
#
# Without PREFIX: $WARDEN_TEST_NPM_PREFIX (claude) or
# $WARDEN_TEST_NPM_CODEX_PREFIX (codex) if set; else, as root,
# /var/cache/warden-tests/npm[-codex] (world-readable, so the unprivileged
# test run reuses it); else a root-made install there if one is complete, or
# ${XDG_CACHE_HOME:-~/.cache}/warden-tests/npm[-codex]. An install counts once
# its stamp file is written, after `BIN --version` ran. Exit 0 with the prefix
# printed; exit 3 when npm or the registry is not available or the installed
# client does not run (the tests then say SKIP); 1 on bad usage.
set -uo pipefail

usage() {
	echo "usage: install.sh [--package claude|codex|mise|playwright] [PREFIX]" >&2
	exit 1
}

client=claude
if [[ ${1:-} == --package ]]; then
	(($# >= 2)) || usage
	client=$2
	shift 2
fi
case $client in
claude)
	pkg=@anthropic-ai/claude-code bin=claude cache=npm
	prefix=${1:-${WARDEN_TEST_NPM_PREFIX:-}}
	;;
codex)
	pkg=@openai/codex bin=codex cache=npm-codex
	prefix=${1:-${WARDEN_TEST_NPM_CODEX_PREFIX:-}}
	;;
mise) # not an agent: the version manager whose shims discovery resolves
	pkg=@jdxcode/mise bin=mise cache=npm-mise
	prefix=${1:-}
	;;
playwright) # not an agent: the browser tests drive the system Chromium with it
	pkg=playwright-core bin=playwright-core cache=npm-playwright
	prefix=${1:-}
	;;
*) usage ;;
esac
(($# <= 1)) || usage
stamp=.warden-tests-installed
shared=/var/cache/warden-tests/$cache

complete() { [[ -f $1/$stamp && -x $1/bin/$bin ]]; }

if [[ -z $prefix ]]; then
	if [[ $(id -u) == 0 ]] || complete "$shared"; then
		prefix=$shared
	else
		prefix=${XDG_CACHE_HOME:-$HOME/.cache}/warden-tests/$cache
	fi
fi

if complete "$prefix"; then
	printf '%s\n' "$prefix"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm is not installed" >&2
	exit 3
fi

# Install beside the prefix and rename, so that a half-done install is never
# taken for a complete one.
mkdir -p "$(dirname "$prefix")" || exit 3
tmp=$(mktemp -d "$prefix.tmp.XXXXXX") || exit 3
trap 'rm -rf "$tmp"' EXIT
# npm reads its global configuration from PREFIX/etc/npmrc: with --prefix
# the machine's settings there (a cafile for a TLS-inspecting proxy, say)
# would be lost. Carry the CA file over as the user's npm sees it.
ca=()
cafile=$(npm config get cafile 2>/dev/null) || cafile=
if [[ -n $cafile && $cafile != null && $cafile != undefined && -r $cafile ]]; then
	ca=(--cafile "$cafile")
fi
echo "install.sh: npm install -g --prefix $prefix ${ca[*]} $pkg" >&2
if ! timeout 300 npm install -g --prefix "$tmp" "${ca[@]}" --no-fund --no-audit --loglevel=error "$pkg" >&2; then
	echo "install.sh: npm install failed (npm or the registry unavailable)" >&2
	exit 3
fi
# Claude Code's postinstall puts the native binary in place of bin/claude.exe
# (without it, scripts disabled, the stub only prints an error); Codex's
# native binary comes in an optional dependency (missing with
# --omit=optional). Either way the client must run before it counts.
if ! "$tmp/bin/$bin" --version >/dev/null 2>&1; then
	echo "install.sh: the installed $bin does not run: $("$tmp/bin/$bin" --version 2>&1 | head -n 3)" >&2
	exit 3
fi
touch "$tmp/$stamp"
chmod -R a+rX "$tmp"
rm -rf "$prefix"
mv "$tmp" "$prefix" || exit 3
trap - EXIT
printf '%s\n' "$prefix"
