/* fuzz_sshagent.c - libFuzzer target for the SSH agent protocol's parsing
 * (src/net/sshagent.c), which the supervisor runs on what the sandbox
 * sends its agent socket and on what the host's agent answers. The input
 * is a stream of frames, each read as a request, as a key list and as a
 * signature's data. Invariants: a frame is within SSHAG_MSG_MAX and inside
 * the input; a request's parts lie inside its message; a session-bind has
 * its server key; a key list's keys lie inside it, each fingerprint
 * "SHA256:" and 43 characters, and written again (every key, or those a
 * selection takes) it parses back to the same keys; where a signature
 * goes is NUL-terminated within its buffers. Linked with replay.c it is
 * fuzz-sshagent-replay, which replays files and corpus directories without
 * clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/sshagent.h"
#include "replay.h"

static bool inside(const uint8_t *p, size_t n, const uint8_t *m, size_t len)
{
	return n == 0 || (p >= m && p + n <= m + len);
}

static void check_req(const uint8_t *m, size_t len)
{
	struct sshagent_req r;
	if (sshagent_parse_req(m, len, &r) < 0)
		return;
	if (r.type != m[0] || !inside(r.key, r.keylen, m, len) || !inside(r.data, r.datalen, m, len) ||
	    !inside(r.ext, r.extlen, m, len) || !inside(r.hostkey, r.hostkeylen, m, len))
		abort();
	if (sshagent_is_session_bind(&r) && !r.hostkey)
		abort();
	if (r.type == SSHAG_SIGN_REQUEST) {
		struct sshagent_dest d;
		sshagent_sign_dest(r.data, r.datalen, &d);
		if (strlen(d.user) > 255 || strlen(d.service) > 255 || strlen(d.sig_namespace) > 255)
			abort();
	}
	char name[32];
	const char *n = sshagent_req_name(r.type, name, sizeof name);
	if (!n || !fuzz_printable(n))
		abort();
}

static void check_ids(const uint8_t *m, size_t len)
{
	struct sshagent_key k[16], again[16];
	int n = sshagent_parse_ids(m, len, k, 16);
	if (n < 0)
		return;
	if (n > 16)
		abort();
	for (int i = 0; i < n; i++)
		if (!inside(k[i].blob, k[i].bloblen, m, len) ||
		    !inside(k[i].comment, k[i].commentlen, m, len) || strlen(k[i].fp) != 50 ||
		    strncmp(k[i].fp, "SHA256:", 7) != 0)
			abort();
	/* a selection by the first key's fingerprint takes it */
	struct strv sel = { 0 };
	if (n)
		strv_push(&sel, k[0].fp);
	struct sshagent_key kept[16];
	size_t nk = 0;
	for (int i = 0; i < n; i++)
		if (sshagent_selected(&sel, &k[i]))
			kept[nk++] = k[i];
	strv_free(&sel);
	if (n && nk == 0)
		abort();
	struct bytebuf out = { 0 };
	sshagent_put_ids(&out, kept, nk);
	const uint8_t *msg;
	size_t mlen, used;
	if (sshagent_frame((const uint8_t *)out.p, out.len, &msg, &mlen, &used) != 1 ||
	    used != out.len || sshagent_parse_ids(msg, mlen, again, 16) != (int)nk)
		abort();
	for (size_t i = 0; i < nk; i++)
		if (again[i].bloblen != kept[i].bloblen ||
		    memcmp(again[i].blob, kept[i].blob, kept[i].bloblen) != 0 ||
		    strcmp(again[i].fp, kept[i].fp) != 0)
			abort();
	bytebuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	while (off < size) {
		const uint8_t *m;
		size_t len, used;
		int r = sshagent_frame(data + off, size - off, &m, &len, &used);
		if (r <= 0)
			break;
		if (len == 0 || len > SSHAG_MSG_MAX || used != len + 4 || used > size - off ||
		    m != data + off + 4)
			abort();
		check_req(m, len);
		check_ids(m, len);
		struct sshagent_dest d;
		sshagent_sign_dest(m, len, &d);
		off += used;
	}
	return 0;
}
