# t_files_proc.sh - file actions spelled through the magic links of /proc
# (/proc/self/fd/N, /dev/fd/N, /proc/self/cwd/..., /proc/self/root/...,
# /proc/thread-self/cwd/..., /proc/PID/cwd/...) are on the record under the
# path of the file they reach, judged as that path: recorded by default
# (not left out as /proc noise), checked for hard links and `write ask`,
# refused where the walls refuse it and not said refused where they do not.
# Uses fl_events and fl_has (t_files.sh) and dt_alert (t_detect.sh).
# shellcheck shell=bash

# fp_event OP PATH: the latest session has a `file` event of OP on PATH,
# allowed; printed.
fp_event() {
	grep -F "\"op\":\"$1\"" <<<"$FL" | grep -F "\"path\":\"$2\"" | grep -F '"decision":"allow"' |
		head -n 1 | grep . || fail "no allowed $1 event on $2: $(excerpt "$FL")"
}

# A write through /proc/self/fd/N or /dev/fd/N (a file opened for reading,
# opened anew for writing) is a `file` event under the file's path, with
# the hard-link check (nlink, alert fs.hardlink-write) when the file has
# another name outside the workspace; judged by that file (a scratch file
# is Landlock's to write, a protected one is refused).
test_files_proc_fd_write() {
	printf 'orig\n' >"$WS/a.txt"
	printf 'orig\n' >"$WS/b.txt"
	printf 'export A=1\n' >"$WS/.envrc"
	mkdir -p "$T_TMP/outside"
	echo original >"$T_TMP/outside/lib.js"
	local linked=1
	ln "$T_TMP/outside/lib.js" "$WS/lib.js" 2>/dev/null || linked=0
	wsh 'exec 3<a.txt; echo OVER > /proc/self/fd/3; exec 4<b.txt; echo MORE >> /dev/fd/4
	     if [ -e lib.js ]; then exec 5<lib.js; echo EVIL >> /proc/self/fd/5; fi
	     echo t > /tmp/t.txt; exec 6</tmp/t.txt; echo T > /proc/self/fd/6 || echo tmp refused
	     exec 7<.envrc; echo bad > /dev/fd/7 2>/dev/null || echo envrc refused; echo done' \
		--profile "$(dt_quiet)"
	assert_out_line 'done'
	assert_host_file "$WS/a.txt" OVER 'a.txt'
	fl_events
	fl_has "$WS/a.txt" allow
	fl_has "$WS/b.txt" allow
	assert_out_lacks 'tmp refused'
	fl_has /tmp/t.txt allow
	assert_out_line 'envrc refused'
	fl_has "$WS/.envrc" deny 'protected path'
	assert_host_file "$WS/.envrc" 'export A=1' '.envrc'
	grep -F '"path":"/proc/' <<<"$FL" && fail 'a file event kept the /proc spelling'
	grep -F '"path":"/dev/fd' <<<"$FL" && fail 'a file event kept the /dev/fd spelling'
	if ((linked)); then
		grep -F "\"path\":\"$WS/lib.js\"" <<<"$FL" | matches -F '"nlink":2' ||
			fail "no file event with nlink 2 for lib.js: $(excerpt "$FL")"
		dt_alert fs.hardlink-write
	else
		note 'no hard link from the workspace to a file outside it here: nlink not checked'
	fi
	return 0
}

# `write ask` holds a write through /proc/self/fd/N as it holds the same
# write by name (in CI mode: refused at once).
test_files_proc_fd_write_ask() {
	printf 'orig\n' >"$WS/CHANGELOG.md"
	printf 'write ask CHANGELOG.md\n' >"$T_TMP/p"
	wsh 'exec 3<CHANGELOG.md; echo viaproc >> /proc/self/fd/3; echo "rc=$?"' \
		--profile "$T_TMP/p" --ci --artifacts "$T_TMP/art"
	assert_out_match '^rc=[1-9]' 'the write through /proc/self/fd held and refused'
	assert_host_file "$WS/CHANGELOG.md" orig 'CHANGELOG.md'
	fl_events
	grep -F "\"path\":\"$WS/CHANGELOG.md\"" <<<"$FL" | matches -F '"decision":"deny"' ||
		fail "no refused file event on $WS/CHANGELOG.md: $(excerpt "$FL")"
}

