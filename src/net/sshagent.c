/* sshagent.c - the SSH agent protocol's messages (sshagent.h): framing,
 * the requests' and the key list's parsing with every length checked, the
 * fingerprints, and the answers warden writes itself. */
#include "sshagent.h"

#include <stdio.h>
#include <string.h>

#include "../common/hash.h"

/* A reader over bytes: each get fails once anything is short, and the
 * reader stays failed. */
struct rd {
	const uint8_t *p;
	size_t n;
	bool bad;
};

static uint32_t get_u32(struct rd *r)
{
	if (r->bad || r->n < 4) {
		r->bad = true;
		return 0;
	}
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 |
		     r->p[3];
	r->p += 4;
	r->n -= 4;
	return v;
}

static uint8_t get_u8(struct rd *r)
{
	if (r->bad || r->n < 1) {
		r->bad = true;
		return 0;
	}
	r->n--;
	return *r->p++;
}

static const uint8_t *get_str(struct rd *r, size_t *len)
{
	uint32_t l = get_u32(r);
	if (r->bad || l > r->n) {
		r->bad = true;
		*len = 0;
		return NULL;
	}
	const uint8_t *s = r->p;
	r->p += l;
	r->n -= l;
	*len = l;
	return s;
}

static bool str_is(const uint8_t *s, size_t len, const char *want)
{
	return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

int sshagent_frame(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msglen,
		   size_t *used)
{
	if (len < 4)
		return 0;
	struct rd r = { buf, len, false };
	uint32_t l = get_u32(&r);
	if (l == 0 || l > SSHAG_MSG_MAX)
		return -1;
	if (len - 4 < l)
		return 0;
	*msg = buf + 4;
	*msglen = l;
	*used = 4 + (size_t)l;
	return 1;
}

static int parse_ext(struct rd *r, struct sshagent_req *q)
{
	q->ext = get_str(r, &q->extlen);
	if (r->bad)
		return -1;
	if (!sshagent_is_session_bind(q))
		return 0; /* its contents are the extension's own: not read */
	size_t sidlen, siglen;
	q->hostkey = get_str(r, &q->hostkeylen);
	get_str(r, &sidlen);
	get_str(r, &siglen);
	q->forwarding = get_u8(r) != 0;
	return r->bad || r->n ? -1 : 0;
}

int sshagent_parse_req(const uint8_t *msg, size_t len, struct sshagent_req *q)
{
	memset(q, 0, sizeof *q);
	struct rd r = { msg, len, false };
	q->type = get_u8(&r);
	if (r.bad)
		return -1;
	switch (q->type) {
	case SSHAG_REQUEST_IDENTITIES:
		return r.n ? -1 : 0;
	case SSHAG_SIGN_REQUEST:
		q->key = get_str(&r, &q->keylen);
		q->data = get_str(&r, &q->datalen);
		q->flags = get_u32(&r);
		return r.bad || r.n ? -1 : 0;
	case SSHAG_EXTENSION:
		return parse_ext(&r, q);
	default:
		return 0;
	}
}

bool sshagent_is_session_bind(const struct sshagent_req *q)
{
	return q->type == SSHAG_EXTENSION && str_is(q->ext, q->extlen, "session-bind@openssh.com");
}

/* A string copied into out (size 256) with the NUL, cut where it must be. */
static void copy_str(char out[256], const uint8_t *s, size_t len)
{
	if (len > 255)
		len = 255;
	if (len)
		memcpy(out, s, len);
	out[len] = '\0';
}

/* RFC 4252 section 7: string session id, byte 50 (USERAUTH_REQUEST),
 * string user, string service, string "publickey" (OpenSSH's
 * "publickey-hostbound-v00@openssh.com" after a session-bind), bool TRUE,
 * string algorithm, string key blob (and the server's key). */
static bool parse_userauth(const uint8_t *data, size_t len, struct sshagent_dest *d)
{
	struct rd r = { data, len, false };
	size_t n, ulen, slen;
	get_str(&r, &n);
	if (get_u8(&r) != 50)
		return false;
	const uint8_t *user = get_str(&r, &ulen), *service = get_str(&r, &slen);
	const uint8_t *method = get_str(&r, &n);
	if (r.bad || !(str_is(method, n, "publickey") ||
		       str_is(method, n, "publickey-hostbound-v00@openssh.com")))
		return false;
	d->userauth = true;
	copy_str(d->user, user, ulen);
	copy_str(d->service, service, slen);
	return true;
}

/* PROTOCOL.sshsig: the six bytes "SSHSIG", string namespace, string
 * reserved, string hash algorithm, string H(message). */
static bool parse_sshsig(const uint8_t *data, size_t len, struct sshagent_dest *d)
{
	if (len < 6 || memcmp(data, "SSHSIG", 6) != 0)
		return false;
	struct rd r = { data + 6, len - 6, false };
	size_t nlen;
	const uint8_t *ns = get_str(&r, &nlen);
	if (r.bad)
		return false;
	d->sshsig = true;
	copy_str(d->sig_namespace, ns, nlen);
	return true;
}

void sshagent_sign_dest(const uint8_t *data, size_t len, struct sshagent_dest *d)
{
	memset(d, 0, sizeof *d);
	if (!parse_sshsig(data, len, d))
		parse_userauth(data, len, d);
}

int sshagent_parse_ids(const uint8_t *msg, size_t len, struct sshagent_key *keys, size_t max)
{
	struct rd r = { msg, len, false };
	if (get_u8(&r) != SSHAG_IDENTITIES_ANSWER)
		return -1;
	uint32_t n = get_u32(&r);
	if (r.bad || n > max)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct sshagent_key *k = &keys[i];
		k->blob = get_str(&r, &k->bloblen);
		k->comment = get_str(&r, &k->commentlen);
		if (r.bad)
			return -1;
		sshagent_fingerprint(k->blob, k->bloblen, k->fp);
	}
	return r.n ? -1 : (int)n;
}

