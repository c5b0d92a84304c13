# t_files.sh - file actions on the record by default: every write-intent
# operation is a `file` event with its decision; a write the walls refuse
# (a protected path, a read-only mount) says why, though the kernel tells
# no one; the record is bounded (a summary counts the rest) and the
# supervisor stays responsive; names of any bytes stay valid JSON; `audit
# minimal` turns the events off and `audit files` records more.
# shellcheck shell=bash


# fl_events: the latest session's `file` events, in OUT's place (FL).
fl_events() { FL=$(grep -F '"event":"file"' "$(latest_log)"); }

# fl_has PATH DECISION [REASON]: a file event on PATH with that decision
# (and reason, a prefix), access write.
fl_has() {
	local path=$1 decision=$2 reason=${3:-} ev
	ev=$(grep -F "\"path\":\"$path\"" <<<"$FL" | grep -F "\"decision\":\"$decision\"" | head -n 1)
	[[ -n $ev ]] || { fail "no file event with decision $decision for $path: $(excerpt "$FL")"; return; }
	[[ $ev == *'"access":"write"'* ]] || fail "no access write in $(excerpt "$ev")"
	[[ -z $reason || $ev == *"\"reason\":\"$reason"* ]] || fail "not the reason '$reason': $(excerpt "$ev")"
}

# Each write to a protected path of the workspace is refused (EROFS) and
# leaves a refused `file` event naming why; an ordinary write is allowed,
# and recorded as such, without `audit files`.
test_files_protected_denied() {
	have git || skip 'git is not installed'
	git init -q . || fatal 'git init'
	printf 'export A=1\n' >.envrc
	printf '# rc\n' >.bashrc
	mkdir -p sub
	printf '{}\n' >sub/.mcp.json
	printf 'SECRET=1\n' >.env
	wsh 'echo a > a.txt
	     echo b > .git/hooks/pre-commit; echo "hook rc=$?"
	     echo c > .vscode/tasks.json; echo "vscode rc=$?"
	     echo d >> .envrc; echo "envrc rc=$?"
	     echo e >> .bashrc; echo "bashrc rc=$?"
	     echo f > sub/.mcp.json; echo "mcp rc=$?"
	     echo g > .claude/settings.json; echo "claude rc=$?"
	     git config core.hooksPath /tmp/h; echo "config rc=$?"
	     rm -f .envrc; echo "rm rc=$?"
	     echo h > .env; echo "env rc=$?"
	     echo done' --profile "$(no_detect_actions)"
	assert_out_has done
	local w
	for w in hook vscode envrc bashrc mcp claude config rm env; do
		assert_out_match "^$w rc=[1-9]" "the write to $w refused"
	done
	fl_events
	fl_has "$WS/a.txt" allow
	fl_has "$WS/.git/hooks/pre-commit" deny 'protected path'
	fl_has "$WS/.vscode/tasks.json" deny 'protected path'
	fl_has "$WS/.envrc" deny 'protected path'
	fl_has "$WS/.bashrc" deny 'protected path'
	fl_has "$WS/sub/.mcp.json" deny 'protected path'
	fl_has "$WS/.claude/settings.json" deny 'protected path'
	fl_has "$WS/.env" deny masked
	# git writes its config through a lock file renamed over it
	grep -F '"op":"rename"' <<<"$FL" | grep -F "\"path2\":\"$WS/.git/config\"" |
		grep -F '"reason":"protected path: git config: core.hookspath set' >/dev/null ||
		fail "no refused rename onto .git/config: $(excerpt "$FL")"
	grep -F '"op":"unlink"' <<<"$FL" | grep -F "\"path\":\"$WS/.envrc\"" |
		grep -qF '"decision":"deny"' || fail 'no refused unlink of .envrc'
	# every refused write is an event: as many refused events as refusals
	local n
	n=$(grep -cF '"decision":"deny"' <<<"$FL")
	((n >= 9)) || fail "only $n refused file events for 9 refused writes"
	assert_host_file .envrc 'export A=1' '.envrc on the host'
}

# Outside the workspace: a read-only mount's refusal and one of Landlock
# (a place the mounts show writable but Landlock does not: none by
# default, so the read-only mount), and an allowed write to the scratch
# space; mkdir -p of a directory that is there refuses nothing.
test_files_readonly_mount() {
	wsh 'echo x > /etc/warden-x; echo "etc rc=$?"; echo y > /usr/warden-y; echo "usr rc=$?"
	     echo z > /tmp/z; mkdir -p /tmp /usr/bin; chmod 600 /tmp/z; echo done'
	assert_out_has done
	assert_out_match '^etc rc=[1-9]' 'the write to /etc refused'
	fl_events
	fl_has /etc/warden-x deny 'read-only mount'
	fl_has /usr/warden-y deny 'read-only mount'
	fl_has /tmp/z allow
	grep -F '"op":"chmod"' <<<"$FL" | matches -F '"path":"/tmp/z"' || fail 'no chmod event'
	grep -F '"op":"mkdir"' <<<"$FL" | grep -F '"decision":"deny"' &&
		fail 'mkdir -p of existing directories recorded as refused'
	return 0
}

