# t_browser.sh - headless browsers inside, with no flags: Debian's chromium
# (its launcher script, as a user types it) and Playwright (playwright-core
# from npm, in the workspace as a project has it, driving the system
# Chromium) render a page served inside the sandbox, run its JavaScript and
# write a screenshot to the workspace. Chromium's own sandbox is off inside
# (it wants user namespaces, which warden refuses: the refusal test is
# t_proc.sh's); warden's /etc/chromium.d/zz-warden says so to the launcher.
# Skipped without chromium (scripts/deps) or, for Playwright, without npm.
# shellcheck shell=bash

# browser_page: an index.html whose script rewrites the heading, and a
# command line that serves the workspace on a free loopback port inside
# (PAGE_SERVE, with PAGE_URL) before what follows it.
browser_page() {
	have chromium || skip "chromium is not installed (scripts/deps)"
	printf '<html><body><h1 id="t">static</h1><script>document.getElementById("t").textContent = "js ran " + (6 * 7);</script></body></html>\n' \
		>"$WS/index.html"
	local port=$((20000 + RANDOM % 20000))
	PAGE_URL=http://127.0.0.1:$port/index.html
	PAGE_SERVE="python3 -m http.server --bind 127.0.0.1 $port >/dev/null 2>&1 & sleep 1;"
}

png_ok() { [[ -s $1 && $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; }

test_browser_chromium_headless() {
	browser_page
	WARDEN_TIMEOUT=120 wsh "$PAGE_SERVE chromium --headless --dump-dom $PAGE_URL; chromium --headless --window-size=400,300 --screenshot=$WS/shot.png $PAGE_URL"
	assert_rc 0 'chromium --headless, no flags'
	assert_out_has '<h1 id="t">js ran 42</h1>' 'the page rendered and its JavaScript ran'
	png_ok "$WS/shot.png" || fail "no PNG screenshot in the workspace: $(ls -la "$WS" | head)"
	assert_err_match '^warden: refused during this session:|^$|.' 'stderr'
	grep -q 'No usable sandbox' <<<"$ERR" && fail "Chromium still wants its own sandbox: $(excerpt "$ERR")"
	grep -q 'chromium.d' <<<"$ERR" && fail "the launcher misses /etc/chromium.d: $(excerpt "$ERR")"
	return 0
}

test_browser_playwright() {
	browser_page
	agent_install playwright playwright-core Playwright
	mkdir -p "$WS/node_modules"
	cp -a "$HOME/.npm-global/lib/node_modules/playwright-core" "$WS/node_modules/" ||
		fatal 'could not copy playwright-core into the workspace'
	cat >"$WS/shot.js" <<EOF
const { chromium } = require('playwright-core');
(async () => {
	const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
	const page = await browser.newPage();
	await page.goto('$PAGE_URL');
	console.log('heading: ' + await page.textContent('#t'));
	await page.screenshot({ path: 'pw.png' });
	await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
EOF
	WARDEN_TIMEOUT=120 wsh "$PAGE_SERVE node shot.js"
	assert_rc 0 'Playwright driving the system Chromium'
	assert_out_line 'heading: js ran 42' 'the page rendered and its JavaScript ran'
	png_ok "$WS/pw.png" || fail "no PNG screenshot in the workspace"
}

# Chromium's background requests (network time, optimization hints) are
# switched off by warden's drop-in, and what is left of them, repeated at
# every start of an e2e loop, is not read as probing: no burst alert, no
# risk warning, whatever the number of starts.
test_browser_chromium_quiet() {
	browser_page
	WARDEN_TIMEOUT=180 wsh "$PAGE_SERVE for i in 1 2 3; do chromium --headless --dump-dom $PAGE_URL 2>/dev/null | grep -c 'js ran 42'; done; grep -c disable-background-networking /etc/chromium.d/zz-warden"
	assert_rc 0 'three starts of chromium'
	[[ $OUT == $'1\n1\n1\n1' ]] || fail "the page did not render three times, or no flags: $(excerpt "$OUT")"
	local log
	log=$(latest_log)
	grep -F '"event":"net"' "$log" | grep -F '"decision":"deny"' |
		grep -E '"host":"(clients2\.google\.com|optimizationguide-pa\.googleapis\.com)"' >/dev/null &&
		fail "Chromium's time or hints requests still made: $(excerpt "$(grep -F '"event":"net"' "$log" | cut -c80-220)")"
	grep -F '"event":"alert"' "$log" | grep -F '"rule":"burst.net-refusals"' >/dev/null &&
		fail "the browser's retries read as probing: $(excerpt "$(grep -F '"event":"alert"' "$log" | cut -c80-200)")"
	[[ $ERR != *'risk score'* ]] || fail "a risk warning: $(excerpt "$ERR")"
	return 0
}
