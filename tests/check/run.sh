#!/usr/bin/env bash
# tests/check/run.sh - the tests of `warden check` and `warden doctor`: the
# default profile holds as root and as an unprivileged user, a profile that
# weakens the sandbox (read-only ~) fails and names the probe, --json is one
# valid document, --compare shows rows reachable outside and denied inside,
# bait is gone afterwards, bad input gets clear errors, doctor exits 0 here
# and names the active LSMs and where cgroup v2 is mounted.
# Prints "ok - NAME" / "not ok - NAME (reason)", then "N passed, N failed";
# exits 1 if anything failed.
#
#   tests/check/run.sh [--warden PATH]     (default: $WARDEN, else build*/warden)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
WARDEN=${WARDEN:-}
while (($#)); do
	case $1 in
	--warden) WARDEN=${2:-}; shift 2 || exit 2 ;;
	*) echo "usage: $0 [--warden PATH]" >&2; exit 2 ;;
	esac
done
if [[ -z $WARDEN ]]; then
	for b in "$root/build/warden" "$root/build-check/warden"; do
		[[ -x $b ]] && { WARDEN=$b; break; }
	done
fi
[[ -n $WARDEN && -x $WARDEN ]] || { echo "run.sh: no warden binary (use --warden PATH)" >&2; exit 2; }
WARDEN=$(realpath "$WARDEN")

T=$(mktemp -d /tmp/warden-check-tests-XXXXXX)
trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME=$T/state # keep the audit logs of these runs out of ~
TIMEOUT=${WARDEN_TIMEOUT:-60}

