# t_vmshim.sh - a command that is a version manager's shim (pyenv, rbenv,
# goenv, nodenv, asdf, mise) runs the interpreter the shim would pick for the workspace,
# with no flags: its version directory exposed read-only and nothing else of
# the manager or the home; the workspace's version file, the manager's
# variable and the global setting obeyed; `policy show -- COMMAND` says
# which; a version name that is not one refused; an interpreter the
# command runs by name inside resolved the same way, and nvm's node (an
# install prefix in the home on PATH) exposed for it; a workspace's Python
# virtual environments with their base interpreters' installs; rustup's
# proxies (a fixture of its layout) resolved to the toolchain; sdkman's java
# by name through its `current` symlink; uv, deno and bun, one program
# each, exposed alone. pyenv and asdf are
# fixtures of their layouts (shims/, versions/ or installs/, the shim's
# text as they write it); rbenv is Debian's (its own `rbenv rehash` makes
# the shims); goenv and nodenv are fixtures of their shim (rbenv's); mise
# is the real one from npm (tests/agents/install.sh).
# shellcheck shell=bash

# vm_version DIR LABEL: an interpreter DIR/bin/python3 (or what $VM_CMD
# names) that says LABEL, its arguments, and whether the manager's root
# ($VM_ROOT) shows anything but the version directories.
vm_version() {
	mkdir -p "$1/bin"
	printf '#!/bin/sh\necho "fixture %s $*"\n[ -e "%s/secret.txt" ] && echo "ROOT LEAKED"\nexit 0\n' \
		"$2" "$VM_ROOT" >"$1/bin/${VM_CMD:-python3}"
	chmod 0755 "$1/bin/${VM_CMD:-python3}"
}

# pyenv_fixture: pyenv's layout under the fake HOME: shims/python3 as
# `pyenv rehash` writes it, libexec/pyenv that refuses to run (warden never
# runs the manager), versions 3.11.7 and 3.12.1, the global version 3.11.7.
pyenv_fixture() {
	VM_ROOT=$HOME/.pyenv
	mkdir -p "$VM_ROOT/shims" "$VM_ROOT/libexec"
	printf '#!/bin/sh\necho "pyenv itself ran" >&2\nexit 99\n' >"$VM_ROOT/libexec/pyenv"
	cat >"$VM_ROOT/shims/python3" <<EOF
#!/usr/bin/env bash
set -e
[ -n "\$PYENV_DEBUG" ] && set -x

program="\${0##*/}"

export PYENV_ROOT="$VM_ROOT"
exec "$VM_ROOT/libexec/pyenv" exec "\$program" "\$@"
EOF
	chmod 0755 "$VM_ROOT/shims/python3" "$VM_ROOT/libexec/pyenv"
	vm_version "$VM_ROOT/versions/3.11.7" 'pyenv 3.11.7'
	vm_version "$VM_ROOT/versions/3.12.1" 'pyenv 3.12.1'
	echo 3.11.7 >"$VM_ROOT/version"
	echo 'not for the sandbox' >"$VM_ROOT/secret.txt"
	VM_PATH=$VM_ROOT/shims:$PATH
}

test_vmshim_pyenv() {
	pyenv_fixture
	PATH=$VM_PATH wrun -- python3 one
	assert_rc 0 'python3 through pyenv shim'
	assert_out_line 'fixture pyenv 3.11.7 one' 'the global version'
	assert_out_lacks 'LEAKED' "the rest of pyenv's root is not there"
	echo 3.12 >"$WS/.python-version"
	PATH=$VM_PATH wrun -- python3 two
	assert_out_line 'fixture pyenv 3.12.1 two' "the workspace's .python-version (a prefix)"
	PYENV_VERSION=3.11.7 PATH=$VM_PATH wrun -- python3 three
	assert_out_line 'fixture pyenv 3.11.7 three' 'PYENV_VERSION first'
	PATH=$VM_PATH wardenc policy show -- python3
	assert_out_has "$VM_ROOT/versions/3.12.1\"" 'policy show: the version directory exposed'
	assert_out_has "pyenv 3.12.1, from $WS/.python-version" 'policy show: which and why'
	assert_out_lacks "\"$VM_ROOT\"" "policy show: not pyenv's root"
	printf '#!/usr/bin/env python3\nprint(1)\n' >"$WS/script.py"
	chmod 0755 "$WS/script.py"
	PATH=$VM_PATH wrun -- ./script.py four
	assert_out_line 'fixture pyenv 3.12.1 ./script.py four' "a script's env python3"
}

