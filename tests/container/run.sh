#!/usr/bin/env bash
# tests/container/run.sh - warden inside a container on this machine:
# Debian's podman with runc, set up here (a CONTAINERS_CONF of its own: this
# host's hybrid cgroups need cgroup_manager "cgroupfs", default_ulimits []
# and the host's cgroup namespace). The image is packaging/container/
# build-image's (warden's .deb on a Debian 12 root from mmdebstrap). With
# warden's seccomp profile (packaging/container/make-seccomp-profile over
# the engine's default) and /proc unmasked (unmask=/proc/*), `warden check`
# passes inside as the image's user `agent` (whose home is warden's own
# home path, /home/agent) and as the container's root (no CAP_SYS_ADMIN:
# the unprivileged path); with the engine's default profile, and with a
# masked /proc, warden exits 125 naming the container setting. The same
# with a profile refusing what Docker's and containerd's defaults refuse
# (docker_like_profile.py; those engines are not in reach here). What a
# session leaves after warden, under PID 1s that reap and do not. Then the
# example Pod (packaging/container/pod.yaml) with `podman kube play`.
# Prints "ok - NAME" lines and "N passed, N failed".
#
#   run.sh [--deb FILE] [--wprobe FILE]   (wprobe: build/tests/helpers/'s)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
deb=
wprobe=$src/build/tests/helpers/wprobe
while (($#)); do
	case $1 in
	--deb) deb=${2:-}; shift 2 || exit 2 ;;
	--wprobe) wprobe=${2:-}; shift 2 || exit 2 ;;
	*) echo "usage: $0 [--deb FILE] [--wprobe FILE]" >&2; exit 2 ;;
	esac
