# t_work.sh - ordinary work runs inside: git, a C toolchain, python, shell
# pipelines.
# shellcheck shell=bash

test_git_fresh_repo() {
	have git || skip 'git not installed'
	echo hello >a.txt
	wsh 'git init -q && git add a.txt &&
	     git -c user.name=agent -c user.email=agent@example.invalid commit -qm first &&
	     git log --oneline | wc -l'
	assert_rc 0 'git init/add/commit inside'
	assert_out_eq 1 'one commit'
	# A repository git init made, from which git runs nothing (its own
	# settings, its sample hooks), stays in place after the session, on
	# the record (cargo new, create-next-app and uv init make one too).
	OUT=$(git -c safe.directory='*' -C "$WS" log --format=%s 2>&1)
	[[ $OUT == first ]] || fail "the repository made in the sandbox is not in place: $(excerpt "$OUT")"
	compgen -G "$WS/.git.warden-quarantine-*" >/dev/null && fail 'a plain repository moved aside'
	[[ $ERR == *'was moved to'* ]] && fail "a plain repository reported moved: $(excerpt "$ERR")"
	grep -F '"rule":"git.created-in-sandbox"' "$(latest_log)" |
		grep -F '"path":".git"' | grep -F '"action":"kept"' >/dev/null || fail 'the kept repository is not on the record'
	# A clone (its remote, its branch's upstream) and an identity set in a
	# new repository stay too.
	wsh 'git clone -q . cl && git -C cl config user.email agent@example.invalid &&
	     git init -q idn && git -C idn config user.name agent && echo done'
	assert_out_has done
	[[ -d $WS/cl/.git && -d $WS/idn/.git ]] || fail 'a clone, or a repository with an identity, moved aside'
	OUT=$(git -c safe.directory='*' -C "$WS/cl" log --format=%s 2>&1)
	[[ $OUT == first ]] || fail "the clone is not in place: $(excerpt "$OUT")"
	# Anything more in it and it is moved aside, with its history intact: a
	# setting git init does not write (an alias, a remote's upload-pack
	# command), a hook, a sample that is a link, a config that is a link, a
	# redirect.
	wsh 'for d in alias remote hook link cfglink modules; do git init -q $d; done
	     git -C alias config alias.st status; git -C remote remote add origin https://example.invalid/x
	     git -C remote config remote.origin.uploadpack "touch /tmp/x"
	     cp hook/.git/hooks/pre-commit.sample hook/.git/hooks/pre-commit
	     ln -s /etc/passwd link/.git/hooks/x.sample
	     mv cfglink/.git/config cfglink/.git/c && ln -s c cfglink/.git/config; mkdir modules/.git/modules
	     git -C alias -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m kept-history
	     echo done' --profile "$(no_detect_actions)"
	assert_out_has done
	local d q
	for d in alias remote hook link cfglink modules; do
		[[ -e $WS/$d/.git ]] && fail "$d: the repository stayed in place"
		q=$(compgen -G "$WS/$d/.git.warden-quarantine-*" | head -n 1)
		[[ -n $q ]] || fail "$d: not moved aside"
	done
	# each with the first thing that is not git init's, on stderr and in
	# the alert
	local why
	for why in 'alias/.git (its config sets alias.st)' \
		'remote/.git (its config sets remote.origin.uploadpack)' \
		'hook/.git (its hooks hold pre-commit)' 'link/.git (its hooks hold x.sample)' \
		'cfglink/.git (its config is no regular file of at most 64 KiB)' \
		'modules/.git (it has modules, which sends git elsewhere for configuration)'; do
		[[ $ERR == *"created $WS/$why;"* ]] || fail "no word of why on stderr: $why"
	done
	grep -F '"rule":"git.created-in-sandbox"' "$(latest_log)" |
		grep -F '"path":"hook/.git"' | matches -F '"detail":"its hooks hold pre-commit"' ||
		fail "the alert does not say why hook/.git was moved aside"
	q=$(compgen -G "$WS/alias/.git.warden-quarantine-*" | head -n 1)
	OUT=$(git -c safe.directory='*' --git-dir="$q" log --format=%s 2>&1)
	[[ $OUT == kept-history ]] || fail "the moved repository lacks the commit: $(excerpt "$OUT")"
	# The host's own configuration, read first for every repository: a
	# relative core.hooksPath starts at a new repository's top (where the
	# agent put .githooks/pre-commit), and an include in the workspace is
	# the agent's to write. Then even git init's own is moved aside.
	local cfg
	for cfg in '[core]\n\thooksPath = .githooks\n' "[include]\n\tpath = $WS/inc.cfg\n"; do
		rm -rf "$WS/h" && printf "$cfg" >"$HOME/.gitconfig"
		wsh 'git init -q h && mkdir h/.githooks && echo "#!/bin/sh" > h/.githooks/pre-commit && echo done'
		assert_out_has done
		[[ -e $WS/h/.git ]] && fail "a new repository kept with the host's $(excerpt "$(<"$HOME/.gitconfig")")"
		compgen -G "$WS/h/.git.warden-quarantine-*" >/dev/null || fail 'h: not moved aside'
		[[ $ERR == *"(your own git configuration sends a new repository's hooks into the workspace"* ]] ||
			fail "no word of the host's configuration on stderr: $(excerpt "$ERR")"
	done
	rm -f "$HOME/.gitconfig"
}