# An interpreter the command runs by name inside (an agent's `python3 -m
# pytest`, a shell's) is the version the workspace asks for, not the
# system's: the managers' shims on PATH are resolved for every session,
# whatever the command; a choice that does not resolve stops nothing.
test_vmshim_pyenv_by_name_inside() {
	pyenv_fixture
	echo 3.12.1 >"$WS/.python-version"
	PATH=$VM_PATH wsh 'python3 inner; command -v python3'
	assert_rc 0 'python3 by name inside a shell'
	assert_out_line 'fixture pyenv 3.12.1 inner' "the workspace's version, by name inside"
	assert_out_line "$VM_ROOT/versions/3.12.1/bin/python3" 'its bin first on PATH inside'
	assert_out_lacks 'LEAKED' "the rest of pyenv's root is not there"
	# what that shows of the home (the fixture's has .ssh and .aws): the
	# way to the version's directory, and nothing beside it
	PATH=$VM_PATH wsh "ls -A '$HOME'; echo ==; ls -A '$VM_ROOT'; echo ==; ls -A '$VM_ROOT/versions'"
	assert_out_eq "$(printf '.pyenv\n==\nversions\n==\n3.12.1')" 'the home shows only the way to the version'
	PATH=$VM_PATH wardenc policy show -- sh
	assert_out_has "python3 (pyenv 3.12.1, from $WS/.python-version) on PATH inside" 'policy show says why'
	echo 9.9 >"$WS/.python-version"
	PATH=$VM_PATH wsh 'echo ran'
	assert_rc 0 'a version not installed, for a command that does not run it'
	assert_out_line 'ran'
}

# nvm puts a version's own bin directory on PATH, in the home: node by
# name inside is that one, its install prefix exposed read-only, and
# nothing else of nvm's directory.
test_vmshim_nvm_by_name_inside() {
	VM_ROOT=$HOME/.nvm VM_CMD=node
	vm_version "$VM_ROOT/versions/node/v20.0.0" 'nvm v20.0.0'
	echo 'x' >"$VM_ROOT/secret.txt"
	PATH=$VM_ROOT/versions/node/v20.0.0/bin:$(path_without_home_tools) wsh "node inner; ls -A '$VM_ROOT'"
	assert_rc 0 'node by name inside a shell'
	assert_out_line 'fixture nvm v20.0.0 inner' "nvm's node, by name inside"
	assert_out_lacks 'LEAKED' "the rest of nvm's directory is not there"
	assert_out_line 'versions' "nvm's directory shows only the way to the version"
	assert_out_lacks 'secret.txt' "nvm's directory shows only the way to the version"
}

# A global install inside (`npm install -g`, as nvm's npm writes into its
# node's install prefix) is refused by the read-only tree, and npm says
# only EROFS: the end says which tree and why it is read-only, and what to
# do instead, once for the tree; a refused write elsewhere (/usr) is no
# tool's tree and gets no such line.
test_vmshim_install_tree_write_hinted() {
	VM_ROOT=$HOME/.nvm VM_CMD=node
	vm_version "$VM_ROOT/versions/node/v20.0.0" 'nvm v20.0.0'
	local prefix=$VM_ROOT/versions/node/v20.0.0
	PATH=$prefix/bin:$(path_without_home_tools) wsh "node inner
		mkdir -p '$prefix/lib/node_modules/pkg' || echo refused-1
		touch '$prefix/bin/pkg' || echo refused-2
		touch /usr/warden-test 2>/dev/null || true"
	assert_out_line 'fixture nvm v20.0.0 inner' "nvm's node, by name inside"
	assert_out_line refused-1 'the global install refused'
	assert_out_line refused-2 'the bin link refused'
	[[ ! -e $prefix/lib/node_modules ]] || fail 'the install tree was written'
	assert_err_match "^warden: a write into ${prefix//./\\.} was refused: it is exposed read-only, as the install prefix of node" \
		'the tree and why'
	assert_err_match "^warden: a program changed in a tool's install tree would run on the host, outside warden: install into the workspace instead \\(npm install" \
		'what to do instead'
	[[ $(grep -c 'was refused: it is exposed read-only' <<<"$ERR") == 1 ]] ||
		fail "not one line for the tree: $(excerpt "$ERR")"
	[[ $ERR != *'a write into /usr'* ]] || fail "a read-only system directory hinted as a tool's tree: $(excerpt "$ERR")"
}