static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

void sshagent_fingerprint(const uint8_t *blob, size_t len, char out[SSHAG_FP_MAX])
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char hex[SHA256_HEX_LEN];
	sha256_hex(blob, len, hex);
	uint8_t md[32];
	for (size_t i = 0; i < 32; i++)
		md[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	size_t o = (size_t)snprintf(out, SSHAG_FP_MAX, "SHA256:");
	for (size_t i = 0; i < 32; i += 3) {
		uint32_t v = (uint32_t)md[i] << 16;
		size_t have = 32 - i < 3 ? 32 - i : 3;
		if (have > 1)
			v |= (uint32_t)md[i + 1] << 8;
		if (have > 2)
			v |= md[i + 2];
		for (size_t k = 0; k < have + 1; k++)
			out[o++] = b64[(v >> (18 - 6 * k)) & 63];
	}
	out[o] = '\0';
}

bool sshagent_selected(const struct strv *sel, const struct sshagent_key *k)
{
	if (!sel || sel->n == 0)
		return true;
	for (size_t i = 0; i < sel->n; i++) {
		const char *s = sel->v[i];
		if (strcmp(s, k->fp) == 0 || str_is(k->comment, k->commentlen, s))
			return true;
	}
	return false;
}

static void put_u32(struct bytebuf *out, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	bytebuf_put(out, b, 4, 256);
}

static void put_str(struct bytebuf *out, const uint8_t *s, size_t len)
{
	put_u32(out, (uint32_t)len);
	if (len)
		bytebuf_put(out, s, len, 256);
}

void sshagent_put_failure(struct bytebuf *out)
{
	static const uint8_t fail[] = { 0, 0, 0, 1, SSHAG_FAILURE };
	bytebuf_put(out, fail, sizeof fail, 256);
}

void sshagent_put_ids(struct bytebuf *out, const struct sshagent_key *keys, size_t n)
{
	size_t len = 1 + 4;
	for (size_t i = 0; i < n; i++)
		len += 8 + keys[i].bloblen + keys[i].commentlen;
	put_u32(out, (uint32_t)len);
	uint8_t type = SSHAG_IDENTITIES_ANSWER;
	bytebuf_put(out, &type, 1, 256);
	put_u32(out, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_str(out, keys[i].blob, keys[i].bloblen);
		put_str(out, keys[i].comment, keys[i].commentlen);
	}
}

const char *sshagent_req_name(uint8_t type, char *buf, size_t len)
{
	switch (type) {
	case SSHAG_REQUEST_IDENTITIES: return "list";
	case SSHAG_SIGN_REQUEST: return "sign";
	case SSHAG_ADD_IDENTITY:
	case SSHAG_ADD_ID_CONSTRAINED:
	case SSHAG_ADD_SMARTCARD:
	case SSHAG_ADD_SMARTCARD_CONSTRAINED: return "add";
	case SSHAG_REMOVE_IDENTITY:
	case SSHAG_REMOVE_SMARTCARD: return "remove";
	case SSHAG_REMOVE_ALL: return "remove-all";
	case SSHAG1_REQUEST_IDENTITIES: return "list (protocol 1)";
	case SSHAG1_REMOVE_ALL: return "remove-all (protocol 1)";
	case SSHAG_LOCK: return "lock";
	case SSHAG_UNLOCK: return "unlock";
	case SSHAG_EXTENSION: return "extension";
	default:
		snprintf(buf, len, "type %u", type);
		return buf;
	}
}
