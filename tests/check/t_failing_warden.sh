#!/usr/bin/env bash
# tests/check/t_failing_warden.sh - a test of the harness run.sh itself: with
# a warden that fails every command, run.sh reports each of its tests as
# "not ok" with a reason, still ends with its "N passed, N failed" line
# counting every test, and exits 1. (It used to hit "res: unbound variable"
# under set -u and lose the reason.) Run by meson test, suite scripts.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
t=$(mktemp -d /tmp/warden-check-selftest-XXXXXX)
trap 'rm -rf "$t"' EXIT
printf '#!/bin/sh\necho "fake warden: failing on purpose" >&2\nexit 1\n' >"$t/warden"
chmod 755 "$t/warden"

# A user that does not exist: the part run as another user is skipped, so
# the shared copy of warden it makes for that user is never this fake.
WARDEN_CHECK_USER=wardentest-no-such-user WARDEN_TIMEOUT=20 \
	bash "$here/run.sh" --warden "$t/warden" </dev/null >"$t/out" 2>"$t/err"
rc=$?
cat "$t/out"
cat "$t/err" >&2

bad=0
no() { echo "FAIL: $*"; bad=1; }
((rc == 1)) || no "run.sh exited $rc, expected 1"
last=$(tail -n 1 "$t/out")
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	lines=$(grep -cE '^(not )?ok - ' "$t/out")
	((BASH_REMATCH[1] + BASH_REMATCH[2] == lines)) ||
		no "the summary counts $((BASH_REMATCH[1] + BASH_REMATCH[2])) tests, $lines were reported"
	((BASH_REMATCH[2] >= 10)) || no "only ${BASH_REMATCH[2]} failures counted"
else
	no "the last line is not the summary: '$last'"
fi
grep -q '^not ok - default profile holds as .*fake warden: failing on purpose' "$t/out" ||
	no "no clear 'not ok' line for the failing warden check"
grep -q '^not ok - --compare: reachable outside, denied inside (rc=1 .*fake warden' "$t/out" ||
	no "the --compare failure does not carry warden's stderr"
grep -q 'unbound variable' "$t/err" && no "$(grep -m 1 'unbound variable' "$t/err")"
((bad == 0)) && echo "run.sh with a failing warden: every test reported, summary printed"
exit "$bad"