# Tools that are one program each, put in the home by their own installers
# (uv's and uvx in ~/.local/bin, deno's ~/.deno/bin, bun's ~/.bun/bin): an
# agent's `uv run pytest` by name inside. Each is exposed alone, read-only,
# at its place, when it is an ELF program: nothing else of its directory,
# and a script of such a name is not.
test_vmshim_standalone_tools() {
	mkdir -p "$HOME/.local/bin" "$HOME/.deno/bin" "$HOME/.bun/bin"
	cp /usr/bin/id "$HOME/.local/bin/uv" # an ELF program, as uv is
	cp /usr/bin/whoami "$HOME/.deno/bin/deno"
	cp /usr/bin/whoami "$HOME/.bun/bin/bun"
	printf '#!/bin/sh\necho LEAKED-script\n' >"$HOME/.local/bin/uvx"
	chmod 0755 "$HOME/.local/bin/uvx"
	echo LEAKED-token >"$HOME/.local/bin/other"
	local path=$HOME/.local/bin:$HOME/.deno/bin:$HOME/.bun/bin:$(path_without_home_tools)
	PATH=$path wsh "uv -u; echo deno=\$(deno); echo bun=\$(bun); uvx || echo no-uvx
	     ls -A '$HOME/.local/bin'; cat '$HOME/.local/bin/other'; true"
	assert_rc 0
	assert_out_line 1000 'uv by name inside'
	assert_out_line deno=agent 'deno by name inside'
	assert_out_line bun=agent 'bun by name inside'
	assert_out_line no-uvx 'a script named uvx is not exposed'
	assert_out_line uv 'uv alone in ~/.local/bin'
	assert_out_lacks LEAKED 'the rest of ~/.local/bin'
	PATH=$path wardenc policy show -- sh
	assert_out_has '"why": "file of uv on PATH inside"' 'policy show says why'
}

# A conda base directly in the home (~/miniconda3) is never exposed whole,
# and its python3 alone would not run inside: python3 by name is left to
# what the sandbox shows on PATH, the base's files (.condarc) stay out.
test_vmshim_conda_base_left_alone() {
	local base=$HOME/miniconda3
	mkdir -p "$base/bin" "$base/lib" "$base/conda-meta"
	printf '#!/bin/sh\necho "conda python $*"\n' >"$base/bin/python3"
	chmod 0755 "$base/bin/python3"
	echo 'channels: [https://conda.example.invalid/t/LEAKED/main]' >"$base/.condarc"
	PATH=$base/bin:$(path_without_home_tools) wsh "command -v python3 || echo 'no python3'; cat '$base/.condarc'"
	assert_out_lacks 'conda python' "the base's python3 alone"
	assert_out_lacks "$base/bin/python3" "the base's python3 alone, found by name"
	assert_out_lacks 'LEAKED' "the base's .condarc"
}

