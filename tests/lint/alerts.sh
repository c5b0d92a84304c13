#!/usr/bin/env bash
# tests/lint/alerts.sh - every alert rule a check raises outside the
# detector's rules is in detect_other_alerts (src/detect/builtin_rules.c),
# which a user's `rate` line is checked against: a name missing there would
# make a valid rate line an error. The names are the string literals of
# the form FAMILY.NAME given as an alert's rule (`.rule = "..."`, a ternary
# of them, `alert(x, "...")`, `#define ..._RULE_... "..."`) in src/.
# Usage: alerts.sh SOURCE-ROOT
set -uo pipefail
root=${1:?usage: alerts.sh SOURCE-ROOT}
cd "$root" || exit 1
list=$(sed -n '/^const char \*const detect_other_alerts\[\]/,/};/p' src/detect/builtin_rules.c)
[[ -n $list ]] || { echo 'alerts.sh: detect_other_alerts not found'; exit 1; }
raised=$( {
	grep -rhoE '\.rule = [^,;]*' src --include=*.c
	grep -rhoE '(^|[^a-z_])alert\([a-z_]+, "[a-z]+\.[a-z_-]+"' src --include=*.c
	grep -rhoE ': "[a-z]+\.[a-z_-]+"' src --include=*.c | grep -E 'workspace\.' 
	grep -rhE '#define [A-Z_]*RULE[A-Z_]* "' src
} | grep -oE '"[a-z]+\.[a-z_-]+"' | sort -u)
n=$(wc -l <<<"$raised")
((n > 20)) || { echo "alerts.sh: only $n alert names found in src/"; exit 1; }
bad=0
while IFS= read -r name; do
	[[ $list == *"$name"* ]] || { echo "raised but not in detect_other_alerts: $name"; bad=1; }
done <<<"$raised"
exit $bad
