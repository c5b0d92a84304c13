# t_agents.sh - the client found on the host: fake clients installed under
# the fake HOME the three usual ways (npm prefix, native symlinked version
# directory, npm under an nvm-style node), run by name with PATH pointing at
# them; what warden exposes for them is listed, read-only, and no more of the
# home than that.
# shellcheck shell=bash

# A fake node: a shell script that runs the "JavaScript" file it is given
# with sh (the fake clients are shell scripts under a node shebang).
fake_node() { # DIR
	mkdir -p "$1"
	printf '#!/bin/sh\nscript=$1; shift\nexec /bin/sh "$script" "$@"\n' >"$1/node"
	chmod 0755 "$1/node"
}

# A fake client: a "cli.js" with a node shebang that prints where it runs
# from, tries to write next to itself, and lists the home directory.
fake_cli() { # FILE NAME
	mkdir -p "${1%/*}"
	cat >"$1" <<-EOS
	#!/usr/bin/env node
	echo "$2 runs: \$0"
	echo "node: \$(command -v node)"
	if echo x >"\${0%/*}/planted" 2>/dev/null; then echo WROTE; else echo "write refused"; fi
	ls "$HOME/.ssh" >/dev/null 2>&1 && echo SSH-VISIBLE
	cat "$HOME/.ssh/id_rsa" 2>/dev/null
	cat "\${0%/*}/../sibling/binary" 2>/dev/null
	exit 0
	EOS
	chmod 0755 "$1"
}

# An npm prefix in the home: PREFIX/bin/NAME -> ../lib/node_modules/PKG/cli.js,
# node itself from an nvm-style tree.
setup_npm_prefix() {
	local prefix=$HOME/.npm-global
	fake_node "$HOME/.nvm/versions/node/v20.0.0/bin"
	fake_cli "$prefix/lib/node_modules/@fake/client/cli.js" npmclient
	mkdir -p "$prefix/lib/node_modules/@fake/sibling" "$prefix/bin"
	echo native >"$prefix/lib/node_modules/@fake/sibling/binary"
	ln -s ../lib/node_modules/@fake/client/cli.js "$prefix/bin/npmclient"
	export PATH="$prefix/bin:$HOME/.nvm/versions/node/v20.0.0/bin:$PATH"
}

test_agents_npm_prefix() {
	setup_npm_prefix
	wrun -- npmclient arg
	assert_rc 0
	assert_out_has "npmclient runs: $HOME/.npm-global/lib/node_modules/@fake/client/cli.js" 'the client ran'
	assert_out_has "node: $HOME/.nvm/versions/node/v20.0.0/bin/node" 'node found on the PATH inside'
	assert_out_has 'write refused' 'the exposed tree is read-only'
	assert_out_lacks WROTE 'a write into the client tree'
	assert_out_lacks SSH-VISIBLE 'the rest of the home'
	assert_out_lacks "$BAIT" 'the ssh key'
	assert_host_absent "$HOME/.npm-global/lib/node_modules/@fake/client/planted"
	assert_out_line native 'a sibling package is readable (a native binary lives in one)'
	# the exposure list, in session.start
	wardenc log show --json
	local start
	start=$(grep '"event":"session.start"' <<<"${OUT// /}" | tail -n 1)
	grep -q "\"path\":\"$HOME/.npm-global/lib/node_modules\"" <<<"$start" ||
		fail "session.start lacks the node_modules exposure: $(excerpt "$start")"
	grep -q "\"path\":\"$HOME/.nvm/versions/node/v20.0.0\"" <<<"$start" ||
		fail "session.start lacks the interpreter's version directory: $(excerpt "$start")"
	# and by policy show, without running anything
	wardenc policy show -- npmclient
	assert_rc 0
	assert_out_has "$HOME/.npm-global/lib/node_modules" 'policy show lists the exposure'
	assert_out_has 'npm packages of npmclient' 'policy show says why'
}

# The native installer: ~/.local/bin/NAME -> ~/.local/share/NAME/versions/V.
test_agents_native() {
	local v=$HOME/.local/share/nclient/versions/1.2.3
	mkdir -p "$v" "$HOME/.local/bin" "$HOME/.local/share/nclient/versions/1.0.0"
	echo old >"$HOME/.local/share/nclient/versions/1.0.0/x"
	printf '#!/bin/sh\necho "nclient $*"\ntouch "${0%%/*}/planted" 2>/dev/null && echo WROTE\n'\
'cat %s/.local/share/nclient/versions/1.0.0/x 2>/dev/null || echo "old version hidden"\n' \
		"$HOME" >"$v/nclient"
	chmod 0755 "$v/nclient"
	ln -s ../share/nclient/versions/1.2.3/nclient "$HOME/.local/bin/nclient"
	export PATH="$HOME/.local/bin:$PATH"
	wrun -- nclient hello
	assert_rc 0
	assert_out_has 'nclient hello' 'the native client ran'
	assert_out_lacks WROTE 'a write into the version directory'
	assert_out_has 'old version hidden' 'only its version directory is exposed'
	wardenc policy show -- nclient
	assert_out_has "$v" 'the version directory is listed'
}

# A client whose install tree holds a credential store is refused.
test_agents_credential_store_refused() {
	local prefix=$HOME/apps/tools
	mkdir -p "$prefix/bin" "$prefix/.ssh"
	printf '#!/bin/sh\necho RAN\n' >"$prefix/bin/credclient"
	chmod 0755 "$prefix/bin/credclient"
	export PATH="$prefix/bin:$PATH"
	wrun -- credclient
	assert_rc 125
	assert_out_lacks RAN 'the client ran'
	assert_err_match 'refusing to expose .*credential store' 'the error names the store'
}

# A command on the system PATH exposes nothing; one found nowhere says so.
test_agents_system_and_missing() {
	PATH=$(path_without_home_tools) wardenc policy show -- sh
	assert_rc 0
	assert_out_match '"exposed": \[\]' 'nothing exposed for sh'
	wrun -- no-such-client-wardentest
	assert_rc 127
	assert_err_match 'no-such-client-wardentest was not found on the host.s PATH' \
		'the not-found message'
}

# A profile path that does not exist is a warning naming file and line; one
# that is a symlink is shown at its target too.
test_agents_profile_paths() {
	mkdir -p "$T_TMP/target"
	echo content >"$T_TMP/target/f"
	ln -s "$T_TMP/target" "$T_TMP/link"
	printf 'read-only %s/missing\nread-only %s/link\n' "$T_TMP" "$T_TMP" >"$T_TMP/p.profile"
	wrun --profile "$T_TMP/p.profile" -- cat "$T_TMP/target/f"
	assert_rc 0
	assert_out_eq content 'the symlink target is shown'
	assert_err_match "p.profile:1: $T_TMP/missing does not exist" 'the missing path warning'
}
