#!/usr/bin/env python3
# docker_like_profile.py - a seccomp profile that refuses what Docker's and
# containerd's defaults refuse to a container without CAP_SYS_ADMIN, made
# from Podman's default (the engine on this machine), for the tests: Docker
# and containerd are not in Debian 12's reach here. Written from those
# defaults' documented rules, not copied: clone3 fails with ENOSYS (so that
# libc falls back to clone); clone is allowed only without namespace flags;
# mount, unshare, setns, sethostname, the new mount API, fanotify_init and
# bpf only with CAP_SYS_ADMIN; kcmp, pidfd_getfd and process_madvise only
# with CAP_SYS_PTRACE; pivot_root and lsm_list_modules not at all (the default
# action). Everything else is Podman's.
#
#   docker_like_profile.py PODMAN-DEFAULT.json > docker-like.json
import json
import sys

ADMIN = ["bpf", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick", "mount",
         "mount_setattr", "move_mount", "open_tree", "sethostname", "setdomainname",
         "setns", "umount", "umount2", "unshare"]
PTRACE = ["kcmp", "pidfd_getfd", "process_madvise"]
NONE = ["pivot_root", "lsm_list_modules"]
NS_FLAGS = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET

profile = json.load(open(sys.argv[1]))
taken = set(ADMIN + PTRACE + NONE + ["clone", "clone3"])
kept = []
for rule in profile["syscalls"]:
    names = [n for n in (rule.get("names") or [rule.get("name")]) if n and n not in taken]
    if names:
        rule = dict(rule, names=names)
        rule.pop("name", None)
        kept.append(rule)
kept += [
    {"names": ADMIN + ["clone", "clone3"], "action": "SCMP_ACT_ALLOW",
     "includes": {"caps": ["CAP_SYS_ADMIN"]}},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": NS_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}],
     "excludes": {"caps": ["CAP_SYS_ADMIN"]}},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38,
     "excludes": {"caps": ["CAP_SYS_ADMIN"]}},
    {"names": PTRACE, "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_PTRACE"]}},
]
profile["syscalls"] = kept
json.dump(profile, sys.stdout, indent=1)
sys.stdout.write("\n")