# fl_op OP SYSCALL PATH DECISION [REASON]: a file event of that op, made
# by that syscall, on PATH, with that decision (and reason, a prefix).
fl_op() {
	local op=$1 sys=$2 path=$3 decision=$4 reason=${5:-} ev
	ev=$(grep -F "\"op\":\"$op\"" <<<"$FL" | grep -F "\"syscall\":\"$sys\"" |
		grep -F "\"path\":\"$path\"" | grep -F "\"decision\":\"$decision\"" | head -n 1)
	[[ -n $ev ]] || { fail "no $op ($sys) of $path, $decision: $(excerpt "$FL")"; return; }
	[[ -z $reason || $ev == *"\"reason\":\"$reason"* ]] || fail "not the reason '$reason': $(excerpt "$ev")"
}

# A directory removed is on the record: rmdir(1) and Python's os.rmdir
# (the rmdir syscall; op unlink, as unlinkat's AT_REMOVEDIR), and the
# refused rmdir of a protected placeholder directory (.vscode: the kernel
# answers EBUSY, a mount point) as a refusal.
test_files_rmdir_recorded() {
	have python3 || skip 'no python3'
	wsh 'mkdir e1; rmdir e1; echo "e1 rc=$?"; mkdir e3; python3 -c "import os; os.rmdir(\"e3\")"
	     echo "e3 rc=$?"; rmdir .vscode; echo "vscode rc=$?"; echo done' --profile "$(no_detect_actions)"
	assert_out_has done
	assert_out_line 'e1 rc=0' 'rmdir e1'
	assert_out_line 'e3 rc=0' 'os.rmdir'
	assert_out_match '^vscode rc=[1-9]' 'rmdir .vscode refused'
	assert_host_absent e1
	fl_events
	fl_op mkdir mkdir "$WS/e1" allow
	grep -F '"op":"unlink"' <<<"$FL" | grep -F "\"path\":\"$WS/e1\"" | matches -F '"decision":"allow"' ||
		fail "no unlink of e1: $(excerpt "$FL")"
	fl_op unlink rmdir "$WS/e3" allow
	grep -F '"op":"unlink"' <<<"$FL" | grep -F "\"path\":\"$WS/.vscode\"" |
		matches -F '"reason":"protected path"' || fail "no refused rmdir of .vscode: $(excerpt "$FL")"
}