# ... and run as the command itself, its file alone is exposed, and the user
# is told what is missing and the profile line that would add it; with
# that line, nothing is said.
test_vmshim_conda_base_command_told() {
	local base=$HOME/miniconda3
	mkdir -p "$base/bin" "$base/lib"
	printf '#!/bin/sh\necho "conda python $*"\n' >"$base/bin/python3"
	chmod 0755 "$base/bin/python3"
	PATH=$base/bin:$(path_without_home_tools) wrun -- python3 one
	assert_rc 0
	assert_out_line 'conda python one' 'the command by name'
	assert_err_match "only $base/bin/python3 of $base is in the sandbox" 'what is in and what is not'
	assert_err_match "add \`read-only $base\` to a profile" 'the line that would add the rest'
	printf 'read-only %s\n' "$base" >"$T_TMP/conda.profile"
	PATH=$base/bin:$(path_without_home_tools) wrun --profile "$T_TMP/conda.profile" -- python3 two
	assert_out_line 'conda python two' 'the command, its base exposed by the profile'
	[[ $ERR != *"is in the sandbox"* ]] || fail "told again with the base exposed: $(excerpt "$ERR")"
}

test_vmshim_pyenv_refusals() {
	pyenv_fixture
	echo '../../../etc' >"$WS/.python-version"
	PATH=$VM_PATH wrun -- python3
	assert_rc 125 'a version name with a slash'
	assert_err_match "refusing the version name '\.\./\.\./\.\./etc'" 'says which'
	echo 9.9 >"$WS/.python-version"
	PATH=$VM_PATH wrun -- python3
	assert_rc 125 'a version not installed'
	assert_err_match "no version it picks here \(9\.9, from $WS/\.python-version\) is installed" 'says which and where from'
	# "system": the next python3 on PATH past the shims
	mkdir -p "$T_TMP/sys"
	printf '#!/bin/sh\necho "system python $*"\n' >"$T_TMP/sys/python3"
	chmod 0755 "$T_TMP/sys/python3"
	echo system >"$WS/.python-version"
	PATH=$VM_ROOT/shims:$T_TMP/sys:/usr/bin:/bin wrun -- python3 five
	assert_out_line 'system python five' '"system" is the next on PATH'
	assert_err_match '^$|.' 'no error'
}

test_vmshim_asdf() {
	VM_ROOT=$HOME/.asdf
	mkdir -p "$VM_ROOT/shims"
	printf '#!/usr/bin/env bash\n# asdf-plugin: python 3.11.7\n# asdf-plugin: python 3.12.1\nexec asdf exec "python3" "$@" # asdf_allow: '"'"' asdf '"'"'\n' \
		>"$VM_ROOT/shims/python3"
	chmod 0755 "$VM_ROOT/shims/python3"
	vm_version "$VM_ROOT/installs/python/3.11.7" 'asdf 3.11.7'
	vm_version "$VM_ROOT/installs/python/3.12.1" 'asdf 3.12.1'
	echo 'x' >"$VM_ROOT/secret.txt"
	printf 'nodejs 20.0.0\npython 3.12.1 3.11.7\n' >"$HOME/.tool-versions"
	PATH=$VM_ROOT/shims:$PATH wrun -- python3 a
	assert_out_line 'fixture asdf 3.12.1 a' "the home's .tool-versions"
	printf 'python 3.11.7\n' >"$WS/.tool-versions"
	PATH=$VM_ROOT/shims:$PATH wrun -- python3 b
	assert_out_line 'fixture asdf 3.11.7 b' "the workspace's .tool-versions first"
	assert_out_lacks 'LEAKED' "the rest of asdf's directory is not there"
	# a version not installed: the error names it and the file it came
	# from (as pyenv's does); none set: it says where one is looked for
	printf 'python 3.9.0
' >"$WS/.tool-versions"
	PATH=$VM_ROOT/shims:$PATH wrun -- python3 c
	assert_rc 125 'a version not installed'
	assert_err_match "no version of python set for this workspace \\(python 3\\.9\\.0, from $WS/\\.tool-versions\\) is installed" \
		'the version and its file named'
	rm -f "$WS/.tool-versions" "$HOME/.tool-versions"
	PATH=$VM_ROOT/shims:$PATH wrun -- python3 d
	assert_rc 125 'no version set'
	assert_err_match 'no version of python is set for this workspace \(its variable, \.tool-versions' 'where one is looked for'
}

