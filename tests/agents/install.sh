#!/usr/bin/env bash
# tests/agents/install.sh - install the real Claude Code CLI (npm package
# @anthropic-ai/claude-code) for the end-to-end agent tests, once, into a
# cache prefix that later runs reuse, and print that prefix on stdout.
#
#   install.sh [PREFIX]
#
# Without PREFIX: $WARDEN_TEST_NPM_PREFIX if set; else, as root,
# /var/cache/warden-tests/npm (world-readable, so the unprivileged test run
# reuses it); else a root-made install there if one is complete, or
# ${XDG_CACHE_HOME:-~/.cache}/warden-tests/npm. An install counts once its
# stamp file is written. Exit 0 with the prefix printed; exit 3 when npm or
# the registry is not available (the tests then say SKIP); 1 on bad usage.
set -uo pipefail

pkg=@anthropic-ai/claude-code
stamp=.warden-tests-installed
shared=/var/cache/warden-tests/npm

complete() { [[ -f $1/$stamp && -x $1/bin/claude ]]; }

if (($# > 1)); then
	echo "usage: install.sh [PREFIX]" >&2
	exit 1
fi
prefix=${1:-${WARDEN_TEST_NPM_PREFIX:-}}
if [[ -z $prefix ]]; then
	if [[ $(id -u) == 0 ]] || complete "$shared"; then
		prefix=$shared
	else
		prefix=${XDG_CACHE_HOME:-$HOME/.cache}/warden-tests/npm
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
echo "install.sh: npm install -g --prefix $prefix $pkg" >&2
if ! timeout 300 npm install -g --prefix "$tmp" --no-fund --no-audit --loglevel=error "$pkg" >&2; then
	echo "install.sh: npm install failed (npm or the registry unavailable)" >&2
	exit 3
fi
# The package's postinstall puts the native binary in place of bin/claude.exe;
# without it (scripts disabled) the stub only prints an error.
if ! "$tmp/bin/claude" --version >/dev/null 2>&1; then
	echo "install.sh: the installed claude does not run: $("$tmp/bin/claude" --version 2>&1 | head -n 3)" >&2
	exit 3
fi
touch "$tmp/$stamp"
chmod -R a+rX "$tmp"
rm -rf "$prefix"
mv "$tmp" "$prefix" || exit 3
trap - EXIT
printf '%s\n' "$prefix"
