#!/usr/bin/env bash
# tests/check/run.sh - the tests of `warden check` and `warden doctor`: the
# default profile holds as root and as an unprivileged user, a profile that
# weakens the sandbox (read-only ~) fails and names the probe (with a file
# where each home-* probe looks, every one of them), --json is one
# valid document, --compare shows rows reachable outside and denied inside,
# bait is gone afterwards, bad input gets clear errors, doctor exits 0 here
# and names the active LSMs and where cgroup v2 is mounted; the proxy probes
# fail on a proxy that answers nothing and hold on a refusal, and
# protected-missing-file fails where the name is only taken, and the dns
# probe reads a scoped IPv6 nameserver, and the home probes are not fooled
# by a plain /home/agent; under `workspace read-only` the exec-deny copy
# and symlink are tried in /tmp; on a terminal, the terminal row sees it
# outside and not inside; with a docker, bus and X11 socket listening, their
# rows connect outside and not inside, even with /run shown. The exec-deny-*
# probes: each holds, refused by exec control (not by a noexec mount), each
# refusal is an exec event with decision deny and an exec.denied alert in the
# session's log, and in a session without the deny rule the same probes see
# the bait run (so a sandbox that lost the rule fails them).
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

# The probes that run the check's denied exec bait, each by one route.
exec_deny_probes=(exec-deny-as-is exec-deny-copy exec-deny-rename exec-deny-hardlink
	exec-deny-symlink exec-deny-proc-root exec-deny-proc-fd exec-deny-memfd exec-deny-ldso
	exec-deny-script-by-name exec-deny-recreated)
have_loader=
for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [[ -x $l ]] && have_loader=1; done

# exec_deny_held: in the --json document in $T/out, every exec-deny probe is
# there, held, refused with EACCES by exec control on a mount that allows
# exec (not by noexec); exec-deny-ldso may be skipped only without a loader.
exec_deny_held() {
	EXEC_DENY="${exec_deny_probes[*]}" HAVE_LOADER=$have_loader py '
import os
want = os.environ["EXEC_DENY"].split()
rows = {x["name"]: x for x in d["probes"]}
bad = []
for n in want:
    x = rows.get(n)
    if x is None:
        bad.append(n + ": missing")
    elif n == "exec-deny-ldso" and not os.environ["HAVE_LOADER"] and x["detail"].startswith("skipped"):
        pass
    elif not (x["held"] and x["observed"] == "denied" and x["detail"].startswith("EACCES by exec control")):
        bad.append("%s: %s %s" % (n, x["observed"], x["detail"]))
assert not bad, "; ".join(bad)
print(len(want))'
}

# exec_deny_logged LOG: the --json document in $T/out names the bait's
# hashes; in LOG, each exec-deny probe (by the tag in its argv) has an exec
# event with decision deny for one of them, right after an exec.denied alert.
exec_deny_logged() {
	EXEC_DENY="${exec_deny_probes[*]}" HAVE_LOADER=$have_loader LOG=$1 py '
import os
want = os.environ["EXEC_DENY"].split()
if not os.environ["HAVE_LOADER"]:
    want.remove("exec-deny-ldso")
hashes = {d["exec_bait"]["sha256"], d["exec_bait"]["script_sha256"]}
ev = [json.loads(l) for l in open(os.environ["LOG"])]
by_seq = {e["seq"]: e for e in ev}
found = set()
for e in ev:
    if e["event"] != "exec" or e.get("decision") != "deny" or not e.get("argv"):
        continue
    tag = e["argv"][-1]
    reason = e.get("reason", "")
    a = by_seq.get(e["seq"] - 1, {})
    if (tag.startswith("warden-check:") and any("exec deny sha256:" + h in reason for h in hashes)
            and a.get("event") == "alert" and a.get("rule") == "exec.denied"
            and a.get("action") == reason):
        found.add(tag[len("warden-check:"):])
missing = [n for n in want if n not in found]
assert not missing, "no refused exec with its exec.denied alert for: " + ", ".join(missing)
print(len(found))'
}

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
if ((RC == 0)) && res=$(exec_deny_held 2>&1); then
	ok "the $res exec-deny probes hold, refused by exec control (not by a noexec mount)"
