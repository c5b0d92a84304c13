# t_usage.sh - bad usage, command by command: every command of the command
# table (`warden __complete table`, src/cli/cmdtab.c) given an unknown
# option, an argument too many or one missing exits 2 with its usage on
# stderr, as warden(1) says; `warden run` exits 125 (its command's own
# status could be 2) and points at its --help.
# shellcheck shell=bash

# For each command of the table: the arguments that are one too many (after
# what it needs), and those that miss one ('': none at all); '-' where no
# such call is bad usage (COMMAND..., NAME..., SESSION... take any number,
# or every argument is optional). A command added to the table without a
# row here fails the test.
declare -A USAGE_EXTRA=(
	[run]=- ['policy show']=- ['state list']=x ['state reset']='claude x' ['cache list']=x
	['cache clear']='a b' ['shim install']=- ['shim remove']=- ['shim list']=x ['task list']=x
	['task diff']='a b' ['task remove']='a b' [import]='claude a b' [init]=x
	[approve]='a allow b' ['rules show']=- ['rules check']='a b' [status]=x [freeze]='a b'
	[resume]='a b' [kill]='a b' [hook]=x ['log list']=x ['log show']='a b' ['log verify']='a b'
	['log export']=- ['log prune']='--older-than 1d x' [diff]='a b' [undo]='a b' [apply]='a b'
	[discard]='a b' [check]=x [doctor]=x
)
declare -A USAGE_MISSING=(
	['state reset']='' ['shim install']='' ['shim remove']='' ['task diff']='' ['task remove']=''
	[import]='' [approve]=a ['rules check']='' [freeze]='' [resume]='' [kill]=''
	['log export']='' ['log prune']=''
)

# usage_bad LABEL WANT PATH ARGS...: `warden PATH ARGS...` is bad usage:
# exit WANT, its usage (or warden run's pointer to it) on stderr.
usage_bad() {
	local label=$1 want=$2 path=$3
	shift 3
	# shellcheck disable=SC2086 # the path's words are the command's
	wardenc $path "$@"
	assert_rc "$want" "$label"
	if [[ $path == run ]]; then
		assert_err_match 'warden run --help lists the options' "$label"
	else
		assert_err_match "^usage: warden ${path%% *}( |$)" "$label: its usage"
	fi
}

test_usage_exit_status() {
	local path n=0 want args
	while read -r path; do
		n=$((n + 1))
		[[ -v USAGE_EXTRA[$path] ]] ||
			{ fail "'$path' has no row in t_usage.sh: say what is bad usage for it"; continue; }
		want=2
		[[ $path == run ]] && want=125
		usage_bad "warden $path --bogus" "$want" "$path" --bogus
		args=${USAGE_EXTRA[$path]}
		if [[ $args != - ]]; then
			# shellcheck disable=SC2086 # words
			usage_bad "warden $path $args (one too many)" "$want" "$path" $args
		fi
		if [[ -v USAGE_MISSING[$path] ]]; then
			# shellcheck disable=SC2086 # words
			usage_bad "warden $path ${USAGE_MISSING[$path]} (one missing)" "$want" "$path" \
				${USAGE_MISSING[$path]}
		fi
	done < <("$WARDEN" __complete table | awk -F'\t' 'NF == 1')
	((n >= 30)) || fail "only $n commands in the table"
	# an option's value warden cannot read, and an unknown subcommand
	usage_bad 'log show --since yesterday' 2 'log show' --since yesterday
	usage_bad 'log export --format cef' 2 'log export' --format cef
	usage_bad 'log frobnicate' 2 'log frobnicate'
	usage_bad 'log alone' 2 log
	usage_bad 'state reset of no agent' 2 'state reset' nosuch
	# --help: the usage on stdout, exit 0
	for path in 'cache clear' 'rules check' 'log show'; do
		# shellcheck disable=SC2086 # words
		wardenc $path --help
		assert_rc 0 "$path --help"
		assert_out_match "^usage: warden ${path%% *} " "$path --help"
	done
	# `--` ends the options: what follows is an operand
	wardenc cache clear -- "$WS"
	assert_rc 0 'cache clear -- DIR'
}

# An empty SESSION (a quoted "$(...)" whose command printed nothing) is an
# error that says so, for every command taking a session, never the latest
# session nor the workspace's newest; an empty question ID of `warden
# approve` likewise. (Unquoted, an empty $(...) is no argument at all: the
# shell's, which warden cannot tell from SESSION left out.)
test_usage_empty_session() {
	local path want
	wrun -- true
	assert_rc 0 'a session to fall back on'
	for path in 'log show' 'log verify' 'log export --format ocsf' diff undo apply discard \
		freeze resume kill; do
		want=125
		[[ $path == freeze || $path == resume || $path == kill ]] && want=2
		# shellcheck disable=SC2086 # the path's words are the command's
		wardenc $path ''
		assert_rc "$want" "$path ''"
		assert_err_match 'an empty session id \(a command substitution that printed nothing\?\)' \
			"$path ''"
		assert_out_lacks 'session ' "$path '': a session shown"
	done
	wardenc approve '' allow
	assert_rc 2 "approve '' allow"
	assert_err_match 'an empty question ID' "approve '' allow"
}