passed=0 failed=0
ok() { echo "ok - $1${2:+ # $2}"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1 ($2)"; failed=$((failed + 1)); }

# run NAME ARGS...: warden with a timeout; sets OUT, ERR, RC, and empties
# res (what a test's python check printed): a test whose warden failed before
# its check ran reports rc and stderr, never the previous test's res (and,
# under set -u, never an unbound variable).
res=
run() {
	res=
	timeout -k 5 "$TIMEOUT" "$@" >"$T/out" 2>"$T/err" </dev/null
	RC=$?
	OUT=$(<"$T/out")
	ERR=$(<"$T/err")
}

excerpt() { local s=${1//$'\n'/ ⏎ }; printf '%s' "${s:0:300}"; }

# py SCRIPT: run python3 on $T/out (a JSON document), print its output.
py() { python3 -c "import json,sys; d=json.load(open('$T/out')); $1"; }

# ---- the default profile, as the invoking user -------------------------
run "$WARDEN" check
summary=$(grep -E '^[0-9]+ probes: [0-9]+ held, [0-9]+ failed$' <<<"$OUT")
if [[ $RC -eq 0 && $summary =~ ^([0-9]+)\ probes:\ ([0-9]+)\ held,\ 0\ failed$ ]] &&
	((BASH_REMATCH[1] >= 50 && BASH_REMATCH[1] == BASH_REMATCH[2])); then
	ok "default profile holds as $(id -un) ($summary)"
else
	not_ok "default profile holds as $(id -un)" "rc=$RC summary='$summary' $(excerpt "$(grep -E 'NO$|did not' <<<"$OUT")$ERR")"
fi

# Each probe refused by seccomp left a syscall event in that session's log.
log=$(ls -t "${XDG_STATE_HOME:-$HOME/.local/state}/warden/"*.jsonl 2>/dev/null | head -n 1)
missing=()
for name in ptrace process_vm_readv mount pivot_root chroot setns unshare bpf perf_event_open \
	keyctl io_uring_setup userfaultfd kexec_load finit_module fsopen ioctl; do
	grep -q "\"event\":\"syscall\".*\"name\":\"$name\".*\"decision\":\"deny\"" "$log" 2>/dev/null ||
		missing+=("$name")
done
if [[ -n $log && ${#missing[@]} == 0 ]]; then
	ok "every probe refused by seccomp left a syscall event ($(grep -c '"event":"syscall"' "$log") in $(basename "$log"))"
else
	not_ok "every probe refused by seccomp left a syscall event" "log '$log' lacks: ${missing[*]}"
fi

# ---- --json -------------------------------------------------------------
run "$WARDEN" check --json
if ((RC == 0)) && python3 -m json.tool "$T/out" >/dev/null 2>&1 &&
	res=$(py '
p = d["probes"]
groups = {x["group"] for x in p}
keys = all({"name","group","expected","observed","detail","held"} <= set(x) for x in p)
assert d["held"] is True and d["profile"] == "builtin:default", "document"
assert len(p) >= 50 and len(groups) == 7 and keys, "probes"
assert all(x["held"] for x in p), "held"
print(len(p), len(groups))') ; then
	ok "--json is one valid document ($res: probes, groups)"
	ws=$(py 'print(d["workspace"])')
	base=${ws%/ws}
	if [[ $ws == /tmp/warden-check-*/ws && ! -e $base ]]; then
		ok "bait removed after the run ($base is gone)"
	else
		not_ok "bait removed after the run" "workspace '$ws' still there or unexpected"
	fi
else
	not_ok "--json is one valid document" "rc=$RC $(excerpt "$OUT$ERR")"
fi

# ---- --compare ----------------------------------------------------------
run "$WARDEN" check --compare --json
if ((RC == 0)) && res=$(py '
need = ["visibility", "inherited state", "network"]
taken = {}
for x in d["probes"]:
    if x["outside"]["observed"] == "allowed" and x["observed"] == "denied":
        taken.setdefault(x["group"], []).append(x["name"])
missing = [g for g in need if not taken.get(g)]
assert not missing, "no row reachable outside and denied inside in: " + ", ".join(missing)
print("; ".join(g + ": " + ",".join(taken[g][:3]) for g in need))' 2>&1); then
	ok "--compare: reachable outside, denied inside ($res)"
else
	not_ok "--compare: reachable outside, denied inside" "rc=$RC $(excerpt "$res $ERR")"
fi
run "$WARDEN" check --compare
if ((RC == 0)) && grep -qE '^  PROBE +EXPECTED +OUTSIDE +INSIDE +HELD$' <<<"$OUT" &&
	grep -qE '^  leaked-fd +denied +allowed: .* +denied: EBADF +yes$' <<<"$OUT"; then
	ok "--compare prints both columns side by side"
else
	not_ok "--compare prints both columns side by side" "rc=$RC $(excerpt "$(head -5 <<<"$OUT")$ERR")"
fi

# ---- a weakened sandbox: read-only ~ --------------------------------------
fake=$T/home
mkdir -p "$fake/.ssh"
echo 'BAIT-NOT-A-REAL-KEY (warden check test)' >"$fake/.ssh/id_rsa"
chmod 600 "$fake/.ssh/id_rsa"
printf '# weakens the sandbox on purpose\nread-only ~\n' >"$T/weak.profile"
HOME=$fake run "$WARDEN" check --profile "$T/weak.profile"
if ((RC == 1)) && grep -qE '^did not hold:.* home-ssh( |$)' <<<"$OUT" &&
	grep -qE '^  home-ssh +denied +allowed: opened .*\.ssh.* +NO$' <<<"$OUT"; then
	ok "read-only ~ makes check fail and names home-ssh ($(grep '^did not hold' <<<"$OUT"))"
else
	not_ok "read-only ~ makes check fail and names home-ssh" "rc=$RC $(excerpt "$(grep -E 'NO$|did not|probes:' <<<"$OUT")$ERR")"
fi
HOME=$fake run "$WARDEN" check --profile "$T/weak.profile" --json
if ((RC == 1)) && res=$(py '
bad = [x["name"] for x in d["probes"] if not x["held"]]
assert d["held"] is False and "home-ssh" in bad, bad
print(",".join(bad))' 2>&1); then
	ok "read-only ~ in --json: held false, failing probes $res"
else
	not_ok "read-only ~ in --json" "rc=$RC $(excerpt "$res $ERR")"
fi

# read-write ~ opens home (write-home must fail), but the audit logs under
# ~/.local/state/warden and the cached /etc under ~/.cache/warden stay masked
# inside: the audit-log and cache probes still hold.
printf 'read-write ~\n' >"$T/rw.profile"
(unset XDG_STATE_HOME XDG_CACHE_HOME; HOME=$fake run "$WARDEN" check --profile "$T/rw.profile"
 printf '%s\n' "$RC" >"$T/rc") 
RC=$(<"$T/rc") OUT=$(<"$T/out") ERR=$(<"$T/err")
if ((RC == 1)) && grep -qE '^did not hold:.* write-home( |$)' <<<"$OUT" &&
	! grep -qE '^did not hold:.* (audit-log-(dir|write)|cache-(dir|write))( |$)' <<<"$OUT" &&
	grep -qE '^  audit-log-write +denied +denied' <<<"$OUT" &&
	grep -qE '^  cache-write +denied +denied' <<<"$OUT" && [[ -d $fake/.cache/warden ]]; then
	ok "read-write ~ is caught, the audit logs and the cache stay masked: $(grep '^did not hold' <<<"$OUT")"
else
	not_ok "read-write ~ is caught, the audit logs and the cache stay masked" "rc=$RC $(excerpt "$(grep -E 'NO$|did not|probes:|audit-log|cache-' <<<"$OUT")$ERR")"
fi

# ---- as an unprivileged user ----------------------------------------------
if (($(id -u) != 0)); then
	ok "default profile holds as ${WARDEN_CHECK_USER:-wardendev}" "SKIP: needs root to switch users"
elif ! id ${WARDEN_CHECK_USER:-wardendev} >/dev/null 2>&1; then
	ok "default profile holds as ${WARDEN_CHECK_USER:-wardendev}" "SKIP: no user ${WARDEN_CHECK_USER:-wardendev}"
else
	bin=/tmp/warden-check-bin
	mkdir -p "$bin" && cp "$WARDEN" "$bin/warden.new" && chmod 755 "$bin" "$bin/warden.new" &&
		mv -f "$bin/warden.new" "$bin/warden"
	uhome=$(getent passwd ${WARDEN_CHECK_USER:-wardendev} | cut -d: -f6)
	(cd /tmp && env -u XDG_STATE_HOME timeout -k 5 "$TIMEOUT" runuser -u ${WARDEN_CHECK_USER:-wardendev} -- \
		env HOME="$uhome" "$bin/warden" check </dev/null >"$T/out" 2>"$T/err")
	RC=$?
	OUT=$(<"$T/out")
	ERR=$(<"$T/err")
	summary=$(grep -E '^[0-9]+ probes: ' <<<"$OUT")
	if ((RC == 0)) && [[ $summary =~ \ 0\ failed$ ]]; then
		ok "default profile holds as ${WARDEN_CHECK_USER:-wardendev} ($summary)"
	else
		not_ok "default profile holds as ${WARDEN_CHECK_USER:-wardendev}" "rc=$RC summary='$summary' $(excerpt "$(grep -E 'NO$|did not' <<<"$OUT")$ERR")"
	fi
	(cd /tmp && env -u XDG_STATE_HOME timeout -k 5 "$TIMEOUT" runuser -u ${WARDEN_CHECK_USER:-wardendev} -- \
		env HOME="$uhome" "$bin/warden" check --compare --json </dev/null >"$T/out" 2>"$T/err")
	RC=$?
	res=
	if ((RC == 0)) && res=$(py '
assert d["held"] is True
print(sum(1 for x in d["probes"] if x["outside"]["observed"] == "allowed" and x["observed"] == "denied"))' 2>&1); then
		ok "--compare as ${WARDEN_CHECK_USER:-wardendev} ($res probes taken away by the sandbox)"
	else
		not_ok "--compare as ${WARDEN_CHECK_USER:-wardendev}" "rc=$RC $(excerpt "$res $(<"$T/err")")"
	fi
fi

# ---- doctor ---------------------------------------------------------------
run "$WARDEN" doctor
if ((RC == 0)) && grep -qE '^OK +Landlock +ABI [0-9]+' <<<"$OUT" &&
	grep -q '^layers warden will put in force:' <<<"$OUT" && ! grep -q '^FAIL' <<<"$OUT"; then
	ok "doctor exits 0 here"
else
	not_ok "doctor exits 0 here" "rc=$RC $(excerpt "$OUT$ERR")"
fi
if grep -qE '^(OK|WARN|FAIL) +user\.max_user_namespaces ' <<<"$OUT" &&
	grep -qE '^(OK|WARN|FAIL) +kernel\.apparmor_restrict_unprivileged_userns ' <<<"$OUT" &&
	grep -qE '^(OK|WARN|FAIL) +(dev\.tty\.legacy_tiocsti|cgroup v2|BPF LSM) ' <<<"$OUT"; then
	ok "doctor reports the sysctls and features"
else
	not_ok "doctor reports the sysctls and features" "$(excerpt "$OUT")"
fi

# The LSMs doctor names are the kernel's, wherever it finds them (this
# machine has no securityfs mounted): compared with securityfs's own list,
# read where it is mounted, else mounted read-only in a private mount
# namespace (root only).
lsm_oracle() {
	if [[ -r /sys/kernel/security/lsm ]]; then
		cat /sys/kernel/security/lsm
	elif [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
		unshare -m --propagation private sh -c \
			'mount -t securityfs -o ro none /sys/kernel/security && cat /sys/kernel/security/lsm' 2>/dev/null
	fi
}
want_lsms=$(lsm_oracle | tr ',' '\n' | sed '/^$/d' | sort | paste -sd, -)
got_line=$(grep -E '^OK +active LSMs ' <<<"$OUT")
got_lsms=$(sed -E 's/^OK +active LSMs +([^ ]*) .*/\1/' <<<"$got_line" | tr ',' '\n' | sort | paste -sd, -)
if [[ -z $want_lsms ]]; then
	ok "doctor reports the active LSMs" "SKIP: securityfs unreadable and cannot be mounted here"
elif [[ -n $got_lsms && $got_lsms == "$want_lsms" ]] &&
	{ [[ ,$want_lsms, != *,bpf,* ]] || grep -qE '^OK +BPF LSM +enabled$' <<<"$OUT"; }; then
	ok "doctor reports the active LSMs ($got_lsms)"
else
	not_ok "doctor reports the active LSMs" "want '$want_lsms', got '$(excerpt "$got_line")' $(excerpt "$(grep 'BPF LSM' <<<"$OUT")")"
fi
# cgroup v2: where findmnt sees it (a hybrid hierarchy puts it below
# /sys/fs/cgroup); OK only at /sys/fs/cgroup itself.
cg_line=$(grep -E '^(OK|WARN) +cgroup v2 ' <<<"$OUT")
cg_at='' cg_want=WARN
[[ $cg_line =~ mounted\ at\ ([^ ]+) ]] && cg_at=${BASH_REMATCH[1]}
[[ $cg_at == /sys/fs/cgroup ]] && cg_want=OK
if ! command -v findmnt >/dev/null; then
	ok "doctor reports where cgroup v2 is mounted" "SKIP: no findmnt"
else
	cg2=$(findmnt -rn -t cgroup2 -o TARGET)
	if { [[ -z $cg2 && -z $cg_at ]] && grep -qE '^WARN +cgroup v2 +not mounted' <<<"$cg_line"; } ||
		{ [[ -n $cg_at ]] && grep -qxF "$cg_at" <<<"$cg2" && [[ ${cg_line%% *} == "$cg_want" ]]; }; then
		ok "doctor reports where cgroup v2 is mounted (${cg_at:-nowhere})"
	else
		not_ok "doctor reports where cgroup v2 is mounted" "findmnt: '${cg2//$'\n'/ }', doctor: '$(excerpt "$cg_line")'"
	fi
fi

# ---- bad input --------------------------------------------------------------
run "$WARDEN" check --no-such-option
if ((RC == 2)) && grep -q '^usage: warden check' <<<"$ERR"; then
	ok "unknown option: usage, exit 2"
else
	not_ok "unknown option: usage, exit 2" "rc=$RC $(excerpt "$ERR")"
fi
run "$WARDEN" check --profile "$T/does-not-exist.profile"
if ((RC == 125)) && grep -q 'does-not-exist.profile' <<<"$ERR" && [[ -z $OUT ]]; then
	ok "missing profile: clear error, exit 125"
else
	not_ok "missing profile: clear error, exit 125" "rc=$RC $(excerpt "$ERR")"
fi
printf 'frobnicate everything\n' >"$T/bad.profile"
run "$WARDEN" check --profile "$T/bad.profile"
if ((RC == 125)) && grep -q 'bad.profile:1:1' <<<"$ERR"; then
	ok "profile with an error: names file:line:col, exit 125"
else
	not_ok "profile with an error: names file:line:col, exit 125" "rc=$RC $(excerpt "$ERR")"
fi
run "$WARDEN" __probe
if ((RC == 2)) && [[ -z $OUT ]]; then
	ok "__probe without its context: usage, exit 2"
else
	not_ok "__probe without its context: usage, exit 2" "rc=$RC $(excerpt "$OUT$ERR")"
fi
run "$WARDEN" __probe --ws /nonexistent-ws --out /tmp --token t --fd notanumber
if ((RC == 2)) && grep -q 'bad option or value' <<<"$ERR"; then
	ok "__probe with a bad value: clear error, exit 2"
else
	not_ok "__probe with a bad value: clear error, exit 2" "rc=$RC $(excerpt "$ERR")"
fi

echo "$passed passed, $failed failed"
((failed == 0))