else
	not_ok "the exec-deny probes hold, refused by exec control" "rc=$RC $(excerpt "$res $ERR")"
fi
log=$(ls -t "${XDG_STATE_HOME:-$HOME/.local/state}/warden/"*.jsonl 2>/dev/null | head -n 1)
if ((RC == 0)) && [[ -n $log ]] && res=$(exec_deny_logged "$log" 2>&1); then
	ok "each exec-deny refusal is in the log: an exec.denied alert and an exec event with decision deny ($res probes, $(basename "$log"))"
else
	not_ok "each exec-deny refusal is in the log" "rc=$RC log '$log' $(excerpt "$res")"
fi

# A sandbox without the deny rule: the same probes, run by the runner in a
# plain session on bait of their own, see the bait run; with the rule (a
# profile's exec deny) they see it refused. So a check whose session lost
# the rule fails these probes.
wsx=$T/weak-ws
mkdir -p "$wsx" && cp "$WARDEN" "$wsx/warden" && cp /bin/true "$wsx/bait" &&
	printf '\nwarden check test bait %s\n' "$$" >>"$wsx/bait" &&
	printf '#!/bin/sh\n# warden check test bait %s\nexit 0\n' "$$" >"$wsx/bait.sh" &&
	chmod 755 "$wsx" "$wsx/bait" "$wsx/bait.sh"
# (the detector records only, in both: the probes try every way around the
# rule in one session, which its default thresholds would freeze)
printf 'exec deny %s\nexec deny %s\nrisk freeze off\nrisk kill off\n' "$wsx/bait" "$wsx/bait.sh" >"$T/deny.profile"
# weak_runner [PROFILE_ARGS...]: the runner's exec-deny probes in a session;
# prints NAME=observed per probe
weak_runner() {
	(cd "$wsx" && timeout -k 5 "$TIMEOUT" "$WARDEN" run "$@" -- ./warden __probe --ws "$wsx" \
		--out "$T" --token weak --only 'exec-deny-*' --exec-bait "$wsx/bait" \
		--exec-script "$wsx/bait.sh" </dev/null 2>"$T/err") |
		python3 -c 'import json,sys
for l in sys.stdin:
    o = json.loads(l)
    if "probe" in o: print("%s=%s" % (o["probe"], "ran" if o["detail"].startswith("ran (exit 0)") else o["observed"]))'
}
printf 'risk freeze off\nrisk kill off\n' >"$T/quiet.profile"
without=$(weak_runner --profile "$T/quiet.profile") with=$(weak_runner --profile "$T/deny.profile")
want_without= want_with=
for n in "${exec_deny_probes[@]}"; do
	if [[ $n == exec-deny-ldso && -z $have_loader ]]; then
		want_without+="$n=denied "; want_with+="$n=denied "
	else
		want_without+="$n=ran "; want_with+="$n=denied "
	fi
done
if [[ $(echo $without) == "${want_without% }" && $(echo $with) == "${want_with% }" ]]; then
	ok "without the deny rule every exec-deny probe sees the bait run; with it, refused"
else
	not_ok "without the deny rule every exec-deny probe sees the bait run; with it, refused" \
		"without: '$(echo $without)' with: '$(echo $with)' $(excerpt "$(<"$T/err")")"
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
# the compare object of the document says what the rows say
c = d["compare"]
assert c["taken_away"] == sum(len(v) for v in taken.values()), c["taken_away"]
same = [x["name"] for x in d["probes"] if x["expected"] == "denied" and x["held"] and
        x["observed"] == x["outside"]["observed"] == "denied" and x["detail"] == x["outside"]["detail"]]
assert c["same_answer"] == same, (c["same_answer"], same)
print("; ".join(g + ": " + ",".join(taken[g][:3]) for g in need))' 2>&1); then
	ok "--compare: reachable outside, denied inside ($res)"
else
	not_ok "--compare: reachable outside, denied inside" "rc=$RC $(excerpt "$res $ERR")"
