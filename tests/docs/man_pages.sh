#!/usr/bin/env bash
# tests/docs/man_pages.sh WARDEN MANDIR SRCDIR - every man page renders
# with `man -l` without a warning, every command of warden's command table
# has its page, every option of the table (the one the parser is built
# from) appears in its command's page, every directive of the profile's
# grammar table (policy_directives[] in src/policy/parser.c) is in
# warden-profile(5) and every kind of event the sources emit is in
# warden-events(5): the docs cannot drift from the code. And no
# command of the table takes the same option twice. Exit 77 (skipped) without man or without the pages (no scdoc).
set -uo pipefail
warden=$1 mandir=$2 src=$3
command -v man >/dev/null || { echo "skipped: man (man-db) is not installed"; exit 77; }
[[ -f $mandir/warden.1 ]] || { echo "skipped: the man pages were not built (scdoc missing)"; exit 77; }

fail=0
bad() { echo "FAIL: $*"; fail=1; }

# render FILE: the page as text, one paragraph a line (no hyphenation or
# line breaks inside an option's name)
render() { MANWIDTH=1000 LC_ALL=C man -l "$1"; }

pages=("$mandir"/*.[15])
((${#pages[@]} >= 16)) || bad "only ${#pages[@]} pages in $mandir"
declare -A text
errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
for p in "${pages[@]}"; do
	out=$(render "$p" 2>"$errf")
	[[ ! -s $errf ]] || bad "$(basename "$p"): man -l says: $(cat "$errf")"
	text[$p]=$out
	grep -q '^NAME' <<<"$out" || bad "$(basename "$p"): no NAME section"
	grep -q '^SEE ALSO' <<<"$out" || bad "$(basename "$p"): no SEE ALSO section"
done

# The page of a command: warden-CMD.1, or the page it shares (installed as
# a symlink to it, doc/meson.build).
page_of() {
	case ${1%% *} in
	resume | kill) echo "$mandir/warden-freeze.1" ;;
	apply | discard) echo "$mandir/warden-undo.1" ;;
	*) echo "$mandir/warden-${1%% *}.1" ;;
	esac
}

table=$("$warden" __complete table) || { echo "FAIL: warden __complete table"; exit 1; }
[[ -n $table ]] || bad "empty command table"
nopts=0
main=${text[$mandir/warden.1]}
while IFS=$'\t' read -r path long short _kind; do
	page=$(page_of "$path")
	if [[ ! -f $page ]]; then
		[[ -n $long ]] || bad "command '$path' has no man page ($(basename "$page"))"
		continue
	fi
	if [[ -z $long ]]; then
		grep -qF "warden $path" <<<"${text[$page]}" || bad "$(basename "$page") does not show 'warden $path'"
		# and warden(1) names the command
		grep -qE "(^| |\|)${path%% *}( |\||$)" <<<"$main" || bad "warden.1 does not name ${path%% *}"
		continue
	fi
	nopts=$((nopts + 1))
	grep -qE -- "(^|[^a-z-])$long([^a-z-]|$)" <<<"${text[$page]}" ||
		bad "option $long of '$path' is not in $(basename "$page")"
	if [[ $short != - ]]; then
		grep -qE -- "(^|[^a-zA-Z-])$short([^a-zA-Z]|$)" <<<"${text[$page]}" ||
			bad "option $short of '$path' is not in $(basename "$page")"
	fi
done <<<"$table"
((nopts > 40)) || bad "only $nopts options in the table"
# the table itself: no command takes a long or a short option twice
dups=$(awk -F'\t' 'NF == 4 { print $1 "\t" $2; if ($3 != "-") print $1 "\t" $3 }' <<<"$table" | sort | uniq -d)
[[ -z $dups ]] || bad "options given twice in the command table: $(tr '\n\t' '; ' <<<"$dups")"
# the profile's and the events' pages: every directive and every kind
prof=${text[$mandir/warden-profile.5]}
# the grammar's table, one row a line: `{ "NAME", handler, ...` (directives.h)
directives=$(grep -oE '^[[:space:]]*\{ "[a-z-]+",' "$src/src/policy/parser.c" | grep -oE '"[a-z-]+"' | tr -d '"')
(($(wc -w <<<"$directives") >= 20)) || bad "found only $(wc -w <<<"$directives") directives in parser.c's table"
for d in $directives; do
	grep -qE "^ +$d( |$)" <<<"$prof" || bad "warden-profile.5 does not document '$d'"
done
ev=${text[$mandir/warden-events.5]}
kinds=$( (grep -rhoE 'event_of\("[a-z._]+"|audit_emit\([^,]+, "[a-z._]+"' "$src/src"
	grep -hoE '"event", "[a-z._]+"' "$src/src/audit/log.c") | grep -oE '"[a-z._]+"$' | tr -d '"' | sort -u)
(($(wc -w <<<"$kinds") >= 15)) || bad "found only $(wc -w <<<"$kinds") event kinds in the sources"
for k in $kinds; do
	grep -qE "^ +$k( |,|$)" <<<"$ev" || bad "warden-events.5 does not document '$k'"
done
((fail == 0)) && echo "ok: ${#pages[@]} pages render, $nopts options of the table documented"
exit $fail
