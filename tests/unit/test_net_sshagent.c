/* test_net_sshagent.c - unit tests of the SSH agent protocol's messages
 * (src/net/sshagent.c): framing and its bounds, each request's parse
 * (malformed ones refused: short strings, bytes left over), the key
 * list parsed and written again with only the keys selected, the
 * fingerprint as ssh-keygen -l prints it, and where a signature goes (a
 * user authentication's user and service, an SSHSIG namespace). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/sshagent.h"
#include "check.h"

/* An ed25519 key: its public blob (base64, as in id_ed25519.pub) and the
 * fingerprint ssh-keygen -l prints for it. */
static const char KEY_B64[] = "AAAAC3NzaC1lZDI1NTE5AAAAIGhEMJ50wGoBfqPbrlHXwV496ReMcgOVi8kOJnynzmop";
static const char KEY_FP[] = "SHA256:9mU7jmL4O9fXKwsQqOdj9St9YTURx8//v9nVxD6TA70";

static size_t unb64(const char *in, uint8_t *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = 0;
	uint32_t v = 0;
	int bits = 0;
	for (; *in && *in != '='; in++) {
		v = v << 6 | (uint32_t)(strchr(a, *in) - a);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(v >> bits);
		}
	}
	return n;
}

/* A message under construction. */
struct msg {
	uint8_t b[4096];
	size_t n;
};

static void u8(struct msg *m, uint8_t v) { m->b[m->n++] = v; }
static void u32(struct msg *m, uint32_t v)
{
	for (int i = 3; i >= 0; i--)
		u8(m, (uint8_t)(v >> (8 * i)));
}
static void str(struct msg *m, const void *s, size_t len)
{
	u32(m, (uint32_t)len);
	memcpy(m->b + m->n, s, len);
	m->n += len;
}
static void cstr(struct msg *m, const char *s) { str(m, s, strlen(s)); }

static void test_frame(void)
{
	const uint8_t *msg;
	size_t len, used;
	static const uint8_t two[] = { 0, 0, 0, 1, 11, 0, 0, 0, 1, 11 };
	CHECK(sshagent_frame(two, 3, &msg, &len, &used) == 0);
	CHECK(sshagent_frame(two, 4, &msg, &len, &used) == 0);
	CHECK(sshagent_frame(two, sizeof two, &msg, &len, &used) == 1);
	CHECK(len == 1 && msg[0] == 11 && used == 5);
	static const uint8_t zero[] = { 0, 0, 0, 0 };
	CHECK(sshagent_frame(zero, 4, &msg, &len, &used) == -1);
	static const uint8_t huge[] = { 0, 4, 0, 1 }; /* 256 KiB + 1 */
	CHECK(sshagent_frame(huge, 4, &msg, &len, &used) == -1);
	static const uint8_t max[] = { 0, 4, 0, 0 };
	CHECK(sshagent_frame(max, 4, &msg, &len, &used) == 0);
}

static void test_fingerprint(void)
{
	uint8_t blob[128];
	size_t n = unb64(KEY_B64, blob);
	CHECK(n == 51);
	char fp[SSHAG_FP_MAX];
	sshagent_fingerprint(blob, n, fp);
	CHECK_STR(fp, KEY_FP);
}

static void test_requests(void)
{
	struct sshagent_req r;
	uint8_t blob[128];
	size_t bn = unb64(KEY_B64, blob);
	struct msg m = { .n = 0 };
	u8(&m, SSHAG_SIGN_REQUEST);
	str(&m, blob, bn);
	cstr(&m, "data");
	u32(&m, 2);
	CHECK(sshagent_parse_req(m.b, m.n, &r) == 0);
	CHECK(r.type == SSHAG_SIGN_REQUEST && r.keylen == bn && r.datalen == 4 && r.flags == 2);
	CHECK(memcmp(r.key, blob, bn) == 0 && memcmp(r.data, "data", 4) == 0);
	/* short, or a byte too many */
	CHECK(sshagent_parse_req(m.b, m.n - 1, &r) == -1);
	m.b[m.n] = 0;
	CHECK(sshagent_parse_req(m.b, m.n + 1, &r) == -1);
	/* a string longer than the message */
	struct msg bad = { .n = 0 };
	u8(&bad, SSHAG_SIGN_REQUEST);
	u32(&bad, 0xffffffffu);
	CHECK(sshagent_parse_req(bad.b, bad.n, &r) == -1);
	/* the list, and no more */
	static const uint8_t list[] = { SSHAG_REQUEST_IDENTITIES, 0 };
	CHECK(sshagent_parse_req(list, 1, &r) == 0 && r.type == SSHAG_REQUEST_IDENTITIES);
	CHECK(sshagent_parse_req(list, 2, &r) == -1);
	/* the others parse with their type only */
	static const uint8_t lock[] = { SSHAG_LOCK, 0, 0, 0, 2, 'p', 'w' };
	CHECK(sshagent_parse_req(lock, sizeof lock, &r) == 0 && r.type == SSHAG_LOCK);
	CHECK(sshagent_parse_req(lock, 0, &r) == -1);
	/* session-bind: the server's key */
	struct msg sb = { .n = 0 };
	u8(&sb, SSHAG_EXTENSION);
	cstr(&sb, "session-bind@openssh.com");
	str(&sb, blob, bn);
	cstr(&sb, "sessionid");
	cstr(&sb, "signature");
	u8(&sb, 1);
	CHECK(sshagent_parse_req(sb.b, sb.n, &r) == 0 && sshagent_is_session_bind(&r));
	CHECK(r.hostkeylen == bn && r.forwarding);
	CHECK(sshagent_parse_req(sb.b, sb.n - 1, &r) == -1);
	struct msg q = { .n = 0 };
	u8(&q, SSHAG_EXTENSION);
	cstr(&q, "query");
	CHECK(sshagent_parse_req(q.b, q.n, &r) == 0 && !sshagent_is_session_bind(&r));
	CHECK(r.extlen == 5 && memcmp(r.ext, "query", 5) == 0);
	char name[32];
	CHECK_STR(sshagent_req_name(SSHAG_REMOVE_ALL, name, sizeof name), "remove-all");
	CHECK_STR(sshagent_req_name(SSHAG_ADD_ID_CONSTRAINED, name, sizeof name), "add");
	CHECK_STR(sshagent_req_name(99, name, sizeof name), "type 99");
}