test_vmshim_rbenv() {
	have rbenv || skip "Debian's rbenv is not installed (scripts/deps)"
	export RBENV_ROOT=$HOME/.rbenv
	VM_ROOT=$RBENV_ROOT VM_CMD=ruby
	vm_version "$RBENV_ROOT/versions/3.1.2" 'rbenv 3.1.2'
	vm_version "$RBENV_ROOT/versions/3.2.0" 'rbenv 3.2.0'
	echo 'x' >"$RBENV_ROOT/secret.txt"
	rbenv rehash || fatal 'rbenv rehash failed'
	grep -q 'rbenv" exec' "$RBENV_ROOT/shims/ruby" || fatal "rbenv's shim is not what it was: $(excerpt "$(cat "$RBENV_ROOT/shims/ruby")")"
	echo 3.2.0 >"$WS/.ruby-version"
	PATH=$RBENV_ROOT/shims:$PATH wrun -- ruby x
	assert_rc 0 "ruby through Debian's rbenv shim"
	assert_out_line 'fixture rbenv 3.2.0 x' "the workspace's .ruby-version"
	assert_out_lacks 'LEAKED' "the rest of rbenv's root is not there"
}

# rbenv_kin_fixture MANAGER CMD: MANAGER's layout (goenv, nodenv: rbenv's
# kin) under the fake HOME: shims/CMD as its `rehash` writes it (the
# manager's path expanded, ROOT exported), a libexec/MANAGER that refuses to
# run, versions 1.0.0 and 2.0.0, the global version 1.0.0.
rbenv_kin_fixture() {
	local m=$1 up
	up=$(tr a-z A-Z <<<"$m")
	VM_ROOT=$HOME/.$m VM_CMD=$2
	mkdir -p "$VM_ROOT/shims" "$VM_ROOT/libexec"
	printf '#!/bin/sh\necho "%s itself ran" >&2\nexit 99\n' "$m" >"$VM_ROOT/libexec/$m"
	cat >"$VM_ROOT/shims/$2" <<EOF
#!/usr/bin/env bash
set -e
[ -n "\$${up}_DEBUG" ] && set -x

program="\${0##*/}"

export ${up}_ROOT="$VM_ROOT"
exec "$VM_ROOT/libexec/$m" exec "\$program" "\$@"
EOF
	chmod 0755 "$VM_ROOT/shims/$2" "$VM_ROOT/libexec/$m"
	vm_version "$VM_ROOT/versions/1.0.0" "$m 1.0.0"
	vm_version "$VM_ROOT/versions/2.0.0" "$m 2.0.0"
	echo 1.0.0 >"$VM_ROOT/version"
	echo 'not for the sandbox' >"$VM_ROOT/secret.txt"
}

test_vmshim_goenv_nodenv() {
	# goenv's go and nodenv's node (rbenv's kin, the same shim) run the
	# version the workspace's .go-version or .node-version names, the
	# global one without it, the variable first; nothing else of the root.
	local m cmd file
	for m in goenv nodenv; do
		[[ $m == goenv ]] && cmd=go file=.go-version || cmd=node file=.node-version
		rbenv_kin_fixture "$m" "$cmd"
		PATH=$VM_ROOT/shims:$PATH wrun -- "$cmd" one
		assert_rc 0 "$cmd through $m's shim"
		assert_out_line "fixture $m 1.0.0 one" "$m: the global version"
		assert_out_lacks 'LEAKED' "$m: the rest of its root is not there"
		[[ $ERR != *'itself ran'* ]] || fail "$m: the manager itself ran"
		echo 2.0.0 >"$WS/$file"
		PATH=$VM_ROOT/shims:$PATH wrun -- "$cmd" two
		assert_out_line "fixture $m 2.0.0 two" "$m: the workspace's $file"
		env "$(tr a-z A-Z <<<"$m")_VERSION=1.0.0" PATH="$VM_ROOT/shims:$PATH" \
			"$WARDEN" policy show -- "$cmd" >"$T_TMP/show" 2>&1
		matches -F "$m 1.0.0, from \$$(tr a-z A-Z <<<"$m")_VERSION" "$T_TMP/show" ||
			fail "$m: policy show does not say the variable's pick: $(excerpt "$(cat "$T_TMP/show")")"
		rm -f "$WS/$file"
	done
}