done
MIRROR=${WARDEN_CI_MIRROR:-http://deb.debian.org/debian}
TIMEOUT=${WARDEN_TIMEOUT:-300}

passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1 ($2)"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; ((failed == 0)); exit; }
skip_all() { echo "skipped - container ($1)"; finish; }

[[ $(id -u) == 0 ]] || skip_all "needs root (podman with runc, as set up here)"
for t in podman runc mmdebstrap python3; do
	command -v "$t" >/dev/null || skip_all "$t is not installed (scripts/deps)"
done
[[ -f /usr/share/containers/seccomp.json ]] || skip_all "podman's default seccomp profile is missing"
curl -fsS -m 20 -o /dev/null "$MIRROR/dists/bookworm/Release" 2>/dev/null ||
	skip_all "the Debian mirror $MIRROR is unreachable"

T=$(mktemp -d /var/tmp/warden-ctrtest-XXXXXX)
tag=localhost/warden-test:$$
cleanup() {
	podman pod rm -f warden-example >/dev/null 2>&1
	podman rmi -f "$tag" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
cat >"$T/containers.conf" <<'EOF'
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
[containers]
default_ulimits = []
EOF
export CONTAINERS_CONF=$T/containers.conf

if [[ -z $deb ]]; then
	deb=$("$src/scripts/package" 2>&1 | tail -n 1)
	[[ -f $deb ]] || { not_ok package_builds "scripts/package: $deb"; finish; }
fi
if "$src/packaging/container/build-image" "$deb" --tag "$tag" --mirror "$MIRROR" >"$T/build.log" 2>&1; then
	ok image_builds
else
	not_ok image_builds "$(tail -n 3 "$T/build.log" | tr '\n' ' ')"
	finish
fi
"$src/packaging/container/make-seccomp-profile" >"$T/seccomp.json" 2>"$T/profile.err" ||
	{ not_ok seccomp_profile_made "$(cat "$T/profile.err")"; finish; }
ok seccomp_profile_made
# Docker's and containerd's defaults refuse more (namespaces, mounts): a
# profile that refuses what they do, made from Podman's, stands for them
# (docker_like_profile.py), alone and with warden's additions.
python3 "$here/docker_like_profile.py" /usr/share/containers/seccomp.json >"$T/docker-like.json" &&
	"$src/packaging/container/make-seccomp-profile" "$T/docker-like.json" >"$T/docker-like-warden.json" \
		2>"$T/profile.err" ||
	{ not_ok docker_like_profile_made "$(cat "$T/profile.err")"; finish; }

# ctr [podman run options] -- SCRIPT: the image with this host's cgroup
# settings; sets OUT (stdout and stderr) and RC.
ctr() {
	local opts=()
	while [[ $1 != -- ]]; do opts+=("$1"); shift; done
	shift
	OUT=$(timeout -k 10 "$TIMEOUT" podman run --rm --cgroupns=host \
		-v /sys/fs/cgroup:/sys/fs/cgroup:ro "${opts[@]}" "$tag" sh -c "$1" 2>&1 </dev/null)
	RC=$?
}
narrow=(--security-opt "seccomp=$T/seccomp.json" --security-opt 'unmask=/proc/*')
check='mkdir -p "$HOME/w" && cd "$HOME/w" && warden check'

ctr "${narrow[@]}" -- "$check"
if ((RC == 0)) && grep -qE '^[0-9]+ probes: [0-9]+ held, 0 failed' <<<"$OUT"; then
	ok check_as_user_with_warden_profile
else
	not_ok check_as_user_with_warden_profile "rc $RC: $(grep -E 'failed|warden:' <<<"$OUT" | head -n 3 | tr '\n' ' ')"
fi

ctr --user root -e HOME=/root "${narrow[@]}" -- "$check"
if ((RC == 0)) && grep -qE '^[0-9]+ probes: [0-9]+ held, 0 failed' <<<"$OUT"; then
	ok check_as_root_without_cap_sys_admin
else
	not_ok check_as_root_without_cap_sys_admin "rc $RC: $(grep -E 'failed|warden:' <<<"$OUT" | head -n 3 | tr '\n' ' ')"
fi

ctr --security-opt "seccomp=$T/docker-like-warden.json" --security-opt 'unmask=/proc/*' -- "$check"
if ((RC == 0)) && grep -qE '^[0-9]+ probes: [0-9]+ held, 0 failed' <<<"$OUT"; then
	ok check_with_docker_like_default_and_warden_additions
else
	not_ok check_with_docker_like_default_and_warden_additions "rc $RC: $(grep -E 'failed|warden:' <<<"$OUT" | head -n 3 | tr '\n' ' ')"
fi

# What warden's additions open to the rest of the container, over the
# Docker-like default: a process without CAP_SYS_ADMIN, the image's user or
# the container's root, may make a user namespace and mount inside it, as
# on a host with user namespaces; it still cannot mount, unshare a mount or
# network namespace, enter one, or set the hostname in the container's own,
# nor open the container's files by handle, even from a user namespace of
# its own.
if [[ -x $wprobe ]]; then
	walls='for p in "mount /tmp/m" "unshare mount" "unshare net" setns "handle /etc"; do
		printf "%s: " "$p"; wprobe $p; done
	printf "hostname: "; hostname x >/dev/null 2>&1 && echo ALLOWED || echo DENIED
	printf "handle in a user namespace of its own: "; unshare -Ur wprobe handle /etc
	printf "userns: "; unshare -Urm true && echo ALLOWED || echo DENIED'
	for user in agent root; do
		ctr --user "$user" -v "$wprobe:/usr/local/bin/wprobe:ro" \
			--security-opt "seccomp=$T/docker-like-warden.json" -- "$walls"
		if ((RC == 0)) && [[ $(grep -c ': DENIED' <<<"$OUT") == 7 ]] && grep -q '^userns: ALLOWED' <<<"$OUT"; then
			ok "additions_leave_the_containers_namespaces_as_$user"
		else
			not_ok "additions_leave_the_containers_namespaces_as_$user" "rc $RC: $(tr '\n' ' ' <<<"$OUT" | head -c 400)"
		fi
	done
else
	echo "skipped - additions_leave_the_containers_namespaces (no wprobe at $wprobe: build first)"
fi

# with warden's profile the file reads' helper has its fanotify group
# (Podman's default refuses fanotify_init without CAP_SYS_ADMIN): a read
# outside the workspace is on the record, and nothing says it is not
reads='mkdir -p "$HOME/w" && cd "$HOME/w" &&
	warden run -- sh -c "printf r >/tmp/r.txt; cat /tmp/r.txt >/dev/null; sleep 0.3" &&
	grep -h "\"access\":\"read\"" "$HOME"/.local/state/warden/*.jsonl | grep -c "\"path\":\"/tmp/r.txt\""'
ctr "${narrow[@]}" -- "$reads"
if ((RC == 0)) && grep -qE '^[1-9]' <<<"$OUT" && ! grep -q 'not recorded' <<<"$OUT"; then
	ok file_reads_recorded_with_warden_profile
else
	not_ok file_reads_recorded_with_warden_profile "rc $RC: $(head -c 300 <<<"$OUT")"
fi

run='mkdir -p "$HOME/w" && cd "$HOME/w" && warden run -- echo RAN'
ctr --security-opt 'unmask=/proc/*' -- "$run"
if ((RC == 125)) && ! grep -q '^RAN' <<<"$OUT" && grep -q 'seccomp filter outside warden' <<<"$OUT" &&
	grep -q 'make-seccomp-profile' <<<"$OUT"; then
	ok engine_default_profile_refused_naming_it
else
	not_ok engine_default_profile_refused_naming_it "rc $RC: $(head -c 300 <<<"$OUT")"
fi

ctr --security-opt "seccomp=$T/docker-like.json" --security-opt 'unmask=/proc/*' -- "$run"
if ((RC == 125)) && ! grep -q '^RAN' <<<"$OUT" && grep -q 'seccomp filter outside warden refuses' <<<"$OUT" &&
	grep -q 'make-seccomp-profile' <<<"$OUT" && ! grep -q 'sysctls' <<<"$OUT"; then
	ok docker_like_default_refused_naming_it
else
	not_ok docker_like_default_refused_naming_it "rc $RC: $(head -c 300 <<<"$OUT")"
fi

ctr --security-opt "seccomp=$T/seccomp.json" -- "$run"
if ((RC == 125)) && ! grep -q '^RAN' <<<"$OUT" && grep -q "unmask=/proc/\*" <<<"$OUT" &&
	grep -q 'procMount: Unmasked' <<<"$OUT"; then
	ok masked_proc_refused_naming_the_setting
else
	not_ok masked_proc_refused_naming_the_setting "rc $RC: $(head -c 300 <<<"$OUT")"
fi

# The processes a session leaves to end after warden (the late closes of
# its notification groups, the file reads' helper) are reaped by the
# container's PID 1. `tail -f /dev/null` (a GitHub Actions container job's)
# never reaps: with --init (catatonit) in front of it none is left; without
# it they stay, as doc/containers.md says. Sessions run by `podman exec`,
# whose orphans go to PID 1.
# zombies_after [podman run options]: sets ZOMBIES, the zombies in the
# container after three sessions, or "error: ..."
zombies_after() {
	local cid
	cid=$(timeout -k 10 60 podman run -d --rm --cgroupns=host -v /sys/fs/cgroup:/sys/fs/cgroup:ro \
		"$@" "${narrow[@]}" "$tag" tail -f /dev/null 2>&1) || { ZOMBIES="error: $cid"; return; }
	ZOMBIES=$(timeout -k 10 "$TIMEOUT" podman exec "$cid" sh -c 'mkdir -p "$HOME/w" && cd "$HOME/w" &&
		for i in 1 2 3; do warden run -- true 2>/dev/null || exit 1; done; sleep 1
		grep -l "^State:[[:space:]]*Z" /proc/[0-9]*/status 2>/dev/null | wc -l' 2>&1) ||
		ZOMBIES="error: $ZOMBIES"
	podman rm -f -t 0 "$cid" >/dev/null 2>&1
}
zombies_after --init
if [[ $ZOMBIES == 0 ]]; then
	ok init_reaps_what_sessions_leave
else
	not_ok init_reaps_what_sessions_leave "zombies: $ZOMBIES"
fi
zombies_after
if [[ $ZOMBIES =~ ^[1-9][0-9]*$ ]]; then
	ok "tail_as_pid1_keeps_zombies # $ZOMBIES after three sessions"
else
	not_ok tail_as_pid1_keeps_zombies "zombies: $ZOMBIES"
fi

# The example Pod with `podman kube play`: its image and seccomp profile
# replaced by this run's. Debian 12's podman (4.3) reads a Localhost seccomp
# profile only from the older annotation, needs subordinate ids it does not
# have for hostUsers: false, and does not apply procMount: Unmasked; so the
# Pod runs here with the annotation, without hostUsers, and warden in it
# must either pass its check or refuse to start naming procMount.
mkdir -p "$T/seccomp"
cp "$T/seccomp.json" "$T/seccomp/warden.json"
sed -e "s|image: .*|image: $tag|" -e '/hostUsers: false/d' \
	-e 's|^  name: warden-example$|  name: warden-example\n  annotations:\n    seccomp.security.alpha.kubernetes.io/pod: localhost/warden.json|' \
	"$src/packaging/container/pod.yaml" >"$T/pod.yaml"
if timeout -k 10 "$TIMEOUT" podman kube play --seccomp-profile-root "$T/seccomp" "$T/pod.yaml" >"$T/play.log" 2>&1; then
	timeout 300 podman wait warden-example-agent >/dev/null 2>&1
	logs=$(podman logs warden-example-agent 2>&1)
	if grep -qE '^[0-9]+ probes: [0-9]+ held, 0 failed' <<<"$logs"; then
		ok pod_runs_warden_check
	elif grep -q 'procMount: Unmasked' <<<"$logs" && ! grep -q 'seccomp filter outside' <<<"$logs"; then
		ok "pod_runs_warden_check # podman $(podman version -f '{{.Client.Version}}') does not apply procMount: warden refused, naming it"
	else
		not_ok pod_runs_warden_check "$(tail -n 3 <<<"$logs" | tr '\n' ' ')"
	fi
else
	not_ok pod_runs_warden_check "podman kube play: $(tail -n 3 "$T/play.log" | tr '\n' ' ')"
fi
# The agent-sandbox SandboxTemplate carries the Pod's settings: its
# podTemplate.spec is pod.yaml's spec but for the command and environment.
# (Validated against agent-sandbox's published CRD schema when written; the
# schema is not in this tree.)
if python3 - "$src/packaging/container/pod.yaml" "$src/packaging/container/sandboxtemplate.yaml" \
	>"$T/tpl.log" 2>&1 <<'PY'; then
import sys, yaml
pod = yaml.safe_load(open(sys.argv[1]))["spec"]
tpl = yaml.safe_load(open(sys.argv[2]))
assert tpl["kind"] == "SandboxTemplate", tpl["kind"]
spec = tpl["spec"]["podTemplate"]["spec"]
for s in (pod, spec):
    for c in s["containers"]:
        c.pop("command"); c.pop("env")
assert pod == spec, (pod, spec)
PY
	ok sandboxtemplate_has_the_pods_settings
else
	not_ok sandboxtemplate_has_the_pods_settings "$(tail -n 3 "$T/tpl.log" | tr '\n' ' ')"
fi
finish