static void test_dest(void)
{
	struct sshagent_dest d;
	struct msg ua = { .n = 0 };
	cstr(&ua, "sessionid");
	u8(&ua, 50);
	cstr(&ua, "git");
	cstr(&ua, "ssh-connection");
	cstr(&ua, "publickey-hostbound-v00@openssh.com");
	u8(&ua, 1);
	cstr(&ua, "ssh-ed25519");
	sshagent_sign_dest(ua.b, ua.n, &d);
	CHECK(d.userauth && !d.sshsig);
	CHECK_STR(d.user, "git");
	CHECK_STR(d.service, "ssh-connection");
	struct msg sig = { .n = 0 };
	memcpy(sig.b, "SSHSIG", 6);
	sig.n = 6;
	cstr(&sig, "git");
	sshagent_sign_dest(sig.b, sig.n, &d);
	CHECK(d.sshsig && !d.userauth);
	CHECK_STR(d.sig_namespace, "git");
	sshagent_sign_dest((const uint8_t *)"junk", 4, &d);
	CHECK(!d.sshsig && !d.userauth);
	/* a user name longer than the copy: cut */
	struct msg lng = { .n = 0 };
	char user[600];
	memset(user, 'u', sizeof user);
	cstr(&lng, "s");
	u8(&lng, 50);
	str(&lng, user, sizeof user);
	cstr(&lng, "ssh-connection");
	cstr(&lng, "publickey");
	sshagent_sign_dest(lng.b, lng.n, &d);
	CHECK(d.userauth && strlen(d.user) == 255);
}

static void test_ids(void)
{
	uint8_t blob[128];
	size_t bn = unb64(KEY_B64, blob);
	struct msg m = { .n = 0 };
	u8(&m, SSHAG_IDENTITIES_ANSWER);
	u32(&m, 2);
	str(&m, blob, bn);
	cstr(&m, "me@laptop");
	cstr(&m, "other-blob");
	cstr(&m, "deploy");
	struct sshagent_key k[4];
	CHECK(sshagent_parse_ids(m.b, m.n, k, 4) == 2);
	CHECK_STR(k[0].fp, KEY_FP);
	CHECK(k[1].commentlen == 6 && memcmp(k[1].comment, "deploy", 6) == 0);
	CHECK(sshagent_parse_ids(m.b, m.n, k, 1) == -1);     /* more than max */
	CHECK(sshagent_parse_ids(m.b, m.n - 1, k, 4) == -1); /* short */
	CHECK(sshagent_parse_ids(m.b, m.n, k, 4) == 2);
	struct strv sel = { 0 };
	CHECK(sshagent_selected(&sel, &k[0]) && sshagent_selected(&sel, &k[1]));
	strv_push(&sel, "deploy");
	CHECK(!sshagent_selected(&sel, &k[0]) && sshagent_selected(&sel, &k[1]));
	strv_push(&sel, KEY_FP);
	CHECK(sshagent_selected(&sel, &k[0]));
	strv_free(&sel);
	/* written again: the same bytes, framed */
	struct bytebuf out = { 0 };
	sshagent_put_ids(&out, k, 2);
	const uint8_t *msg;
	size_t len, used;
	CHECK(sshagent_frame((const uint8_t *)out.p, out.len, &msg, &len, &used) == 1);
	CHECK(len == m.n && memcmp(msg, m.b, m.n) == 0 && used == out.len);
	bytebuf_free(&out);
	sshagent_put_ids(&out, k + 1, 1);
	CHECK(sshagent_frame((const uint8_t *)out.p, out.len, &msg, &len, &used) == 1);
	CHECK(sshagent_parse_ids(msg, len, k + 2, 2) == 1 && k[2].commentlen == 6);
	bytebuf_free(&out);
	sshagent_put_failure(&out);
	CHECK(out.len == 5 && out.p[4] == SSHAG_FAILURE);
	bytebuf_free(&out);
}

int main(void)
{
	test_frame();
	test_fingerprint();
	test_requests();
	test_dest();
	test_ids();
	return check_status();
}
