# t_import.sh - `warden import claude|codex|srt` and `warden init`: settings
# files written as users write them (tests/integration/import/) against
# golden profiles byte for byte; each golden read by `warden policy show`;
# every denied domain of a source denied (or never allowed) by the policy;
# denied paths unreadable or read-only in a real session; hostile input
# refused with exit 2; files never written over without --force; init's
# profile for a project with several toolchains, protected from the agent.
# shellcheck shell=bash

IMPORT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/import

# imp_source NAME: the source a fixture is for, by its name.
imp_source() {
	case $1 in
	claude*) echo claude ;;
	codex*) echo codex ;;
	srt*) echo srt ;;
	esac
}

# imp_run NAME.EXT: `warden import` of a fixture copied into $T_TMP/imp,
# from there (relative paths are that directory's). Sets OUT, ERR, RC.
imp_run() {
	mkdir -p "$T_TMP/imp"
	cp "$IMPORT_DIR/$1" "$T_TMP/imp/$1"
	(cd "$T_TMP/imp" && "$WARDEN" import "$(imp_source "$1")" "$1") >"$T_TMP/.out" 2>"$T_TMP/.err"
	RC=$?
	OUT=$(<"$T_TMP/.out")
	ERR=$(<"$T_TMP/.err")
	printf '$ warden import %s %s\n-> rc=%s\n--- stderr\n%s\n' "$(imp_source "$1")" "$1" "$RC" "$ERR"
}