fi
# Outside, the denied bait is only a copy of true: it runs (unless /tmp,
# where the workspace is, is noexec here); and the run leaves no bait.
if ((RC == 0)) && res=$(TMP_NOEXEC=$(findmnt -no OPTIONS -T /tmp 2>/dev/null | grep -cw noexec) \
	HAVE_LOADER=$have_loader py '
import os
rows = [x for x in d["probes"] if x["name"].startswith("exec-deny-")]
ran = [x["name"] for x in rows if x["outside"]["detail"].startswith("ran (exit 0)")]
skipped = [] if os.environ["HAVE_LOADER"] else ["exec-deny-ldso"]
base = d["workspace"][:-len("/ws")]
assert rows and not os.path.exists(base), "bait left at " + base
assert os.environ["TMP_NOEXEC"] != "0" or len(ran) + len(skipped) == len(rows), "did not run outside: " + \
    ", ".join(x["name"] + " " + x["outside"]["detail"] for x in rows if x["name"] not in ran)
print("%d of %d" % (len(ran), len(rows)))' 2>&1); then
	ok "--compare: outside, the denied bait runs (in $res exec-deny probes) and no bait is left"
else
	not_ok "--compare: outside, the denied bait runs and no bait is left" "rc=$RC $(excerpt "$res $ERR")"
fi
run "$WARDEN" check --compare
if ((RC == 0)) && grep -qE '^  PROBE +EXPECTED +OUTSIDE +INSIDE +HELD$' <<<"$OUT" &&
	grep -qE '^  leaked-fd +denied +allowed: .* +denied: EBADF +yes$' <<<"$OUT"; then
	ok "--compare prints both columns side by side"
else
	not_ok "--compare prints both columns side by side" "rc=$RC $(excerpt "$(head -5 <<<"$OUT")$ERR")"
fi

# On a terminal (script(1) makes one): outside, the runner has it as its
# controlling terminal; inside, neither it nor the user's terminal device
# opens. Without a terminal the row holds with nothing to try.
if command -v script >/dev/null; then
	timeout -k 5 "$TIMEOUT" script -qec "$(printf '%q ' "$WARDEN" check --compare)" /dev/null \
		</dev/null >"$T/out" 2>"$T/err"
	RC=$? OUT=$(tr -d '\r' <"$T/out")
	if ((RC == 0)) && grep -qE '^  terminal +denied +allowed: .* +denied: [A-Z]+ \(no terminal\) +yes$' <<<"$OUT"; then
		ok "--compare on a terminal: the terminal is reachable outside, denied inside"
	else
		not_ok "--compare on a terminal: the terminal is reachable outside, denied inside" \
			"rc=$RC $(excerpt "$(grep -E 'terminal|held' <<<"$OUT")$(<"$T/err")")"
	fi
else
	ok "--compare on a terminal" "SKIP: no script(1) here"
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

# A secret passed on purpose (env pass NPM_TOKEN) fails env-secrets; the
# switch the default sets under the same prefix (NPM_CONFIG_UPDATE_NOTIFIER)
# is no secret, and the default holds with it (above).
printf 'env pass NPM_TOKEN\n' >"$T/npm.profile"
NPM_TOKEN=bait-npm run "$WARDEN" check --profile "$T/npm.profile"
if ((RC == 1)) && grep -qE '^did not hold: env-secrets$' <<<"$OUT" &&
	grep -qE '^  env-secrets +denied +allowed: 1 inherited: NPM_TOKEN +NO$' <<<"$OUT"; then
	ok "env pass NPM_TOKEN makes check fail at env-secrets, and only there"
else
	not_ok "env pass NPM_TOKEN makes check fail at env-secrets" "rc=$RC $(excerpt "$(grep -E 'NO$|did not|probes:' <<<"$OUT")$ERR")"
fi

# Every home-* probe with something to find (dummy files where each looks):
# each is reachable outside and refused inside by the default profile, and
# each fails under read-only ~. On a host without those files these rows
# hold with nothing tried; here each shows it can fail.
homes=$T/homes
mkdir -p "$homes/.ssh" "$homes/.aws" "$homes/.config/gcloud" "$homes/.kube" "$homes/.docker" \
	"$homes/.gnupg/private-keys-v1.d"
for f in .ssh/id_rsa .aws/credentials .config/gcloud/credentials.db .kube/config \
	.docker/config.json .netrc .git-credentials .bash_history .gitconfig; do
	echo 'BAIT-NOT-A-REAL-SECRET (warden check test)' >"$homes/$f"
done
chmod -R go-rwx "$homes"
home_rows='
rows = [x for x in d["probes"] if x["name"].startswith("home-")]
assert len(rows) >= 11, "only %d home-* probes" % len(rows)'
HOME=$homes run "$WARDEN" check --compare --json
if ((RC == 0)) && res=$(py "$home_rows"'
bad = [x["name"] + ": " + x["outside"]["detail"] + " / " + x["detail"] for x in rows
       if x["outside"]["observed"] != "allowed" or x["observed"] != "denied" or not x["held"]]
assert not bad, "; ".join(bad)
print(len(rows))' 2>&1); then
	ok "every home-* probe, with its files there: reachable outside, denied inside ($res rows)"
else
	not_ok "every home-* probe, with its files there: reachable outside, denied inside" "rc=$RC $(excerpt "$res $ERR")"
fi
# --compare names the rows that got the same answer outside: the home-*
# rows with an empty home, none of them with the files there.
mkdir -p "$T/emptyhome"
HOME=$T/emptyhome run "$WARDEN" check --compare
same=$(grep '^compare: .* held probes got the same answer outside' <<<"$OUT")
HOME=$homes run "$WARDEN" check --compare
same_full=$(grep '^compare: .* held probes got the same answer outside' <<<"$OUT")
if [[ $same == *' home-ssh '*' home-gnupg'* && $same_full != *' home-'* ]]; then
	ok "--compare names the rows that got the same answer outside (an empty home: ${same#*here: })"
else
	not_ok "--compare names the rows that got the same answer outside" \
		"an empty home: $(excerpt "$same"); with the files: $(excerpt "$same_full")"
fi
HOME=$homes run "$WARDEN" check --profile "$T/weak.profile" --json
if ((RC == 1)) && res=$(py "$home_rows"'
held = [x["name"] for x in rows if x["held"]]
assert not held, "held under read-only ~: " + ", ".join(held)
print(len(rows))' 2>&1); then
	ok "read-only ~ with the home-* files there: every home-* probe fails ($res rows)"
else
	not_ok "read-only ~ with the home-* files there: every home-* probe fails" "rc=$RC $(excerpt "$res $ERR")"
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
	ulog=$(ls -t "$uhome/.local/state/warden/"*.jsonl 2>/dev/null | head -n 1)
	if ((RC == 0)) && res=$(exec_deny_held 2>&1) && [[ -n $ulog ]] && res=$(exec_deny_logged "$ulog" 2>&1); then
		ok "as ${WARDEN_CHECK_USER:-wardendev}, the exec-deny probes hold and each refusal is logged ($res)"
	else
		not_ok "as ${WARDEN_CHECK_USER:-wardendev}, the exec-deny probes hold and each refusal is logged" "rc=$RC log '$ulog' $(excerpt "$res")"
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

# ---- probes that must be able to fail ----------------------------------------
# The proxy probes hold on a refusal only. Outside any sandbox, in a network
# namespace of the test's own, a "proxy" on 3128 and 1080 that answers
# nothing (a dial that hangs, a destination held for a question) fails
# them, where they once counted the silence as a refusal; one that answers
# 403 and SOCKS5 0x02 holds them.
cat >"$T/proxy.py" <<'PY'
import socket, sys, threading, time
mode = sys.argv[1]
def listening(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(8)
    return s
def serve(s, port):
    while True:
        c, _ = s.accept()
        def h(c=c):
            try:
                if port == 1080:
                    c.recv(3); c.sendall(b"\x05\x00"); c.recv(300)
                    if mode == "refuse": c.sendall(b"\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00")
                else:
                    c.recv(4096)
                    if mode == "refuse": c.sendall(b"HTTP/1.1 403 no\r\n\r\n")
                time.sleep(5)
            except Exception: pass
            c.close()
        threading.Thread(target=h, daemon=True).start()
# Both listen before "ready": the probes start on that word, and a connect
# before the bind would be refused, which reads as the proxy's refusal.
socks = [(listening(p), p) for p in (3128, 1080)]
for s, p in socks: threading.Thread(target=serve, args=(s, p), daemon=True).start()
print("ready", flush=True); time.sleep(30)
PY
proxy_probes() { # MODE: the proxy probes' observations, NAME=observed
	mkdir -p "$T/pp-ws" "$T/pp-out"
	rm -f "$T/pp.ready"
	# the stand-in stopped once the probes are done (it would live its 30 s)
	unshare -Urn sh -c 'ip link set lo up || exit 1
		python3 "$1" "$2" >"$6" & p=$!; i=0
		while ! grep -q ready "$6" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		"$3" __probe --only "proxy-*" --ws "$4" --out "$5" --token 00; rc=$?
		kill $p; exit $rc' \
		sh "$T/proxy.py" "$1" "$WARDEN" "$T/pp-ws" "$T/pp-out" "$T/pp.ready" 2>"$T/pp.err" |
		python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if "probe" in d: print("%s=%s" % (d["probe"], d["observed"]))'
}
if ! unshare -Urn true 2>/dev/null || ! command -v ip >/dev/null; then
	ok "the proxy probes fail on silence" "SKIP: no network namespace of the test's own here"
else
	got=$(proxy_probes silent | sort | tr '\n' ' ')
	if [[ $got == "proxy-metadata=allowed proxy-socks-unknown=allowed proxy-unknown=allowed " ]]; then
		ok "the proxy probes fail on a proxy that answers nothing ($got)"
	else
		not_ok "the proxy probes fail on a proxy that answers nothing" "$got $(excerpt "$(<"$T/pp.err")")"
	fi
	got=$(proxy_probes refuse | sort | tr '\n' ' ')
	if [[ $got == "proxy-metadata=denied proxy-socks-unknown=denied proxy-unknown=denied " ]]; then
		ok "the proxy probes hold on a refusal ($got)"
	else
		not_ok "the proxy probes hold on a refusal" "$got $(excerpt "$(<"$T/pp.err")")"
	fi
fi

# The host socket rows with sockets there: in a mount and network namespace
# of the test's own (root: in a user namespace of its own the sandbox
# cannot drop groups), a tmpfs on /run holding a docker, a system bus and a
# session bus socket, and an abstract X11 socket, all listening. Outside,
# each row connects; inside, none does, and with `read-only /run` in the
# profile the pathname ones are still refused, by the connect wall (EPERM).
cat >"$T/socks.py" <<'PY'
import os, socket, sys, time
keep = []
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if p.startswith("@"):
        s.bind("\0" + p[1:])
    else:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        s.bind(p)
    s.listen(64)
    keep.append(s)
open(sys.argv[1], "w").write("ready")
time.sleep(300)
PY
socket_rows() { # PROFILE_ARGS...: warden check --compare --json beside the sockets
	rm -f "$T/socks.ready"
	unshare -mn sh -c 'ip link set lo up && mount -t tmpfs run /run || exit 99
		python3 "$1" "$2" /run/docker.sock /run/dbus/system_bus_socket /run/user/0/bus @/tmp/.X11-unix/X0 &
		p=$!; i=0; while [ ! -e "$2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		shift 2; "$@"; rc=$?; kill $p; exit $rc' \
		sh "$T/socks.py" "$T/socks.ready" timeout -k 5 "$TIMEOUT" "$WARDEN" check --compare --json "$@" \
		</dev/null >"$T/out" 2>"$T/err"
	RC=$? OUT=$(<"$T/out") ERR=$(<"$T/err")
}
sock_rows='
rows = {x["name"]: x for x in d["probes"] if x["name"] in ("docker-sock", "dbus-system", "dbus-session", "x11")}
assert len(rows) == 4, sorted(rows)
out = [n + ": " + x["outside"]["detail"] for n, x in rows.items() if x["outside"]["observed"] != "allowed"]
assert not out, "not reachable outside: " + "; ".join(out)
inside = [n + ": " + x["detail"] for n, x in rows.items() if x["observed"] != "denied" or not x["held"]]
assert not inside, "reachable inside: " + "; ".join(inside)'
if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null || ! unshare -mn true 2>/dev/null; then
	ok "the host socket rows with sockets there" "SKIP: needs root and a mount and network namespace"
else
	socket_rows
	if ((RC == 0)) && res=$(py "$sock_rows"'
print(", ".join(sorted(rows)))' 2>&1); then
		ok "the host socket rows with sockets there: reachable outside, denied inside ($res)"
	else
		not_ok "the host socket rows with sockets there: reachable outside, denied inside" "rc=$RC $(excerpt "$res $ERR")"
	fi
	printf '# shows the host'"'"'s /run on purpose\nread-only /run\n' >"$T/run.profile"
	socket_rows --profile "$T/run.profile"
	if ((RC <= 1)) && res=$(py "$sock_rows"'
eperm = [n for n in ("docker-sock", "dbus-system", "dbus-session") if rows[n]["detail"].startswith("EPERM")]
assert len(eperm) == 3, "not refused by the connect wall: " + "; ".join(n + ": " + x["detail"] for n, x in rows.items())
print(", ".join(eperm))' 2>&1); then
		ok "with read-only /run, the connect wall still refuses the host's sockets ($res)"
	else
		not_ok "with read-only /run, the connect wall still refuses the host's sockets" "rc=$RC $(excerpt "$res $ERR")"
	fi
fi

# setns without /proc's namespace files: the probe joins its own UTS namespace
# (of a user namespace of the test's own) by a pidfd, so setns itself
# answers (outside any sandbox, where it must go through), not the open of
# /proc/self/ns/uts, whose ENOENT once stood for the answer.
mkdir -p "$T/sn-ws"
got=$(unshare -Urmu sh -c 'mount -t tmpfs none /proc && exec "$1" __probe --only setns --ws "$2" --out "$2" --token 00' \
	sh "$WARDEN" "$T/sn-ws" 2>&1 | grep -o '"observed":"[a-z]*","detail":"[^"]*"')
if [[ -z $got ]] && ! unshare -Urmu true 2>/dev/null; then
	ok "setns without /proc's namespace files" "SKIP: no mount namespace of the test's own here"
elif [[ $got == '"observed":"allowed","detail":"setns (own namespace, in a child)"' ]]; then
	ok "setns without /proc's namespace files is tried by a pidfd ($got)"
else
	not_ok "setns without /proc's namespace files is tried by a pidfd" "$(excerpt "$got")"
fi

# A probe that cannot set itself up tried nothing and fails: with no fd
# free for its pipe (a limit of 4), ptrace says so, where it once held.
mkdir -p "$T/nf-ws"
got=$(prlimit --nofile=4 "$WARDEN" __probe --only ptrace --ws "$T/nf-ws" --out "$T/nf-ws" --token 00 2>&1 |
	grep -o '"observed":"[a-z]*","detail":"[^"]*"')
if [[ $got == '"observed":"allowed","detail":"not tried: pipe: EMFILE"' ]]; then
	ok "a probe that cannot set itself up fails ($got)"
else
	not_ok "a probe that cannot set itself up fails" "$(excerpt "$got")"
fi

# A protected name that is merely taken is no wall: outside any sandbox, in
# a workspace where a file (as a placeholder would) already holds .mcp.json,
# the probe replaces it and fails, where EEXIST once held it.
mkdir -p "$T/pm-ws" "$T/pm-out" && : >"$T/pm-ws/.mcp.json"
got=$(cd "$T/pm-ws" && "$WARDEN" __probe --only protected-missing-file --ws "$T/pm-ws" --out "$T/pm-out" --token 00 2>&1 |
	grep -o '"observed":"[a-z]*","detail":"[^"]*"')
if [[ $got == '"observed":"allowed","detail":"created .mcp.json"' ]]; then
	ok "protected-missing-file fails where the name is only taken ($got)"
else
	not_ok "protected-missing-file fails where the name is only taken" "$(excerpt "$got")"
fi

# The dns probe reads a nameserver as the resolver does: a link-local
# IPv6 address with its scope (fe80::1%v0) has a route, and the probe says
# so (it once failed to parse it and held). Outside any sandbox, in network
# and mount namespaces of the test's own, with a veth pair for the scope.
printf 'nameserver fe80::1%%v0\n' >"$T/resolv6.conf"
mkdir -p "$T/dns-ws"
got=$(unshare -Urnm sh -c 'ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up || exit 3
	i=0; until ip -6 addr show dev v0 | grep "fe80.*scope link $" >/dev/null || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
	mount --bind "$1" /etc/resolv.conf && exec "$2" __probe --only dns --ws "$3" --out "$3" --token 00' \
	sh "$T/resolv6.conf" "$WARDEN" "$T/dns-ws" 2>&1)
rc=$?
if ((rc == 3)) || [[ $got != *'"probe":"dns"'* && $got == *[Uu]nknown* ]]; then
	ok "the dns probe reads a scoped IPv6 nameserver" "SKIP: no veth pair in a network namespace here: $(excerpt "$got")"
elif [[ $got == *'"probe":"dns","observed":"allowed","detail":"route to nameserver fe80::1%v0'* ]]; then
	ok "the dns probe reads a scoped IPv6 nameserver (a route to fe80::1%v0)"
else
	not_ok "the dns probe reads a scoped IPv6 nameserver" "$(excerpt "$got")"
fi

# The sandbox's own home is told by its own tmpfs, not by a device alone:
# outside any sandbox, where /home/agent is a plain directory on the same
# file system as another home, that home's key is found (once, the shared
# device passed it for the sandbox's home and the probes held).
mkdir -p "$T/fh/agent" "$T/fh/alice/.ssh" "$T/fh-ws" && echo dummy >"$T/fh/alice/.ssh/id_rsa"
got=$(unshare -Urm sh -c 'mount --bind "$1" /home && exec "$2" __probe --only "home-*" --ws "$3" --out "$3" --token 00 --home /home/alice' \
	sh "$T/fh" "$WARDEN" "$T/fh-ws" 2>&1 | grep -oE '"probe":"home-(dir|ssh)","observed":"[a-z]*"' | tr '\n' ' ')
if [[ $got == '"probe":"home-dir","observed":"allowed" "probe":"home-ssh","observed":"allowed" ' ]]; then
	ok "home probes find a host home beside a plain /home/agent ($got)"
elif ! unshare -Urm true 2>/dev/null; then
	ok "home probes find a host home beside a plain /home/agent" "SKIP: no mount namespace of the test's own here"
else
	not_ok "home probes find a host home beside a plain /home/agent" "$(excerpt "$got")"
fi

# Under `workspace read-only` the bait cannot be copied or linked in the
# workspace, and those rows once held on that setup failure with nothing
# tried; the copy and the symlink the agent can still make are made in /tmp
# and tried there: each row's detail is the exec's refusal.
printf 'workspace read-only\n' >"$T/ro-ws.profile"
run "$WARDEN" check --json --profile "$T/ro-ws.profile"
res=$(py '
rows = {x["name"]: x for x in d["probes"]}
bad = [n + ": " + rows[n]["detail"] for n in ("exec-deny-copy", "exec-deny-symlink")
       if not (rows[n]["observed"] == "denied" and rows[n]["detail"].startswith("EACCES"))]
assert not bad, "; ".join(bad)
print("tried in /tmp")' 2>&1)
if [[ $res == "tried in /tmp" ]]; then
	ok "under workspace read-only, exec-deny-copy and -symlink try the exec in /tmp"
else
	not_ok "under workspace read-only, exec-deny-copy and -symlink try the exec in /tmp" "rc=$RC $(excerpt "$res $ERR")"
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