test_vmshim_mise() {
	agent_install mise mise mise
	local mise=$AGENT_BIN/mise
	export MISE_DATA_DIR=$HOME/.local/share/mise MISE_CONFIG_DIR=$HOME/.config/mise \
		MISE_CACHE_DIR=$T_TMP/mise-cache MISE_STATE_DIR=$T_TMP/mise-state
	VM_ROOT=$MISE_DATA_DIR
	vm_version "$MISE_DATA_DIR/installs/python/3.11.7" 'mise 3.11.7'
	vm_version "$MISE_DATA_DIR/installs/python/3.12.1" 'mise 3.12.1'
	echo 'x' >"$MISE_DATA_DIR/secret.txt"
	printf '[tools]\npython = "3.12"\n' >"$WS/mise.toml"
	(cd "$WS" && "$mise" trust -q "$WS/mise.toml" && "$mise" reshim) >"$T_TMP/mise.log" 2>&1 ||
		fatal "mise reshim: $(excerpt "$(cat "$T_TMP/mise.log")")"
	[[ -L $MISE_DATA_DIR/shims/python3 ]] || fatal "mise made no shim for python3: $(ls -la "$MISE_DATA_DIR/shims" 2>&1)"
	PATH=$MISE_DATA_DIR/shims:$PATH wrun -- python3 m
	assert_rc 0 "python3 through mise's shim"
	assert_out_line 'fixture mise 3.12.1 m' "the workspace's mise.toml (a prefix)"
	assert_out_lacks 'LEAKED' "the rest of mise's data is not there"
}

# venv_base DIR: a Python installation at DIR as uv installs one (a copy of
# the system's interpreter in DIR/bin, its standard library under DIR/lib),
# or skipped without one to copy.
venv_base() {
	local py stdlib
	py=$(readlink -f /usr/bin/python3) && [[ -x $py ]] || skip 'no /usr/bin/python3'
	stdlib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') || skip 'no stdlib'
	mkdir -p "$1/bin" "$1/lib"
	cp "$py" "$1/bin/${py##*/}" && ln -s "${py##*/}" "$1/bin/python3" || fatal 'copying python3'
	ln -s "$stdlib" "$1/lib/${stdlib##*/}"
}

