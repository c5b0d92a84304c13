#!/usr/bin/env bash
# run.sh - the integration suite: runs every test_* function of every t_*.sh
# beside this script, each in a subshell with a fresh workspace and a fake
# HOME full of bait, and prints "ok - NAME" / "not ok - NAME (reason)" and at
# the end exactly "N passed, N failed" (exit 1 if any failed).
#
#   run.sh --warden PATH --wprobe PATH [--only REGEX] [--verbose] [--keep]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WARDEN='' WPROBE='' ONLY='' VERBOSE=0 KEEP=0

usage() {
	echo "usage: $0 --warden PATH --wprobe PATH [--only REGEX] [--verbose] [--keep]" >&2
	exit 2
}
while (($#)); do
	case $1 in
	--warden) WARDEN=${2:-}; shift 2 || usage ;;
	--wprobe) WPROBE=${2:-}; shift 2 || usage ;;
	--only) ONLY=${2:-}; shift 2 || usage ;;
	--verbose | -v) VERBOSE=1; shift ;;
	--keep) KEEP=1; shift ;;
	*) usage ;;
	esac
done
[[ -n $WARDEN && -n $WPROBE ]] || usage
for b in "$WARDEN" "$WPROBE"; do
	[[ -x $b ]] || { echo "run.sh: $b is not an executable file" >&2; exit 2; }
done
WARDEN=$(realpath "$WARDEN")
WPROBE=$(realpath "$WPROBE")
export WARDEN WPROBE
# warden's directories follow HOME (the fake one of each test); the agent
# profiles read the clients' variables, which the tests set themselves.
unset XDG_STATE_HOME XDG_DATA_HOME XDG_CACHE_HOME
unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN NODE_EXTRA_CA_CERTS
unset OPENAI_BASE_URL OPENAI_API_KEY CODEX_API_KEY CODEX_CA_CERTIFICATE SSL_CERT_FILE
# CI mode (warden run --ci) only where a test asks for it (t_ci.sh)
unset CI GITHUB_STEP_SUMMARY RUNNER_TEMP
export LANG=${LANG:-C.UTF-8}

# shellcheck source=lib.sh
source "$here/lib.sh"

tests=()
for f in "$here"/t_*.sh; do
	# shellcheck disable=SC1090
	source "$f"
	while read -r name; do
		tests+=("$name")
	done < <(grep -oE '^test_[A-Za-z0-9_]+[[:space:]]*\(\)' "$f" | sed -E 's/[[:space:]]*\(\)$//')
done

# Make a tree removable whatever the sandbox left in it (read-only dirs).
scrub() {
	local d
	for d; do
		[[ -e $d ]] || continue
		chmod -R u+rwX "$d" 2>/dev/null
		rm -rf "$d" 2>/dev/null || echo "# run.sh: could not remove $d" >&2
	done
}

passed=0 failed=0 times=()
echo "# warden: $WARDEN (uid $(id -u), $(uname -r))"
for t in "${tests[@]}"; do
	[[ -z $ONLY || $t =~ $ONLY ]] || continue
	T_TMP=$(mktemp -d)
	WS=$(mktemp -d)
	FAKE_HOME=$(mktemp -d)
	# each test's own runtime directory (mode 0700), where its sessions'
	# control sockets are: `warden status` in one test lists its sessions,
	# not another's running meanwhile
	RUN_DIR=$(mktemp -d)
	chmod 0755 "$WS" "$FAKE_HOME"
	mkdir -p "$FAKE_HOME/.ssh" "$FAKE_HOME/.aws"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n' "$BAIT" >"$FAKE_HOME/.ssh/id_rsa"
	printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$BAIT" "$BAIT" >"$FAKE_HOME/.aws/credentials"
	chmod 0700 "$FAKE_HOME/.ssh"
	chmod 0600 "$FAKE_HOME/.ssh/id_rsa" "$FAKE_HOME/.aws/credentials"
	cp "$WPROBE" "$WS/wprobe"
	chmod 0755 "$WS/wprobe"

	start=$(date +%s%N)
	(
		export T_TMP WS FAKE_HOME HOME=$FAKE_HOME XDG_RUNTIME_DIR=$RUN_DIR
		unset XDG_STATE_HOME
		cd "$WS" || exit 1
		"$t"
		exit 0
	) >"$T_TMP/.log" 2>&1 </dev/null
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	times+=("$ms ${t#test_}")

	if [[ -s $T_TMP/.bgpids ]]; then
		while read -r pid; do
			kill -KILL "$pid" 2>/dev/null
		done <"$T_TMP/.bgpids"
	fi

	if [[ -s $T_TMP/.reasons ]] || ((rc != 0 && rc != 77)); then
		[[ -s $T_TMP/.reasons ]] || echo "test exited with status $rc" >>"$T_TMP/.reasons"
		reason=$(awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$T_TMP/.reasons")
		echo "not ok - ${t#test_} ($reason)"
		failed=$((failed + 1))
		if ((VERBOSE)); then
			sed 's/^/#   /' "$T_TMP/.log" | head -n 200
		fi
	elif ((rc == 77)); then
		echo "ok - ${t#test_} # SKIP $(head -n 1 "$T_TMP/.skip" 2>/dev/null)"
		passed=$((passed + 1))
	else
		if ((VERBOSE)); then
			echo "ok - ${t#test_} (${ms} ms)"
		else
			echo "ok - ${t#test_}"
		fi
		passed=$((passed + 1))
	fi

	if ((KEEP)); then
		echo "#   kept: T_TMP=$T_TMP WS=$WS HOME=$FAKE_HOME XDG_RUNTIME_DIR=$RUN_DIR"
	else
		scrub "$T_TMP" "$WS" "$FAKE_HOME" "$RUN_DIR"
	fi
done

# the slowest tests, for the suite's time budget (scripts/test: 45 minutes)
if ((${#times[@]} > 10)); then
	printf '%s\n' "${times[@]}" | sort -rn | head -n 12 |
		awk '{ printf "%s%s %.1f s", (NR > 1 ? ", " : "# slowest: "), $2, $1 / 1000 } END { print "" }'
fi
echo "$passed passed, $failed failed"
((failed == 0))