test_git_existing_repo() {
	have git || skip 'git not installed'
	git init -q . && echo one >a.txt && git add a.txt &&
		git -c user.name=host -c user.email=host@example.invalid commit -qm host-commit ||
		fatal 'host git setup failed'
	wsh 'echo two >>a.txt && git add a.txt &&
	     git -c user.name=agent -c user.email=agent@example.invalid commit -qm agent-commit &&
	     git log --format=%s | head -n 2 | tr "\n" " "; git status --porcelain | grep -v "^?? wprobe" | wc -l'
	assert_rc 0 'git add/commit in a host repository'
	assert_out_has 'agent-commit host-commit' 'commits'
	OUT=$(git -c safe.directory='*' -C "$WS" log --format=%s 2>&1 | head -n 1)
	[[ $OUT == agent-commit ]] || fail "host does not see the agent's commit: $(excerpt "$OUT")"
}

test_cc_build() {
	have cc || skip 'no cc on the host'
	cat >hello.c <<-'EOF'
		#include <stdio.h>
		int main(void) { printf("hello %d\n", 6 * 7); return 0; }
	EOF
	cat >thr.c <<-'EOF'
		#include <pthread.h>
		#include <stdio.h>
		static void *run(void *arg) { *(int *)arg = 42; return NULL; }
		int main(void) {
			pthread_t t; int v = 0;
			if (pthread_create(&t, NULL, run, &v) != 0) { puts("pthread_create failed"); return 1; }
			pthread_join(t, NULL);
			printf("thread %d\n", v);
			return 0;
		}
	EOF
	wsh 'cc -O2 -o hello hello.c && ./hello && cc -O2 -pthread -o thr thr.c && ./thr'
	assert_rc 0 'cc build and run'
	assert_out_line 'hello 42'
	assert_out_line 'thread 42' 'threads (clone3 -> ENOSYS fallback)'
	[[ -x hello ]] || fail 'binary not in the workspace on the host'
}

test_python() {
	[[ -x /usr/bin/python3 ]] || skip '/usr/bin/python3 not installed'
	wrun -- /usr/bin/python3 -c 'print(6*7)'
	assert_rc 0
	assert_out_eq 42 'python3 -c'
	wrun -- /usr/bin/python3 -c 'import threading, subprocess; t = threading.Thread(target=lambda: None); t.start(); t.join(); print(subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip())'
	assert_out_eq sub 'python threads and subprocess'
}

test_shell_pipeline() {
	local want
	want=$(sh -c 'seq 100 | sort -r | head -1')
	wrun -- sh -c 'seq 100 | sort -r | head -1'
	assert_rc 0
	assert_out_eq "$want" 'seq | sort -r | head'
	wrun -- sh -c 'printf "b\na\nc\n" | sort | tr "\n" " " | sed "s/ $//"; echo; echo x > f && wc -c < f'
	assert_out_eq $'a b c\n2' 'pipes, redirections'
}
