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
	# A repository created inside is moved aside after the session (its hooks
	# and config must not run on the host unreviewed), with its history intact.
	[[ ! -e $WS/.git ]] || fail 'a repository made in the sandbox stayed in place'
	local q
	q=$(compgen -G "$WS/.git.warden-quarantine-*" | head -n 1)
	[[ -n $q ]] || fatal 'the repository made in the sandbox is not on the host'
	OUT=$(git -c safe.directory='*' --git-dir="$q" log --format=%s 2>&1)
	[[ $OUT == first ]] || fail "the moved repository lacks the commit: $(excerpt "$OUT")"
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
