/* fuzz_httpresp.c - libFuzzer target for the watcher of relayed responses
 * (src/net/http_resp.c). The first byte says which responses answer HEAD
 * requests (one bit each); the rest is the server's stream, fed whole and
 * again in chunks whose sizes come from the input: both must see the same
 * responses end at the same offsets with the same statuses, and the same
 * end. Invariants: never more taken than given; a response ends with a
 * final status (200-999) or switches with 101; after a switch or a loss
 * everything is taken and the same said again. Linked with replay.c it is
 * fuzz-httpresp-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/http_resp.h"
#include "replay.h"

#define MAX_EVENTS 256

struct trace {
	size_t at[MAX_EVENTS];
	int what[MAX_EVENTS], status[MAX_EVENTS];
	size_t n;
	int end;
};

static void run(const uint8_t *d, size_t size, unsigned heads, bool chunked, struct trace *t)
{
	struct http_resp r;
	http_resp_init(&r);
	unsigned k = 0;
	http_resp_next(&r, heads & 1);
	memset(t, 0, sizeof *t);
	size_t off = 0;
	bool over = false;
	while (off < size && !over && t->n < MAX_EVENTS) {
		size_t len = size - off;
		if (chunked && len > 1 + (size_t)(d[off] & 31))
			len = 1 + (d[off] & 31);
		size_t used = 0;
		enum http_resp_event ev = http_resp_feed(&r, d + off, len, &used);
		if (used > len || (ev == HTTP_RESP_MORE && used != len))
			abort();
		off += used;
		if (ev == HTTP_RESP_MORE)
			continue;
		t->at[t->n] = off;
		t->what[t->n] = ev;
		t->status[t->n] = r.status;
		t->n++;
		if (ev == HTTP_RESP_DONE) {
			if (r.status < 200 || r.status > 999 || !http_resp_idle(&r))
				abort();
			k++;
			http_resp_next(&r, (heads >> (k % 8)) & 1);
		} else {
			if (ev == HTTP_RESP_SWITCH && r.status != 101)
				abort();
			/* for good: everything taken, the same said */
			size_t u = 0;
			if (http_resp_feed(&r, "x", 1, &u) != ev || u != 1)
				abort();
			over = true;
		}
	}
	t->end = http_resp_eof(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	static struct trace a, b;
	run(data + 1, size - 1, data[0], false, &a);
	run(data + 1, size - 1, data[0], true, &b);
	if (a.n != b.n || a.end != b.end)
		abort();
	for (size_t i = 0; i < a.n; i++)
		if (a.at[i] != b.at[i] || a.what[i] != b.what[i] || a.status[i] != b.status[i])
			abort();
	return 0;
}