# A file's mode, owner and times changed are on the record, each under
# the file's path: fchmod on a descriptor opened read-only, chmod through
# /proc/self/fd/N, mkfifo (mknod), chown, fchown, lchown, fchownat, utime
# and utimes by path, fchownat and utimensat naming a descriptor's file
# by an empty path (AT_EMPTY_PATH, through ctypes); refused ones with why
# (a read-only mount, a protected path). A file's times set through a descriptor (futimens,
# what touch and cp -p call on a file they have just opened for writing)
# only with `audit files`.
test_files_attrs_recorded() {
	have python3 || skip 'no python3'
	printf 'x\n' >keep.txt
	printf 'y\n' >old.txt
	printf 'z\n' >empty.txt
	printf 'export A=1\n' >.envrc
	local py='
import os
def t(n, f):
    try:
        f(); print(n, "ok")
    except OSError as e:
        print(n, "refused", e.errno)
u, g = os.getuid(), os.getgid()
fd = os.open("keep.txt", os.O_RDONLY)
t("fchmod", lambda: os.fchmod(fd, 0o755))
t("procfd", lambda: os.chmod("/proc/self/fd/%d" % fd, 0o700))
t("mkfifo", lambda: os.mkfifo("ff"))
t("chown", lambda: os.chown("old.txt", u, g))
t("fchown", lambda: os.fchown(fd, u, g))
t("lchown", lambda: os.lchown("ff", u, g))
t("fchownat", lambda: os.chown("keep.txt", u, g, dir_fd=os.open(".", os.O_RDONLY)))
t("utime", lambda: os.utime("old.txt", (0, 0)))
t("futimens", lambda: os.utime(fd, (5, 5)))
t("etc", lambda: os.chmod("/etc/passwd", 0o644))
t("etctime", lambda: os.utime("/etc/passwd"))
t("envrc", lambda: os.chown(".envrc", u, g))
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class TS(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
def c(n, r):
    print(n, "ok" if r == 0 else "refused %d" % ctypes.get_errno())
for name in ("empty.txt", ".envrc"):
    e = os.open(name, os.O_RDONLY)
    c(name + " fchownat-empty", libc.fchownat(e, b"", u, g, 0x1000))
    c(name + " utimensat-empty", libc.syscall(280, e, b"", (TS * 2)(TS(7, 0), TS(7, 0)), 0x1000))
print("done")'
	wrun --profile "$(no_detect_actions)" -- python3 -c "$py"
	assert_out_line done
	local w
	for w in fchmod procfd mkfifo chown fchown lchown fchownat utime futimens; do
		assert_out_line "$w ok" "$w"
	done
	for w in etc etctime envrc '.envrc fchownat-empty' '.envrc utimensat-empty'; do
		assert_out_match "^$w refused" "$w refused"
	done
	assert_out_line 'empty.txt fchownat-empty ok'
	assert_out_line 'empty.txt utimensat-empty ok'
	fl_events
	fl_op chmod fchmod "$WS/keep.txt" allow
	fl_op chmod chmod "$WS/keep.txt" allow
	grep -qF '"path":"/proc/self/fd/' <<<"$FL" && fail "a path through /proc/self/fd: $(excerpt "$FL")"
	fl_op mknod mknodat "$WS/ff" allow
	fl_op chown chown "$WS/old.txt" allow
	fl_op chown fchown "$WS/keep.txt" allow
	fl_op chown lchown "$WS/ff" allow
	fl_op chown fchownat "$WS/keep.txt" allow
	fl_op utime utimensat "$WS/old.txt" allow
	fl_op chmod chmod /etc/passwd deny 'read-only mount'
	fl_op utime utimensat /etc/passwd deny 'read-only mount'
	fl_op chown chown "$WS/.envrc" deny 'protected path'
	# an empty path with AT_EMPTY_PATH names the fd's file
	fl_op chown fchownat "$WS/empty.txt" allow
	fl_op utime utimensat "$WS/empty.txt" allow
	fl_op chown fchownat "$WS/.envrc" deny 'protected path'
	fl_op utime utimensat "$WS/.envrc" deny 'protected path'
	grep -F '"op":"utime"' <<<"$FL" | matches -F "\"path\":\"$WS/keep.txt\"" &&
		fail "futimens recorded by default: $(excerpt "$FL")"
	[[ $(stat -c %Y old.txt) == 0 ]] || fail 'old.txt kept its time on the host'
	rm -f ff
	printf 'audit files\n' >"$T_TMP/files.profile"
	wrun --profile "$(no_detect_actions "$T_TMP/files.profile")" -- python3 -c "$py"
	assert_out_line 'futimens ok'
	fl_events
	fl_op utime utimensat "$WS/keep.txt" allow
}

# An extended attribute set or removed is on the record, as a mode is: op
# setxattr or removexattr, the attribute's name in `attr` (its value is
# not kept), by path, through a link (lsetxattr), by descriptor
# (fsetxattr, fremovexattr) and by the *at calls of Linux 6.13
# (setxattrat, removexattrat, through ctypes: not yet in libseccomp); an
# ACL (system.posix_acl_access, what setfacl writes: other users let in)
# among them; refused ones with why (a read-only mount, a protected
# path). Kept out of the record, an ACL would change who may read the
# workspace unseen, where a chmod would not.
test_files_xattr_recorded() {
	have python3 || skip 'no python3'
	printf 'x\n' >xa.txt
	printf 'export A=1\n' >.envrc
	ln -sf xa.txt xa.link
	local py="$PY_ACL"'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def t(n, f):
    try:
        f(); print(n, "ok")
    except OSError as e:
        print(n, "refused", e.errno)
def c(n, r):
    print(n, "ok" if r == 0 else "refused %d" % ctypes.get_errno())
class XattrArgs(ctypes.Structure):
    _fields_ = [("value", ctypes.c_uint64), ("size", ctypes.c_uint32), ("flags", ctypes.c_uint32)]
val = ctypes.create_string_buffer(b"v")
args = XattrArgs(ctypes.cast(val, ctypes.c_void_p).value, 1, 0)
t("set", lambda: os.setxattr("xa.txt", "user.by-path", b"1"))
t("remove", lambda: os.removexattr("xa.txt", "user.by-path"))
t("lset", lambda: os.setxattr("xa.link", "trusted.of-link", b"1", follow_symlinks=False))
fd = os.open("xa.txt", os.O_RDONLY)
t("fset", lambda: os.setxattr(fd, "user.by-fd", b"1"))
t("fremove", lambda: os.removexattr(fd, "user.by-fd"))
L = ctypes.c_long  # each argument a whole register: syscall(2) is variadic
c("setat", libc.syscall(L(463), L(-100), b"xa.txt", L(0), b"user.by-at", ctypes.byref(args), L(ctypes.sizeof(args))))
c("removeat", libc.syscall(L(466), L(-100), b"xa.txt", L(0), b"user.by-at"))
t("acl", lambda: os.setxattr("xa.txt", "system.posix_acl_access", acl(os.getuid())))
t("etc", lambda: os.setxattr("/etc/passwd", "user.x", b"1"))
t("envrc", lambda: os.setxattr(".envrc", "user.x", b"1"))
print("done")'
	wrun --profile "$(no_detect_actions)" -- python3 -c "$py"
	assert_out_line done
	[[ $OUT == *'set refused 95'* ]] && skip 'the file system of the workspace keeps no user xattrs'
	[[ $OUT == *'setat refused 38'* ]] && skip 'setxattrat needs Linux 6.13'
	local w
	for w in set remove fset fremove setat removeat acl; do
		assert_out_line "$w ok" "$w"
	done
	for w in etc envrc; do
		assert_out_match "^$w refused" "$w refused"
	done
	fl_events
	fl_op setxattr setxattr "$WS/xa.txt" allow
	fl_op removexattr removexattr "$WS/xa.txt" allow
	fl_op setxattr lsetxattr "$WS/xa.link" allow
	fl_op setxattr fsetxattr "$WS/xa.txt" allow
	fl_op removexattr fremovexattr "$WS/xa.txt" allow
	fl_op setxattr setxattrat "$WS/xa.txt" allow
	fl_op removexattr removexattrat "$WS/xa.txt" allow
	fl_op setxattr setxattr /etc/passwd deny 'read-only mount'
	fl_op setxattr setxattr "$WS/.envrc" deny 'protected path'
	local a
	for a in user.by-path user.by-fd user.by-at trusted.of-link system.posix_acl_access; do
		matches -F "\"attr\":\"$a\"" <<<"$FL" || fail "no event names the attribute $a: $(excerpt "$FL")"
	done
	grep -F '"attr":"system.posix_acl_access"' <<<"$FL" | matches -F "\"path\":\"$WS/xa.txt\"" ||
		fail "the ACL set is not recorded on its file: $(excerpt "$FL")"
}

# The files the command was handed, named: `> /dev/stderr`, `tee
# /dev/stderr`, /dev/fd/N, /proc/self/fd/N, `cat /dev/stdin`. On warden's
# pipes they work, as root too (whose pipes the sandbox's own identity
# could not open anew), and nothing is recorded as refused: they were
# once recorded as refused by the read-only /dev, and /dev/null after
# them. Named for the other end of a pipe, refused as root (as root the
# sandbox gets the rights of the ends it holds, no more). On a file
# warden's output went to, the record says what the kernel answered.
test_files_handed_stdio() {
	local script='echo a > /dev/stdout; echo "out rc=$?"; echo b > /dev/stderr; echo "err rc=$?"
	     echo c | tee /dev/stderr >/dev/null; echo "tee rc=$?"; echo d >> /dev/fd/1; echo "fd rc=$?"
	     echo e > /proc/self/fd/2; echo "proc rc=$?"; echo f > /dev/null; echo "null rc=$?"
	     cat /dev/stdin; echo "in rc=$?"'
	printf 'piped-in\n' | timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- sh -c "$script" 2>&1 | cat >"$T_TMP/o"
	RC=${PIPESTATUS[1]} OUT=$(<"$T_TMP/o")
	assert_rc 0
	printf -- '--- output\n%s\n' "$OUT"
	local w
	for w in out err tee fd proc null in; do
		assert_out_line "$w rc=0" "$w"
	done
	for w in a b c d e piped-in; do
		assert_out_line "$w"
	done
	assert_out_lacks 'refused during this session' 'a refusal listed'
	fl_events
	grep -F '"decision":"deny"' <<<"$FL" && fail 'a write to what the command holds recorded as refused'
	if is_root; then
		printf 'x\n' | timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- sh -c \
			'cat /dev/stdout </dev/null; echo "rd rc=$?"; echo y >/dev/stdin; echo "wr rc=$?"' 2>&1 | cat >"$T_TMP/o"
		RC=${PIPESTATUS[1]} OUT=$(<"$T_TMP/o")
		assert_out_match '^rd rc=[1-9]' 'the read end of the output pipe opened'
		assert_out_match '^wr rc=[1-9]' 'the write end of the input pipe opened'
	fi
	# a file outside the workspace, and one in it: refused or not as the
	# kernel says, and recorded as it answered, under the file's path when
	# the sandbox has one for it (the workspace's), else as spelled
	local f named
	for f in "$T_TMP/handed.out" "$WS/handed.out"; do
		timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- sh -c 'echo z > /dev/stdout && echo written >&2' >"$f" 2>"$T_TMP/e"
		fl_events
		named=/dev/stdout
		[[ $f == "$WS"/* ]] && named=$f
		if grep -qx written "$T_TMP/e"; then
			grep -F "\"path\":\"$named\"" <<<"$FL" | grep -F '"decision":"deny"' &&
				fail "$f: written, recorded as refused"
		else
			grep -qF 'cannot create /dev/stdout' "$T_TMP/e" || fail "$f: $(excerpt "$(<"$T_TMP/e")")"
			fl_has "$named" deny
		fi
	done
	return 0
}

# The levels: `audit minimal` records no file events (the walls still
# refuse); the default leaves writes to /dev out (2>/dev/null); `audit
# files` records them too.
test_files_levels() {
	local script='echo a > a.txt; echo b > /dev/null; echo c > /etc/warden-c; echo done'
	printf 'audit minimal\n' >"$T_TMP/min.profile"
	wsh "$script" --profile "$T_TMP/min.profile"
	assert_out_has done
	fl_events
	[[ -z $FL ]] || fail "file events with audit minimal: $(excerpt "$FL")"
	wsh "$script"
	fl_events
	fl_has "$WS/a.txt" allow
	fl_has /etc/warden-c deny 'read-only mount'
	grep -qF '"path":"/dev/null"' <<<"$FL" && fail 'a write to /dev/null recorded by default'
	printf 'audit files\n' >"$T_TMP/files.profile"
	wsh "$script" --profile "$T_TMP/files.profile"
	fl_events
	fl_has /dev/null allow
	wardenc policy show --profile "$T_TMP/min.profile"
	assert_out_has '"audit": "minimal"'
}

# A flood of files (FL_FLOOD, 60000 by default: past the default bound of
# 20000 events, in a time a loaded machine allows), each touched twice: the
# first open of each file stays on the record (a path not yet there is
# written past the bound, up to the 100,000 names the record keeps), the
# second ones are repeats, counted in summaries; the record stays bounded;
# warden status answers meanwhile; the supervisor keeps up (the loop ends).
test_files_flood_summarised() {
	have seq || skip 'no seq'
	have xargs || skip 'no xargs'
	local WARDEN_TIMEOUT=900 total=${FL_FLOOD:-60000}
	warden_bg "$T_TMP/flood.out" --profile "$(no_detect_actions)" -- sh -c \
		"mkdir -p f && cd f && seq $total | xargs touch && seq $total | xargs touch &&
		 ls | wc -l && echo flood-done"
	local i answered=0
	for ((i = 0; i < 60; i++)); do
		sleep 1
		if timeout 10 "$WARDEN" status >"$T_TMP/status.out" 2>&1; then
			grep -qF "$WS" "$T_TMP/status.out" && { answered=1; break; }
		fi
	done
	((answered)) || fail "warden status did not answer during the flood: $(cat "$T_TMP/status.out")"
	wait "$TPID"
	grep -q flood-done "$T_TMP/flood.out" || fail "the flood did not finish: $(cat "$T_TMP/flood.out.err")"
	grep -qx "$total" "$T_TMP/flood.out" || fail "not $total files: $(cat "$T_TMP/flood.out")"
	fl_events
	local n sum count repeats files
	n=$(grep -cF '"op":"open"' <<<"$FL")
	((n <= 20000 + 100000)) || fail "$n open events: the record is not bounded"
	files=$(grep -F '"op":"open"' <<<"$FL" | grep -oE "\"path\":\"$WS/f/[0-9]+\"" | sort -u | wc -l)
	((files == total)) || fail "$files of the $total files have an open on the record"
	sum=$(grep -F '"op":"summary"' <<<"$FL")
	[[ -n $sum ]] || fail 'no summary event'
	count=$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' <<<"$sum" | awk '{ s += $1 } END { print s + 0 }')
	repeats=$(sed -n 's/.*"repeats":\([0-9]*\).*/\1/p' <<<"$sum" | awk '{ s += $1 } END { print s + 0 }')
	((n + count >= 2 * total)) ||
		fail "events ($n) and summaries ($count) do not add up to the $((2 * total)) opens"
	((repeats == count)) || fail "$count summarised, $repeats of them repeats: $(excerpt "$sum")"
	[[ $sum == *'"decision":"allow"'* && $sum == *'"summary":"'* ]] || fail "summary: $(excerpt "$sum")"
}

# Past the record's bound, an operation on a path not yet on the record is
# still written; only the repeats of one already there are counted, by kind
# (ops) and as repeats, in the summary. A red team spent the bound in a
# quarter of a second truncating one file 1,400 times, and the write to a
# new file after it left no event.
test_files_flood_new_path_recorded() {
	local total=3000
	wsh "i=0; while [ \$i -lt $total ]; do : > junk; i=\$((i+1)); done
	     echo PAYLOAD > payload.txt; rm junk; echo done" --profile "$(no_detect_actions)"
	assert_out_has done
	fl_events
	fl_has "$WS/payload.txt" allow
	grep -F '"op":"unlink"' <<<"$FL" | matches -F "\"path\":\"$WS/junk\"" ||
		fail "the unlink of junk after the flood is not on the record: $(excerpt "$FL")"
	local sum n count repeats opens
	sum=$(grep -F '"op":"summary"' <<<"$FL")
	[[ -n $sum ]] || { fail "no summary event: the flood did not pass the bound"; return; }
	n=$(grep -F "\"path\":\"$WS/junk\"" <<<"$FL" | grep -cF '"op":"open"')
	count=$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' <<<"$sum" | awk '{ s += $1 } END { print s + 0 }')
	repeats=$(sed -n 's/.*"repeats":\([0-9]*\).*/\1/p' <<<"$sum" | awk '{ s += $1 } END { print s + 0 }')
	opens=$(sed -n 's/.*"ops":{"open":\([0-9]*\)}.*/\1/p' <<<"$sum" | awk '{ s += $1 } END { print s + 0 }')
	((n + count == total)) || fail "$n events and $count summarised for the $total opens of junk"
	((repeats == count && opens == count)) ||
		fail "the summary does not count $count repeats of open: $(excerpt "$sum")"
	[[ $sum == *'"unkept":0'* ]] || fail "new names counted: $(excerpt "$sum")"
}

# A path relative to a directory deeper than PATH_MAX (whose name the
# kernel gives no one) cannot be made absolute: it is recorded as given,
# marked path_partial, with decision unknown (no wall judged it), never as
# if it were a whole path allowed; so is a name below /proc/self/cwd there,
# and a descriptor's file with no name warden can read (path null).
test_files_deep_path_partial() {
	have python3 || skip 'python3 not installed'
	wrun --profile "$(no_detect_actions)" -- python3 -c '
import os
n = "d" * 250
for i in range(20):
    os.mkdir(n); os.chdir(n)
open("deep_secret.txt", "w").write("x")
fd = os.open("deep_fd.txt", os.O_WRONLY | os.O_CREAT, 0o644)
os.fchmod(fd, 0o600)
open("/proc/self/cwd/via_proc.txt", "w").write("x")
print("done")'
	assert_out_has done
	fl_events
	local ev
	ev=$(grep -F '"path":"deep_secret.txt"' <<<"$FL")
	[[ -n $ev ]] || { fail "no event for deep_secret.txt: $(excerpt "$FL")"; return; }
	[[ $ev == *'"path_partial":true'* ]] || fail "the relative path is not marked partial: $(excerpt "$ev")"
	[[ $ev == *'"decision":"unknown"'* && $ev == *'"reason":"not judged: '* ]] ||
		fail "not said unjudged: $(excerpt "$ev")"
	grep -E '"path":"[^/"][^"]*"' <<<"$FL" | grep -vF '"path_partial":true' | grep -F 'dd' &&
		fail 'a relative path recorded unmarked'
	grep -F '"op":"chmod"' <<<"$FL" | grep -F '"path":null' | matches -F '"decision":"unknown"' ||
		fail "the fchmod of a file with no readable name is not unknown: $(excerpt "$(grep -F '"op":"chmod"' <<<"$FL")")"
	grep -F '"path":"/proc/self/cwd/via_proc.txt"' <<<"$FL" | matches -F '"decision":"unknown"' ||
		fail "the write below /proc/self/cwd is not unknown: $(excerpt "$(grep -F via_proc <<<"$FL")")"
	grep -F 'deep' <<<"$FL" | grep -F '"decision":"allow"' && fail 'a deep write said allowed'
	return 0
}

# Bad input: a path of 4096 bytes and a name that is not UTF-8 leave valid
# JSON (the name kept losslessly, "escaped").
test_files_bad_names() {
	local long
	long=$(printf 'd%.0s' {1..4090})
	wsh "echo x > \"\$(printf 'bad\\377name')\"; echo y > /tmp/$long; echo \"long rc=\$?\"; echo done"
	assert_out_has done
	local f
	f=$(latest_log)
	local v
	v=$("$WPROBE" jsonl <"$f")
	[[ $v == VALID* ]] || fail "the log is not JSON Lines: $v"
	fl_events
	grep -F '"escaped"' <<<"$FL" | matches -F 'bad' || fail "no escaped name for bad\\377name: $(excerpt "$FL")"
	grep -qF "/tmp/ddddddddd" <<<"$FL" || fail 'no event for the 4096-byte path'
}

# fl_read PATH: a file event on PATH with op open, access read, allowed.
fl_read() {
	local ev
	ev=$(grep -F "\"path\":\"$1\"" <<<"$FL" | grep -F '"access":"read"' | head -n 1)
	[[ -n $ev ]] || { fail "no read event for $1: $(excerpt "$FL")"; return; }
	[[ $ev == *'"op":"open"'* && $ev == *'"decision":"allow"'* ]] ||
		fail "not an allowed open: $(excerpt "$ev")"
}

# Reads outside the workspace and the system directories are on the record
# by default (fanotify on the sandbox's own mounts, Linux 6.10 and later): a
# file in the agent's home, one in /tmp, one in /var/tmp (another part of
# the same tmpfs), and one reached through `..` past
# the workspace's top (recorded under the path it resolves to); a read in
# the workspace, or of /etc, leaves none; `audit minimal` records none.
test_files_reads_outside() {
	printf 'in\n' >inside.txt
	local up
	up=$(printf '../%.0s' $(seq 1 $(tr -cd / <<<"$WS" | wc -c)))
	wsh "printf 'h\n' > ~/home-read.txt; printf 't\n' > /tmp/tmp-read.txt; printf 'u\n' > /tmp/up-read.txt
	     printf 'v\n' > /var/tmp/var-read.txt
	     cat ~/home-read.txt /tmp/tmp-read.txt /var/tmp/var-read.txt inside.txt /etc/passwd >/dev/null
	     cat ${up}tmp/up-read.txt >/dev/null; sleep 0.3; echo done"
	assert_out_has done
	[[ $ERR == *"outside the workspace are not recorded: the kernel refuses"* ]] &&
		skip 'the kernel refuses fanotify marks in a user namespace'
	fl_events
	fl_read /home/agent/home-read.txt
	fl_read /tmp/tmp-read.txt
	fl_read /var/tmp/var-read.txt
	# the spelling through .. is the exec's argument (the alert's link);
	# the read is recorded under the path it resolved to
	fl_read /tmp/up-read.txt
	grep -qF '"rule":"fs.parent-traversal"' "$(latest_log)" || fail 'no fs.parent-traversal alert'
	grep -F '"access":"read"' <<<"$FL" | matches -F "\"path\":\"$WS/inside.txt\"" &&
		fail "a read in the workspace recorded: $(excerpt "$FL")"
	grep -F '"access":"read"' <<<"$FL" | matches -F '"path":"/etc/passwd"' &&
		fail "a read of /etc recorded: $(excerpt "$FL")"
	printf 'audit minimal\n' >"$T_TMP/min.profile"
	wsh "printf 't\n' > /tmp/x; cat /tmp/x; echo done" --profile "$T_TMP/min.profile"
	fl_events
	[[ -z $FL ]] || fail "file events with audit minimal: $(excerpt "$FL")"
}

# The file-read helper killed from outside mid-session: the session goes
# on, and says on stderr and in an alert (rule files.reads-lost) that
# reads are no longer recorded; a read after that is not.
test_files_reads_helper_lost() {
	warden_bg "$T_TMP/bg.out" -- sh -c 'printf b > /tmp/before.txt; cat /tmp/before.txt >/dev/null
		sleep 0.3; echo started; while [ ! -e go ]; do sleep 0.05; done
		printf r > /tmp/after.txt; cat /tmp/after.txt >/dev/null; echo done'
	wait_for "$T_TMP/bg.out" '^started$' || fatal "the session did not start: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	grep -qF 'outside the workspace are not recorded' "$T_TMP/bg.out.err" &&
		skip 'the kernel refuses fanotify marks in a user namespace'
	local helper
	helper=$(pgrep -P "$WPID" -x warden-fanread)
	[[ -n $helper ]] || fatal "no warden-fanread child of warden ($WPID): $(ps -o pid,comm --ppid "$WPID" | tr '\n' ' ')"
	kill -KILL "$helper"
	wait_for "$(latest_log)" '"rule":"files.reads-lost"' 5 ||
		fail "no files.reads-lost alert after the helper was killed: $(excerpt "$(cat "$(latest_log)")")"
	: >go
	wait "$TPID"
	RC=$?
	OUT=$(cat "$T_TMP/bg.out")
	assert_rc 0 'the session after its helper was killed'
	assert_out_has done 'the session went on'
	grep -qF 'the file-read helper ended' "$T_TMP/bg.out.err" ||
		fail "no note on stderr: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	fl_events
	fl_read /tmp/before.txt
	grep -qF '"path":"/tmp/after.txt"' <<<"$(grep -F '"access":"read"' <<<"$FL")" &&
		fail "a read recorded after the helper ended: $(excerpt "$FL")"
}

# fanotify refused to warden by a seccomp filter outside it (a container's
# profile without warden's additions): the session runs, its walls
# whole, and warden says the reads are not recorded, naming the filter and
# the profile to run with.
test_files_reads_refused_by_outer_filter() {
	"$WPROBE" deny fanotify timeout -k 5 "$WARDEN_TIMEOUT" "$WARDEN" run -- sh -c 'cat /etc/hostname >/dev/null; echo ran' \
		</dev/null >"$T_TMP/fa.out" 2>"$T_TMP/fa.err"
	RC=$? OUT=$(<"$T_TMP/fa.out") ERR=$(<"$T_TMP/fa.err")
	assert_rc 0 'with fanotify refused'
	assert_out_has ran 'the command'
	grep -q 'reads outside the workspace are not recorded: the kernel, or a seccomp filter outside warden' <<<"$ERR" &&
		grep -q 'make-seccomp-profile' <<<"$ERR" ||
		fail "fanotify refused: stderr does not name the filter and the profile: $(excerpt "$ERR")"
}

# The file-read helper is out of the sandbox's reach: it runs in the
# sandbox's user and mount namespaces but not its pid namespace, so no
# process inside sees it in /proc or can signal it (it shares the
# supervisor's memory: fanread.c). A command that sends SIGKILL to every
# pid it can see still has its reads recorded afterwards, with no
# files.reads-lost alert.
test_files_reads_helper_out_of_reach() {
	warden_bg "$T_TMP/bg.out" -- sh -c 'echo started; while [ ! -e go ]; do sleep 0.05; done
		echo "comms: $(cat /proc/[0-9]*/comm 2>/dev/null | tr "\n" " ")"
		for p in /proc/[0-9]*; do n=${p#/proc/}; [ "$n" = $$ ] || kill -KILL "$n" 2>/dev/null; done
		printf r > /tmp/after-kill.txt; cat /tmp/after-kill.txt >/dev/null; sleep 0.3; echo done'
	wait_for "$T_TMP/bg.out" '^started$' || fatal "the session did not start: $(excerpt "$(cat "$T_TMP/bg.out.err")")"
	grep -qF 'outside the workspace are not recorded' "$T_TMP/bg.out.err" &&
		skip 'the kernel refuses fanotify marks in a user namespace'
	[[ -n $(pgrep -P "$WPID" -x warden-fanread) ]] ||
		fatal "no warden-fanread child of warden ($WPID): $(ps -o pid,comm --ppid "$WPID" | tr '\n' ' ')"
	: >go
	wait "$TPID"
	RC=$?
	OUT=$(cat "$T_TMP/bg.out")
	assert_rc 0 'the session whose command signalled every pid it saw'
	assert_out_has done 'the command went on'
	assert_out_has 'comms: ' 'the command listed its processes'
	[[ $OUT == *warden-fanread* ]] && fail "the helper is visible inside: $(excerpt "$OUT")"
	grep -qF '"rule":"files.reads-lost"' "$(latest_log)" &&
		fail "the helper was lost: $(excerpt "$(grep -F files.reads-lost "$(latest_log)")")"
	fl_events
	fl_read /tmp/after-kill.txt
}

# git's own rewrites of a protected .git/config that change only the
# identity or a branch's upstream (`git config user.email`, `git push -u`,
# `git checkout -b X origin/X`) are made by the supervisor on the host's
# file, in place, each a `file` event allowed with the settings it wrote,
# no alert; a rewrite that sets anything else (core.hooksPath, an alias,
# an upstream that is a URL, a planted core.fsmonitor), or a lock that is a
# symlink, a second link or a FIFO, is refused as before, with why
# (src/supervisor/cfgwrite.c).
test_git_config_settings_written() {
	have git || skip 'git is not installed'
	{ git init -q -b main . && git -c user.name=h -c user.email=h@example.invalid \
		commit -q --allow-empty -m first && git init -q --bare remote.git &&
		git remote add origin "$PWD/remote.git"; } || fatal 'git on the host failed'
	local ino
	ino=$(stat -c %i .git/config)
	wsh 'git config user.email agent@example.invalid; echo "email=$?"; echo "reads $(git config user.email)"
	     git checkout -q -b feat && git -c user.name=a commit -q --allow-empty -m two &&
	     git push -q -u origin feat; echo "push=$?"
	     git checkout -q -b track origin/feat; echo "track=$?"
	     ls .git/config.lock 2>/dev/null; echo done'
	assert_out_line 'email=0' 'git config user.email'
	assert_out_line 'reads agent@example.invalid' 'the setting read back inside'
	assert_out_line 'push=0' 'git push -u'
	assert_out_line 'track=0' 'git checkout -b track origin/feat'
	assert_out_line done
	[[ $ERR != *'risk score'* ]] || fail "a risk warning for git's own settings: $(excerpt "$ERR")"
	[[ $(git config user.email) == agent@example.invalid ]] || fail 'user.email not on the host'
	[[ $(git config branch.feat.remote) == origin && $(git config branch.feat.merge) == refs/heads/feat ]] ||
		fail "branch.feat's upstream not on the host: $(cat .git/config)"
	[[ $(git config branch.track.merge) == refs/heads/feat ]] || fail 'branch.track not on the host'
	[[ $(stat -c %i .git/config) == "$ino" ]] || fail '.git/config replaced, not written in place'
	assert_host_absent .git/config.lock
	fl_events
	grep -F '"op":"rename"' <<<"$FL" | grep -F "\"path2\":\"$WS/.git/config\"" | grep -F '"decision":"allow"' |
		grep -F '"reason":"git config written: user.email=agent@example.invalid"' >/dev/null ||
		fail "no allowed rename naming the setting: $(excerpt "$FL")"
	grep -qF '"event":"alert"' "$(latest_log)" && fail "an alert for git's own settings: $(grep -F '"event":"alert"' "$(latest_log)")"
	local before
	before=$(cksum <.git/config)
	wsh 'git config core.hooksPath /tmp/h; echo "hooks=$?"
	     git config alias.x "!sh"; echo "alias=$?"
	     git config branch.feat.remote https://example.invalid/r.git; echo "url=$?"
	     cp .git/config .git/config.lock && printf "[core]\n\tfsmonitor = touch /tmp/x\n" >> .git/config.lock &&
	     mv .git/config.lock .git/config; echo "planted=$?"; rm -f .git/config.lock
	     cp .git/config .git/two && printf "[user]\n\tname = other\n" >> .git/two
	     ln -s two .git/config.lock && mv .git/config.lock .git/config; echo "symlink=$?"; rm -f .git/config.lock
	     ln .git/two .git/config.lock && mv .git/config.lock .git/config; echo "linked=$?"
	     rm -f .git/config.lock; mkfifo .git/config.lock && mv .git/config.lock .git/config; echo "fifo=$?"
	     echo done' --profile "$(no_detect_actions)"
	assert_out_line done
	local w
	for w in hooks alias url planted symlink linked fifo; do
		assert_out_match "^$w=[1-9]" "the rewrite $w refused"
	done
	[[ $(cksum <.git/config) == "$before" ]] || fail ".git/config changed on the host: $(cat .git/config)"
	fl_events
	grep -F '"op":"rename"' <<<"$FL" | grep -F "\"path2\":\"$WS/.git/config\"" | grep -F '"decision":"deny"' |
		grep -F '"reason":"protected path: git config: core.hookspath set' >/dev/null ||
		fail "no refused rename naming core.hooksPath: $(excerpt "$FL")"
	grep -F '"decision":"deny"' <<<"$FL" | grep -F 'not a value warden writes' >/dev/null ||
		fail "no refusal naming the URL upstream: $(excerpt "$FL")"
}