test_import_golden() {
	local f n count=0
	for f in "$IMPORT_DIR"/*.json "$IMPORT_DIR"/*.toml; do
		n=$(basename "$f")
		imp_run "$n"
		assert_rc 0 "import $n"
		if ! cmp -s "$T_TMP/.out" "${f%.*}.profile"; then
			fail "import $n: differs from ${n%.*}.profile: $(diff "${f%.*}.profile" "$T_TMP/.out" | head -n 8 | tr '\n' ' ')"
		fi
		# what is not mapped is said on stderr as in the profile, item by item
		local listed said
		listed=$(sed -n '/^# ---- not mapped$/,/^$/p' "${f%.*}.profile" | grep -c '^# - ')
		said=$(grep -cE '^warden: import: (LESS STRICT|not mapped): ' <<<"$ERR")
		[[ $listed == "$said" ]] || fail "import $n: $listed not mapped in the profile, $said on stderr"
		wardenc policy show --profile "${f%.*}.profile"
		assert_rc 0 "policy show --profile ${n%.*}.profile"
		count=$((count + 1))
	done
	((count >= 6)) || fail "only $count fixtures"
	# the fixtures hold what cannot be mapped, and a less strict item is said
	grep -q 'LESS STRICT' "$IMPORT_DIR/srt-full.profile" || fail 'srt-full: no LESS STRICT item'
	grep -q 'LESS STRICT' "$IMPORT_DIR/codex-readonly.profile" || fail 'codex-readonly: no LESS STRICT item'
}

# For each domain a source denies: no allow rule of the imported policy
# reaches it unless a deny rule refuses it (a wildcard is tried with a
# name under it).
test_import_strict_net() {
	have python3 || skip 'python3 not installed (the check reads the JSON with it)'
	local f n total=0
	for f in "$IMPORT_DIR"/srt-*.json "$IMPORT_DIR"/claude-*.json; do
		n=$(basename "$f")
		imp_run "$n"
		assert_rc 0 "import $n"
		printf '%s\n' "$OUT" >"$T_TMP/p.profile"
		wardenc policy show --profile "$T_TMP/p.profile"
		assert_rc 0 "policy show ($n)"
		printf '%s\n' "$OUT" >"$T_TMP/policy.json"
		python3 - "$f" "$T_TMP/policy.json" >"$T_TMP/strict.out" 2>&1 <<'EOF'
import json, re, sys
src = json.load(open(sys.argv[1]))
pol = json.load(open(sys.argv[2]))
denied = []
for obj in (src, src.get("sandbox", {})):
    denied += obj.get("network", {}).get("deniedDomains", [])
for r in src.get("permissions", {}).get("deny", []):
    m = re.fullmatch(r"WebFetch\(domain:(.*)\)", r)
    if m:
        denied.append(m.group(1))
def split(p):
    m = re.fullmatch(r"(.*?)(?::(\d+))?", p)
    return m.group(1).lower(), int(m.group(2) or 0)
def match(rule, host, port):
    h, p = split(rule)
    if p and port and p != port:
        return False
    if h.startswith("*."):
        return host.endswith(h[1:])
    return host == h
bad = 0
for d in denied:
    host, port = split(d)
    if host == "*":
        host = "anything.wardentest.example"
    host = host.replace("*", "wardentest")
    for port_try in ([port] if port else [443, 80, 22]):
        allows = [r["pattern"] for r in pol["net"] if r["action"] == "allow" and match(r["pattern"], host, port_try)]
        denies = [r["pattern"] for r in pol["net"] if r["action"] == "deny" and match(r["pattern"], host, port_try)]
        if allows and not denies:
            print(f"{d}: {host}:{port_try} allowed by {allows}")
            bad += 1
print(f"checked {len(denied)} denied domains")
sys.exit(1 if bad else 0)
EOF
		(($? == 0)) || fail "$n: a denied domain is reachable: $(excerpt "$(cat "$T_TMP/strict.out")")"
		total=$((total + $(sed -n 's/^checked \([0-9]*\) denied domains$/\1/p' "$T_TMP/strict.out")))
	done
	((total >= 5)) || fail "only $total denied domains checked"
}

# The paths srt-full.json denies, in a real session with its profile.
test_import_strict_files() {
	imp_run srt-full.json
	assert_rc 0 'import srt-full.json'
	printf '%s\n' "$OUT" >"$T_TMP/srt.profile"
	mkdir -p secrets pkg/build config src
	echo "$BAIT" >secrets/token
	echo "$BAIT" >pkg/build/out.txt
	echo prod >config/production.json
	echo lock >deps.lock
	echo fine >src/ok.txt
	mkdir -p "$HOME/.cache/pip"
	# profile paths are bound at the same path inside (the home inside is another)
	wsh 'cat src/ok.txt; echo edited >>src/ok.txt && echo src-written
	     echo cached >'"$HOME"'/.cache/pip/wardentest && echo pip-written
	     cat secrets/token && echo secrets-read
	     cat pkg/build/out.txt && echo build-read
	     cat ~/.ssh/id_rsa '"$HOME"'/.ssh/id_rsa && echo ssh-read
	     echo x >>config/production.json && echo prod-written
	     cat deps.lock && echo lock-read
	     echo x >>deps.lock && echo lock-written
	     true' --profile "$T_TMP/srt.profile"
	assert_rc 0 'session with the imported profile'
	assert_out_has fine 'the workspace stays readable (the check can fail)'
	assert_out_has src-written 'the workspace stays writable'
	assert_out_has pip-written 'an allowed path outside the workspace is writable'
	[[ -f $HOME/.cache/pip/wardentest ]] || fail 'the write to ~/.cache/pip did not reach the host'
	local what
	for what in secrets-read build-read ssh-read prod-written lock-read lock-written; do
		assert_out_lacks "$what" "denied by the source: $what"
	done
	assert_out_lacks "$BAIT" 'no denied content read'
	[[ $(<config/production.json) == prod ]] || fail 'config/production.json was changed'
	# the session is on the record with the imported profile
	wardenc log show --json --event session.start
	assert_rc 0 'log show'
	assert_out_has "srt.profile" 'session.start names the imported profile'
}

test_import_bad_input() {
	local d=$T_TMP/bad
	mkdir -p "$d"
	printf '{"network": {"allowedDomains": ["a.example"' >"$d/truncated.json"
	printf '{"network": {"allowedDomains": "a.example"}}' >"$d/type.json"
	printf '{"filesystem": {"denyRead": [1, 2]}}' >"$d/items.json"
	printf '["not", "an", "object"]' >"$d/array.json"
	printf '{"permissions": {"deny": "Bash"}}' >"$d/claude-type.json"
	printf '{"a": 1, "a": 2}' >"$d/dup.json"
	head -c 4096 /dev/urandom >"$d/random.json"
	printf '{"a": "\0"}' >"$d/nul.json"
	head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$d/huge.json"
	printf 'sandbox_mode = "workspace-write"\nsandbox_mode = "read-only"\n' >"$d/dup.toml"
	printf '[[profiles]]\nname = "x"\n' >"$d/aot.toml"
	printf 'when = 1979-05-27T07:32:00Z\n' >"$d/date.toml"
	printf 'sandbox_mode = true\n' >"$d/type.toml"
	printf 'a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n' >"$d/deep.toml"
	printf 'a = "\xff\xfe"\n' >"$d/utf8.toml"
	mkfifo "$d/fifo.json"
	local f src
	for f in truncated.json type.json items.json array.json claude-type.json dup.json random.json \
		nul.json huge.json dup.toml aot.toml date.toml type.toml deep.toml utf8.toml fifo.json; do
		case $f in
		*.toml) src=codex ;;
		claude*) src=claude ;;
		*) src=srt ;;
		esac
		wardenc import "$src" "$d/$f"
		assert_rc 2 "import $f"
		assert_err_match "$d/$f" "$f: the error names the file"
		[[ -z $OUT ]] || fail "$f: a profile was printed"
	done
	wardenc import bogus "$d/type.json"
	assert_rc 2 'unknown source'
	wardenc import srt "$d/missing.json"
	assert_rc 2 'missing file'
	wardenc import
	assert_rc 2 'no source'
}

test_import_output_file() {
	cp "$IMPORT_DIR/srt-full.json" "$T_TMP/s.json"
	wardenc import srt "$T_TMP/s.json" -o "$T_TMP/out.profile"
	assert_rc 0 'import -o'
	grep -q '^net deny malicious.com' "$T_TMP/out.profile" || fail 'the file holds no profile'
	echo mine >"$T_TMP/out.profile"
	wardenc import srt "$T_TMP/s.json" -o "$T_TMP/out.profile"
	assert_rc 2 'import -o over an existing file'
	assert_err_match 'exists.*--force' 'says --force'
	[[ $(<"$T_TMP/out.profile") == mine ]] || fail 'an existing file was written over'
	wardenc import srt "$T_TMP/s.json" -o "$T_TMP/out.profile" --force
	assert_rc 0 'import -o --force'
	grep -q '^net deny malicious.com' "$T_TMP/out.profile" || fail '--force did not write'
	echo target >"$T_TMP/target"
	ln -s "$T_TMP/target" "$T_TMP/link.profile"
	wardenc import srt "$T_TMP/s.json" -o "$T_TMP/link.profile" --force
	assert_rc_nonzero 'import -o onto a symlink'
	[[ $(<"$T_TMP/target") == target ]] || fail 'written through a symlink'
}

# Without FILE: the documented default places, layered for Claude Code.
test_import_defaults() {
	wardenc import srt
	assert_rc 2 'no ~/.srt-settings.json'
	assert_err_match 'srt-settings.json' 'says where it looked'
	printf '{"network": {"deniedDomains": ["home-denied.example"]}, "filesystem": {"allowWrite": ["."]}}\n' \
		>"$HOME/.srt-settings.json"
	wardenc import srt
	assert_rc 0 'import srt from ~/.srt-settings.json'
	assert_out_line '#   ~/.srt-settings.json' 'the header names the file'
	assert_out_match '^net deny home-denied\.example ' 'its deny'
	mkdir -p "$HOME/.claude" .claude
	printf '{"permissions": {"deny": ["Bash(user-denied:*)"]}}\n' >"$HOME/.claude/settings.json"
	printf '{"permissions": {"deny": ["Bash(project-denied:*)"]}}\n' >.claude/settings.json
	printf '{"permissions": {"deny": ["Read(./local-denied)"]}}\n' >.claude/settings.local.json
	wardenc import claude
	assert_rc 0 'import claude from the default places'
	assert_out_match '^tool deny Bash \*user-denied\* ' 'the user settings'
	assert_out_match '^tool deny Bash \*project-denied\* ' 'the project settings'
	assert_out_match '^mask local-denied ' 'the local settings'
	mkdir -p "$T_TMP/codexhome"
	printf 'sandbox_mode = "workspace-write"\n[sandbox_workspace_write]\nwritable_roots = ["/srv/wardentest-data"]\n' \
		>"$T_TMP/codexhome/config.toml"
	CODEX_HOME=$T_TMP/codexhome wardenc import codex
	assert_rc 0 'import codex from $CODEX_HOME'
	assert_out_match '^read-write /srv/wardentest-data ' 'its writable root'
}

# warden.profile against the golden, the home's path written as /HOME there.
init_golden_cmp() {
	[[ $(tail -c 1 warden.profile | od -An -c) == *'\n'* ]] || return 1
	local got want
	got=$(<warden.profile)
	want=$(<"$IMPORT_DIR/init-project.profile")
	[[ ${got//"=$HOME/"/=/HOME/} == "$want" ]]
}

test_init() {
	local proj=$T_TMP/myproject
	mkdir -p "$proj/.git"
	cp "$IMPORT_DIR/init-project/"* "$proj/"
	cp "$IMPORT_DIR/init-project/.git-config" "$proj/.git/config"
	cd "$proj" || fatal "cd $proj"
	wardenc init
	assert_rc 0 'init'
	assert_err_match 'Node.*Python.*Rust.*Go' 'says the toolchains found'
	# the golden has /HOME where the home's path is written out
	init_golden_cmp || fail "init: differs from init-project.profile: $(diff "$IMPORT_DIR/init-project.profile" <(sed "s#=$HOME/#=/HOME/#" warden.profile) | head -n 8 | tr '\n' ' ')"
	echo mine >>warden.profile
	wardenc init
	assert_rc 2 'init over an existing profile'
	assert_err_match 'exists.*--force' 'says --force'
	tail -n 1 warden.profile | grep -x mine >/dev/null || fail 'init wrote over an existing profile'
	wardenc init --force
	assert_rc 0 'init --force'
	init_golden_cmp || fail 'init --force did not write'
	wardenc policy show --profile warden.profile
	assert_rc 0 'policy show --profile warden.profile'
	assert_out_has '"pattern": "registry.npmjs.org"' 'the npm registry'
	assert_out_has '"pattern": "static.crates.io"' 'the crates.io downloads'
	assert_out_has '"pattern": "files.pythonhosted.org"' 'the Python packages'
	assert_out_has '"pattern": "sum.golang.org"' 'the Go checksum database'
	assert_out_lacks '"pattern": "github.com"' 'the git remote is left commented out'
	assert_out_has '"~/.cargo/registry"' "cargo's downloads kept for the workspace"
	# the agent cannot widen its own next session
	wsh 'echo "net allow evil.example" >>warden.profile && echo widened; echo done' --profile warden.profile
	assert_rc 0 'session with the init profile'
	assert_out_has done 'the session ran'
	assert_out_lacks widened 'warden.profile is read-only inside'
	grep -q evil.example warden.profile && fail 'the agent changed warden.profile'
	# a cache's two lines, uncommented, share it: the tool finds it inside
	mkdir -p "$HOME/.cache/pip"
	sed -e 's/^#read-write ~\/.cache\/pip$/read-write ~\/.cache\/pip/' \
		-e 's/^#env set PIP_CACHE_DIR=/env set PIP_CACHE_DIR=/' warden.profile >"$T_TMP/cache.profile"
	grep -q '^env set PIP_CACHE_DIR=' "$T_TMP/cache.profile" || fail 'no PIP_CACHE_DIR line to uncomment'
	wsh 'echo cached >"$PIP_CACHE_DIR/wardentest" && echo cache-written' --profile "$T_TMP/cache.profile"
	assert_rc 0 'session with the cache shared'
	assert_out_has cache-written 'the cache is writable through its variable'
	[[ -f $HOME/.cache/pip/wardentest ]] || fail 'the cache written inside is not the host one'
	# -o - prints it; an empty directory gets the skeleton
	mkdir -p "$T_TMP/empty" && cd "$T_TMP/empty" || fatal cd
	wardenc init -o -
	assert_rc 0 'init -o -'
	assert_out_has 'No toolchain found' 'the skeleton'
	[[ -e warden.profile ]] && fail 'init -o - wrote a file'
	# a symbolic link is never written through, --force or not, and said
	# as one (it said "exists; --force writes over it", then with --force
	# "not a regular file"); a missing directory names the path given
	ln -s "$T_TMP/nowhere" lnk.profile
	wardenc init -o lnk.profile
	assert_rc 125 'init over a symlink'
	assert_err_match 'lnk.profile is a symbolic link; not written over, --force or not' 'the link said'
	[[ ! -e $T_TMP/nowhere ]] || fail 'written through the link'
	wardenc init -o "$T_TMP/no/such/x.profile"
	assert_err_match "cannot create $T_TMP/no/such/x.profile" 'the path given named'
	true
}

# Settings that try to write lines of their own into the profile, or
# terminal escapes onto the user's terminal: kept inside comments, as '?'.
test_import_hostile_text() {
	printf '{"\\u001b]52;c;ZXZpbA==\\u0007x": 1,
	  "network": {"allowedDomains": ["ok.example\\nnet allow evil.example"]},
	  "filesystem": {"denyRead": ["secrets\\nread-write /home"], "allowWrite": ["~/.cache/x\\u007f"]}}\n' \
		>"$T_TMP/hostile.json"
	wardenc import srt "$T_TMP/hostile.json"
	assert_rc 0 'import of hostile text'
	printf '%s\n' "$OUT" >"$T_TMP/hostile.profile"
	grep -qE '^(net allow evil|read-write /home)' "$T_TMP/hostile.profile" &&
		fail 'a value from the settings became a line of the profile'
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T_TMP/hostile.profile" "$T_TMP/.err" &&
		fail 'control characters reached the profile or stderr'
	assert_err_match 'LESS STRICT: filesystem.denyRead "secrets\?read-write /home": control characters' \
		'the deny it cannot write is said'
	wardenc policy show --profile "$T_TMP/hostile.profile"
	assert_rc 0 'policy show of the hostile import'
	assert_out_lacks 'evil.example' 'no rule for the smuggled host'
}