# A virtual environment in the workspace made from an interpreter installed
# in the home (uv's, here; pyenv's and conda's are alike) runs inside, by
# its path and after `activate`, with no flags: the interpreter's install
# exposed read-only, not the rest of the home (uv's credentials beside
# it). One in a subdirectory and one of tox's are found too. A pyvenv.cfg
# (which the agent can write) whose `home` is no Python installation
# exposes nothing; one whose interpreter lies in a conda base directly in
# the home is said, with the profile line that would add it.
test_vmshim_venv_base_interpreter() {
	local uv=$HOME/.local/share/uv/python/cpython-3-linux-x86_64-gnu
	venv_base "$uv"
	mkdir -p "$HOME/.local/share/uv/credentials" "$HOME/notpython/bin" "$HOME/notpython/lib/python3.11"
	echo 'password = "UV-LEAKED"' >"$HOME/.local/share/uv/credentials/credentials.toml"
	printf '#!/bin/sh\necho fake\n' >"$HOME/notpython/bin/python3" && chmod 0755 "$HOME/notpython/bin/python3"
	echo 'NOT-PYTHON-LEAKED' >"$HOME/notpython/secret"
	"$uv/bin/python3" -m venv --without-pip .venv || fatal 'python3 -m venv'
	mkdir -p api .tox evil
	"$uv/bin/python3" -m venv --without-pip api/.venv || fatal 'python3 -m venv api/.venv'
	"$uv/bin/python3" -m venv --without-pip .tox/py3 || fatal 'python3 -m venv .tox/py3'
	mkdir -p evil/.venv && printf 'home = %s/notpython/bin\nversion = 3.11\n' "$HOME" >evil/.venv/pyvenv.cfg
	PATH=$(path_without_home_tools) wsh '.venv/bin/python -c "import sys; print(\"venv\", sys.prefix)"
		. .venv/bin/activate && python -c "import os; print(\"activated\", os.sep)"
		api/.venv/bin/python -c "print(\"api ok\")"; .tox/py3/bin/python -c "print(\"tox ok\")"
		cat '"'$HOME/.local/share/uv/credentials/credentials.toml' '$HOME/notpython/secret'"'; true'
	assert_rc 0
	assert_out_line "venv $WS/.venv" 'the environment by its path'
	assert_out_line 'activated /' 'python after activate'
	assert_out_line 'api ok' 'an environment in a subdirectory'
	assert_out_line 'tox ok' "a tox environment"
	assert_out_lacks UV-LEAKED "uv's credentials beside the interpreter"
	assert_out_lacks NOT-PYTHON-LEAKED 'a home that is no Python installation'
	PATH=$(path_without_home_tools) wardenc policy show -- true
	assert_out_has "\"path\": \"$uv\"" 'the interpreter install listed'
	assert_out_match 'install prefix of the virtual environment (\.venv|api/\.venv|\.tox/py3)"' 'and why'
	[[ $OUT != *notpython* ]] || fail "a home that is no Python installation exposed: $(excerpt "$OUT")"
	# a conda base directly in the home: not exposed, and said
	rm -rf .venv api .tox evil
	venv_base "$HOME/miniconda3"
	"$HOME/miniconda3/bin/python3" -m venv --without-pip .venv || fatal 'python3 -m venv (conda)'
	PATH=$(path_without_home_tools) wsh '.venv/bin/python -c "print(\"ran\")"'
	assert_out_lacks ran 'an environment of a base directly in the home'
	assert_err_match "the virtual environment \.venv runs $HOME/miniconda3/bin/python3[.0-9]*, which is not in the sandbox" 'said'
	assert_err_match "add \`read-only $HOME/miniconda3\` to a profile" 'with the line that would add it'
}

# rustup_fixture: rustup's layout under the fake HOME: ~/.cargo/bin/rustup
# (a stand-in that says so if it runs: warden never runs it) with cargo and
# rustc hard links to it, as rustup makes its proxies; toolchains stable,
# nightly and 1.75.0 (each one's cargo and rustc say which); settings.toml
# with the default toolchain and host; ~/.cargo/credentials.toml.
rustup_fixture() {
	local t c tc
	mkdir -p "$HOME/.cargo/bin"
	printf '#!/bin/sh\necho "rustup proxy ran: $0"\nexit 99\n' >"$HOME/.cargo/bin/rustup"
	chmod 0755 "$HOME/.cargo/bin/rustup"
	ln "$HOME/.cargo/bin/rustup" "$HOME/.cargo/bin/cargo" &&
		ln "$HOME/.cargo/bin/rustup" "$HOME/.cargo/bin/rustc" || fatal 'hard links'
	echo '[registry] token = "CARGO-LEAKED"' >"$HOME/.cargo/credentials.toml"
	for t in stable nightly 1.75.0; do
		tc=$HOME/.rustup/toolchains/$t-x86_64-unknown-linux-gnu
		mkdir -p "$tc/bin" "$tc/lib"
		for c in cargo rustc; do
			printf '#!/bin/sh\necho "%s %s $*"\n' "$c" "$t" >"$tc/bin/$c"
			chmod 0755 "$tc/bin/$c"
		done
	done
	printf '%s\n' 'default_host_triple = "x86_64-unknown-linux-gnu"' \
		'default_toolchain = "stable-x86_64-unknown-linux-gnu"' 'profile = "default"' \
		'version = "12"' '' '[overrides]' >"$HOME/.rustup/settings.toml"
	RUST_PATH=$HOME/.cargo/bin:$(path_without_home_tools)
}