# chmod, chown and utime through /proc/self/cwd, /proc/self/root and
# /proc/thread-self/cwd are recorded under the file's path.
test_files_proc_attrs() {
	mkdir -p "$WS/d"
	printf 'x\n' >"$WS/f"
	printf 'y\n' >"$WS/g"
	wsh "chmod 600 /proc/self/cwd/f; chmod 700 /proc/self/root$WS/d
	     chown \$(id -u):\$(id -g) /proc/thread-self/cwd/g
	     touch -c -d 2001-01-01 /proc/self/cwd/g; echo done" --profile "$(no_detect_actions)"
	assert_out_line 'done'
	[[ $(stat -c %a "$WS/f") == 600 ]] || fail 'the chmod through /proc/self/cwd did not happen'
	fl_events
	fp_event chmod "$WS/f" >/dev/null
	fp_event chmod "$WS/d" >/dev/null
	fp_event chown "$WS/g" >/dev/null
	fp_event utime "$WS/g" >/dev/null
	return 0
}

# Writes, creates, mkdir, unlink, rename and symlink through the magic
# links succeed and are recorded allowed under the path they reach (not
# refused by Landlock or a read-only /dev, and not listed as refused at
# the end); a protected path reached through one is refused as such.
test_files_proc_made() {
	mkdir -p "$WS/sub"
	printf 'a\n' >"$WS/a.txt"
	printf 'b\n' >"$WS/sub/b"
	printf 'export A=1\n' >"$WS/.envrc"
	wsh "echo A > /proc/self/cwd/p1.txt; echo B > /proc/self/root$WS/p2.txt
	     exec 3<.; echo C > /dev/fd/3/p3.txt; echo D > /proc/thread-self/cwd/p4.txt
	     echo E > /proc/\$\$/cwd/p5.txt; sh -c 'echo F > /proc/\$PPID/cwd/p6.txt'
	     mkdir /proc/self/cwd/pdir; rm /proc/self/cwd/sub/b
	     mv /proc/self/cwd/a.txt /proc/self/cwd/a2.txt; ln -s /etc/passwd /proc/self/cwd/lnk
	     echo bad > /proc/self/cwd/.envrc 2>/dev/null || echo envrc refused; echo done" \
		--profile "$(no_detect_actions)"
	assert_out_line 'done'
	assert_out_line 'envrc refused'
	local p
	for p in p1 p2 p3 p4 p5 p6; do
		[[ -f $WS/$p.txt ]] || fail "$p.txt was not made"
	done
	fl_events
	for p in p1 p2 p3 p4 p5 p6; do
		fp_event open "$WS/$p.txt" >/dev/null
	done
	fp_event mkdir "$WS/pdir" >/dev/null
	fp_event unlink "$WS/sub/b" >/dev/null
	fp_event rename "$WS/a.txt" | matches -F "\"path2\":\"$WS/a2.txt\"" || fail 'the rename has not the new name'
	grep -F '"op":"symlink"' <<<"$FL" | grep -F "\"path\":\"$WS/lnk\"" | matches -F '"decision":"allow"' ||
		fail "no allowed symlink event on $WS/lnk: $(excerpt "$FL")"
	fl_has "$WS/.envrc" deny 'protected path'
	[[ $(grep -cF '"decision":"deny"' <<<"$FL") == 1 ]] ||
		fail "a write that happened recorded as refused: $(excerpt "$(grep -F '"decision":"deny"' <<<"$FL")")"
	assert_err_match 'refused during this session' 'the .envrc refusal listed'
	grep -A20 'refused during this session' <<<"$ERR" | grep -E 'p[1-6]\.txt|pdir|a2?\.txt|lnk|sub/b' &&
		fail 'a write that happened listed as refused at the end'
	return 0
}
