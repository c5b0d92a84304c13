# t_hints.sh - a container engine or a GPU tool run inside gets one line at
# the session's end saying what warden does not offer and what to do,
# rather than only the tool's own "cannot connect"; --quiet leaves it out.
# (The tools here are stand-ins by name: the hint reads the exec record.)
# shellcheck shell=bash

hint_tool() {
	mkdir -p "$WS/bin"
	printf '#!/bin/sh\necho "%s: cannot connect" >&2\nexit 1\n' "$1" >"$WS/bin/$1"
	chmod 0755 "$WS/bin/$1"
}

test_hint_container_engine() {
	hint_tool docker
	hint_tool podman
	wsh './bin/docker ps; ./bin/podman run x; ./bin/docker ps; true'
	assert_rc 0
	assert_err_match '^warden: docker ran inside: warden offers no container engine inside .*--publish PORT' 'the docker line'
	assert_err_match '^warden: podman ran inside: warden offers no container engine inside' 'the podman line'
	[[ $(grep -c 'docker ran inside' <<<"$ERR") == 1 ]] || fail "the docker line is not said once: $(excerpt "$ERR")"
	wsh './bin/docker ps; true' --quiet
	assert_out_lacks 'ran inside' 'stdout never has it'
	grep -q 'ran inside' <<<"$ERR" && fail "--quiet still says it: $(excerpt "$ERR")"
	wsh 'true'
	grep -q 'ran inside' <<<"$ERR" && fail "said when no such tool ran: $(excerpt "$ERR")"
	return 0
}

test_hint_gpu() {
	hint_tool nvidia-smi
	wsh './bin/nvidia-smi; true'
	assert_err_match '^warden: nvidia-smi ran inside: no GPU is inside the sandbox' 'the GPU line'
}