# rustup's proxies (~/.cargo/bin/cargo) run the toolchain rustup would pick
# for the workspace, with no flags, as the command and by name inside: the
# default toolchain, a rust-toolchain.toml's channel, a legacy
# rust-toolchain file, a directory override (over the file beside it),
# $RUSTUP_TOOLCHAIN over all; only that toolchain's directory exposed, not
# ~/.cargo (its credentials) nor the proxy; one not installed refused,
# naming where the choice came from.
test_vmshim_rustup() {
	rustup_fixture
	PATH=$RUST_PATH wrun -- cargo build
	assert_rc 0
	assert_out_line 'cargo stable build' 'the default toolchain'
	printf '[toolchain]\nchannel = "nightly"\ncomponents = ["rustfmt"]\n' >rust-toolchain.toml
	PATH=$RUST_PATH wsh "cargo -V; rustc -V; cat '$HOME/.cargo/credentials.toml'; true"
	assert_out_line 'cargo nightly -V' "rust-toolchain.toml's channel, cargo by name"
	assert_out_line 'rustc nightly -V' 'rustc by name'
	assert_out_lacks CARGO-LEAKED "~/.cargo's credentials"
	assert_out_lacks 'rustup proxy ran' 'the proxy run'
	PATH=$RUST_PATH wardenc policy show -- cargo
	assert_out_has "\"path\": \"$HOME/.rustup/toolchains/nightly-x86_64-unknown-linux-gnu\"" 'the toolchain exposed'
	assert_out_has "rustup nightly-x86_64-unknown-linux-gnu, from $WS/rust-toolchain.toml" 'which and why'
	[[ $OUT != *"\"path\": \"$HOME/.cargo"* ]] || fail "~/.cargo exposed: $(excerpt "$OUT")"
	rm rust-toolchain.toml && echo 1.75.0 >rust-toolchain
	PATH=$RUST_PATH wrun -- cargo t
	assert_out_line 'cargo 1.75.0 t' 'a legacy rust-toolchain file'
	printf '"%s" = "nightly-x86_64-unknown-linux-gnu"\n' "$WS" >>"$HOME/.rustup/settings.toml"
	PATH=$RUST_PATH wrun -- cargo o
	assert_out_line 'cargo nightly o' 'a directory override over the file beside it'
	RUSTUP_TOOLCHAIN=stable PATH=$RUST_PATH wrun -- cargo e
	assert_out_line 'cargo stable e' '$RUSTUP_TOOLCHAIN over all'
	echo beta >rust-toolchain && sed -i '$d' "$HOME/.rustup/settings.toml"
	PATH=$RUST_PATH wrun -- cargo b
	assert_rc 125 'a toolchain not installed'
	assert_err_match "the toolchain it picks here \(beta, from $WS/rust-toolchain\) is not installed" 'says which and where from'
}

# sdkman's java: PATH reaches it through ~/.sdkman/candidates/java/current,
# a symlink to the version's directory. `java` by name inside (what
# Gradle's wrapper runs) finds that version, exposed read-only, its bin
# first on PATH; not the rest of ~/.sdkman.
test_vmshim_sdkman_java() {
	local c=$HOME/.sdkman/candidates/java
	mkdir -p "$c/17.0.2-tem/bin" "$c/17.0.2-tem/lib" "$HOME/.sdkman/etc"
	printf '#!/bin/sh\necho "java 17 $*"\n' >"$c/17.0.2-tem/bin/java"
	chmod 0755 "$c/17.0.2-tem/bin/java"
	ln -s 17.0.2-tem "$c/current"
	echo 'sdkman_secret=SDKMAN-LEAKED' >"$HOME/.sdkman/etc/config"
	PATH=$c/current/bin:$(path_without_home_tools) wsh "java -version; cat '$HOME/.sdkman/etc/config'; true"
	assert_rc 0
	assert_out_line 'java 17 -version' 'java by name inside'
	assert_out_lacks SDKMAN-LEAKED "the rest of ~/.sdkman"
}
