#!/usr/bin/env bash
# tests/docs/completions.sh WARDEN DIR - the completion scripts the build
# wrote from warden's command table (DIR: warden, _warden, warden.fish)
# load and complete warden's commands, options and their arguments: in
# bash (COMP_WORDS simulated), zsh (loaded by compinit, or skipped when zsh
# is not installed) and fish (`complete -C`, or skipped without fish).
set -uo pipefail
warden=$1 dir=$2
fail=0 skipped=()
bad() { echo "FAIL: $*"; fail=1; }
# `warden` on PATH is the one under test (the scripts call it for sessions)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$(realpath "$warden")" "$bin/warden"
export PATH=$bin:$PATH

# bash: complete LINE (the cursor at its end; a trailing space starts a new
# word) and print COMPREPLY one per line
bash_complete() {
	bash --norc --noprofile -c '
		source "$1" || exit 9
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$2 COMP_POINT=${#2}
		_warden warden "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/warden" "$1"
}
expect_bash() { # LINE WORD...: each WORD is offered
	local out
	out=$(bash_complete "$1") || bad "bash: completing '$1' failed"
	shift_line=$1
	shift
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$out" || bad "bash: '$shift_line' does not offer '$w' (got: $(tr '\n' ' ' <<<"$out"))"
	done
}
bash --norc -c 'source "$1" && complete -p warden' _ "$dir/warden" | grep -- '-F _warden warden' >/dev/null ||
	bad "bash: complete -p warden does not show the _warden function"
expect_bash "warden ru" run
expect_bash "warden run --pro" --profile
expect_bash "warden run --" --workspace --allow-net --secret --review --agent
expect_bash "warden run --agent " claude codex none
expect_bash "warden log s" show
expect_bash "warden log show --decision " allow deny
expect_bash "warden check -" --json --compare -p
expect_bash "warden doctor --" --profile
ws=$(mktemp -d)
touch "$ws/my.profile"
(cd "$ws" && bash_complete "warden run --profile my.") | grep -x my.profile >/dev/null || bad "bash: --profile does not complete file names"
rm -rf "$ws"
# nothing that is not an option of the parser
out=$(bash_complete "warden approve --")
[[ $(sort <<<"$out" | tr '\n' ' ') == "--follow --help --json --pattern --reason --session --ttl " ]] ||
	bad "bash: approve's options are not the table's: $out"

# zsh: the script loads (compinit, the function registered)
if command -v zsh >/dev/null; then
	zdir=$(mktemp -d)
	cp "$dir/_warden" "$zdir/"
	out=$(HOME=$zdir zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -d "$1/.zcompdump"
		source "$1/_warden" && print -r -- "${_comps[warden]}"' _ "$zdir" 2>&1)
	[[ $out == _warden ]] || bad "zsh: loading _warden: $out"
	zsh -n "$dir/_warden" || bad "zsh: _warden does not parse"
	rm -rf "$zdir"
else
	skipped+=("zsh (not installed)")
fi

# fish: complete -C runs the completions as the shell would
if command -v fish >/dev/null; then
	out=$(fish --no-config -c "source $dir/warden.fish; complete -C 'warden run --pro'" 2>&1)
	grep -q -- '^--profile' <<<"$out" || bad "fish: 'warden run --pro' does not offer --profile: $out"
	out=$(fish --no-config -c "source $dir/warden.fish; complete -C 'warden log '" 2>&1)
	grep -q '^verify' <<<"$out" || bad "fish: 'warden log ' does not offer verify: $out"
else
	skipped+=("fish (not installed)")
fi
((${#skipped[@]} == 0)) || echo "# skipped: ${skipped[*]}"
((fail == 0)) && echo "ok: completions load and complete from the command table"
exit $fail
