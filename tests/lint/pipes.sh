#!/usr/bin/env bash
# tests/lint/pipes.sh - no `| grep -q` in the project's shell scripts.
# Under `set -o pipefail` (the test runners, scripts/, bench/), grep -q
# leaves at its first match and the command before it dies of SIGPIPE when
# it writes again: the pipeline fails though the line was there, a test
# fails at random under load (seen in CI as wardenci). Write
# `| matches ARGS` in the integration tests (lib.sh) or
# `| grep ARGS >/dev/null` elsewhere. Usage: pipes.sh SOURCE-ROOT
set -uo pipefail
root=${1:?usage: pipes.sh SOURCE-ROOT}
cd "$root" || exit 1
mapfile -t files < <(find .ci scripts bench tests -path tests/fuzz/corpus -prune -o -type f \
	\( -name '*.sh' -o ! -name '*.*' \) -print | sort |
	while IFS= read -r f; do
		case $f in *.sh) echo "$f" ;; *) head -c 64 "$f" | head -n 1 | grep -E '^#!.*\b(ba)?sh\b' >/dev/null && echo "$f" ;; esac
	done)
((${#files[@]} > 20)) || { echo "pipes.sh: only ${#files[@]} shell scripts found under $root"; exit 1; }
bad=$(grep -nE '(^|[^|])\|[[:space:]]*grep[[:space:]]+(-[a-zA-Z]*q|--quiet|--silent)' "${files[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#')
if [[ -n $bad ]]; then
	printf 'a pipeline ends in grep -q (fails under pipefail when the writer gets SIGPIPE):\n%s\n' "$bad"
	exit 1
fi
echo "ok: ${#files[@]} shell scripts, no pipeline ends in grep -q"
