# t_seccache.sh - the compiled seccomp filter kept in warden's cache
# directory (src/sandbox/seccache.c): a session with a warm cache takes the
# kept file and refuses and records what the filter refuses; a kept file
# that is not to be trusted (its program changed, cut short, writable by
# the group, a symbolic link, owned by another user) is not taken: the
# session compiles the filter, still refuses, and the file is replaced; a
# profile that needs another filter gets a file of its own.
# shellcheck shell=bash

sc_dir() { printf '%s/warden' "$XDG_CACHE_HOME"; }

# sc_files: the kept filters, one a line.
sc_files() { (cd "$(sc_dir)" 2>/dev/null && ls -d seccomp-* 2>/dev/null); }

# sc_denies [warden run options]: ptrace is refused inside, and the
# session's log records the refusal.
sc_denies() {
	wsh './wprobe ptrace 1; echo rc=$?' "$@"
	assert_out_match 'rc=[1-9]' 'ptrace refused'
	local log
	log=$(ls -t "${XDG_STATE_HOME:-$HOME/.local/state}/warden/"*.jsonl 2>/dev/null | head -n 1)
	[[ -n $log ]] || fatal 'no session log'
	grep -F '"event":"syscall"' "$log" | grep -F '"name":"ptrace"' | matches -F '"decision":"deny"' ||
		fail "the log records no refused ptrace: $(excerpt "$(grep -F '"event":"syscall"' "$log")")"
}

# sc_allow_all FILE [resum]: the program of a kept filter made one that
# allows everything (BPF_RET SECCOMP_RET_ALLOW); with resum its checksum
# made to match, as a forger who can write the file would.
sc_allow_all() {
	python3 - "$@" <<'PY'
import hashlib, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
head = 16 + 64 + 64 + 8
b[head:] = bytes([6, 0, 0, 0, 0, 0, 0xff, 0x7f]) * ((len(b) - head) // 8)
if len(sys.argv) > 2:
    z = bytearray(b)
    z[80:144] = b'\0' * 64
    b[80:144] = hashlib.sha256(z).hexdigest().encode()
open(p, 'wb').write(b)
PY
}

# sc_replaced FILE INODE WHAT: FILE is again a regular file of ours, mode
# 0600, not the one of INODE.
sc_replaced() {
	[[ -f $1 && ! -L $1 && -O $1 ]] || fail "$3: the kept filter was not replaced by one of ours"
	[[ $(stat -c %a "$1") == 600 ]] || fail "$3: the kept filter has mode $(stat -c %a "$1")"
	[[ $(stat -c %i "$1") != "$2" ]] || fail "$3: the untrusted file is still there"
}

test_seccache_warm() {
	have python3 || skip 'python3 is not installed'
	export XDG_CACHE_HOME="$T_TMP/cache"
	sc_denies
	local files ino
	mapfile -t files < <(sc_files)
	((${#files[@]} == 1)) || fatal "expected one kept filter after a session, found: ${files[*]}"
	local f
	f="$(sc_dir)/${files[0]}"
	[[ $(stat -c %a "$f") == 600 && -O $f ]] || fail "the kept filter: mode $(stat -c %a "$f"), not the user's own"
	ino=$(stat -c %i "$f")
	# warm: the same file taken (not written again), the same refusal
	sc_denies
	[[ $(stat -c %i "$f") == "$ino" ]] || fail 'a warm session wrote the kept filter again'
	mapfile -t files < <(sc_files)
	((${#files[@]} == 1)) || fail "a warm session added a kept filter: ${files[*]}"
}

# sc_untrusted HOW: the kept filter spoiled by HOW, then a session.
sc_untrusted() {
	local f ino
	f="$(sc_dir)/$(sc_files | head -n 1)"
	[[ -f $f ]] || fatal "$1: no kept filter to spoil"
	case $1 in
	changed) sc_allow_all "$f" ;;
	cut) truncate -s -8 "$f" ;;
	group-writable) sc_allow_all "$f" resum && chmod 0620 "$f" ;;
	symlink)
		cp "$f" "$T_TMP/forged" && sc_allow_all "$T_TMP/forged" resum
		rm "$f" && ln -s "$T_TMP/forged" "$f"
		;;
	foreign) sc_allow_all "$f" resum && chown 12345:12345 "$f" ;;
	esac
	ino=$(stat -c %i "$f")
	sc_denies
	sc_replaced "$f" "$ino" "$1"
}

test_seccache_untrusted() {
	have python3 || skip 'python3 is not installed'
	export XDG_CACHE_HOME="$T_TMP/cache"
	sc_denies
	local how
	for how in changed cut group-writable symlink; do
		sc_untrusted "$how"
	done
	if is_root; then
		sc_untrusted foreign
	else
		note 'skipped: a kept filter owned by another user (needs root)'
	fi
	# the replacement is taken again
	sc_denies
}

test_seccache_profile() {
	export XDG_CACHE_HOME="$T_TMP/cache"
	sc_denies
	printf 'audit minimal\n' >"$T_TMP/minimal.profile"
	sc_denies --profile "$T_TMP/minimal.profile"
	local files
	mapfile -t files < <(sc_files)
	((${#files[@]} == 2)) || fatal "expected a kept filter for each of two profiles, found: ${files[*]}"
	! cmp -s "$(sc_dir)/${files[0]}" "$(sc_dir)/${files[1]}" || fail 'two profiles, the same filter'
}
