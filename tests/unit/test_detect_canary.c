/* test_detect_canary.c - unit tests of the decoys' generator
 * (src/detect/canary.c): each decoy's place, mode and shape (an AWS key id
 * AKIA + 16 upper-case alnum and a 40-character secret, a gho_ token of 36
 * alnum, a .env with an API-key-shaped token, an OpenSSH private key block
 * and its public key), the tokens found in the text they are from, two sets
 * different, the proxy's scanner holding every token bound to no host, and
 * canary_skip_covered turning off what a bind of the session covers; the
 * key pair a real one (its public key derived from its seed by libcrypto,
 * an implementation other than the generator's, and the same in the
 * public file, the private file's header and its private part); and
 * canary_seeds and seed_place writing them into a directory with their modes. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/detect/canary.h"
#include "check.h"

static bool all_of(const char *s, size_t n, const char *alpha)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(alpha, s[i]))
			return false;
	return true;
}

static const char UPALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static const struct canary *find(const struct canary_set *cs, const char *rel)
{
	for (size_t i = 0; i < cs->n; i++)
		if (strcmp(cs->v[i].rel, rel) == 0)
			return &cs->v[i];
	return NULL;
}


/* base64 text (newlines skipped) into out; its length, or -1 */
static int unb64(const char *text, size_t n, unsigned char *out, size_t cap)
{
	char flat[2048];
	size_t f = 0;
	for (size_t i = 0; i < n && f + 1 < sizeof flat; i++)
		if (text[i] != '\n')
			flat[f++] = text[i];
	flat[f] = '\0';
	if (f % 4 || f / 4 * 3 > cap)
		return -1;
	int len = EVP_DecodeBlock(out, (const unsigned char *)flat, (int)f);
	if (len < 0)
		return -1;
	while (f && flat[f - 1] == '=') /* DecodeBlock counts the padding as bytes */
		f--, len--;
	return len;
}

/* an OpenSSH string (u32 length, bytes) at *at in b */
static const unsigned char *sshstr(const unsigned char *b, size_t n, size_t *at, uint32_t *len)
{
	if (*at + 4 > n)
		return NULL;
	*len = (uint32_t)b[*at] << 24 | (uint32_t)b[*at + 1] << 16 | (uint32_t)b[*at + 2] << 8 | b[*at + 3];
	if (*len > n - *at - 4)
		return NULL;
	const unsigned char *s = b + *at + 4;
	*at += 4 + *len;
	return s;
}

/* The private file decoded as OpenSSH does: magic, no cipher, one key
 * whose public blob matches the private part; the check words equal; the
 * seed's public key (libcrypto's Ed25519) is the one in both places and in
 * the public file; padding 1, 2, 3, ... to a multiple of 8. */
static void key_pair_holds(const struct canary *priv, const struct canary *pub)
{
	static const char begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
	const char *end = strstr(priv->text, "-----END OPENSSH PRIVATE KEY-----");
	unsigned char b[1024];
	int n = end ? unb64(priv->text + strlen(begin), (size_t)(end - priv->text) - strlen(begin), b,
			    sizeof b) : -1;
	CHECK(n > 15 && memcmp(b, "openssh-key-v1", 15) == 0);
	if (n <= 15)
		return;
	size_t at = 15, m = (size_t)n;
	uint32_t l, pl, bl;
	const unsigned char *cipher = sshstr(b, m, &at, &l);
	CHECK(cipher && l == 4 && memcmp(cipher, "none", 4) == 0);
	CHECK(sshstr(b, m, &at, &l) && l == 4); /* kdf "none" */
	CHECK(sshstr(b, m, &at, &l) && l == 0); /* its options */
	CHECK(at + 4 <= m && b[at + 3] == 1);   /* one key */
	at += 4;
	const unsigned char *blob = sshstr(b, m, &at, &bl);
	const unsigned char *p = sshstr(b, m, &at, &pl);
	CHECK(blob && p && at == m && pl % 8 == 0);
	if (!blob || !p || pl < 8)
		return;
	CHECK(memcmp(p, p + 4, 4) == 0); /* the two check words */
	size_t q = 8;
	uint32_t tl, kl, sl, cl;
	const unsigned char *type = sshstr(p, pl, &q, &tl);
	const unsigned char *pk = sshstr(p, pl, &q, &kl);
	const unsigned char *sk = sshstr(p, pl, &q, &sl);
	const unsigned char *comment = sshstr(p, pl, &q, &cl);
	CHECK(type && tl == 11 && memcmp(type, "ssh-ed25519", 11) == 0);
	CHECK(pk && kl == 32 && sk && sl == 64 && comment && cl == 12);
	if (!pk || kl != 32 || !sk || sl != 64)
		return;
	for (size_t i = q, k = 1; i < pl; i++, k++)
		CHECK(p[i] == k);
	/* the seed's public key, by libcrypto */
	unsigned char derived[32];
	size_t dl = sizeof derived;
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, sk, 32);
	CHECK(k && EVP_PKEY_get_raw_public_key(k, derived, &dl) == 1 && dl == 32);
	EVP_PKEY_free(k);
	CHECK(memcmp(derived, pk, 32) == 0 && memcmp(sk + 32, pk, 32) == 0);
	/* the header's public blob: type and the same key */
	CHECK(bl == 4 + 11 + 4 + 32 && memcmp(blob + 4, "ssh-ed25519", 11) == 0 &&
	      memcmp(blob + 19, pk, 32) == 0);
	/* the public file: "ssh-ed25519 BLOB agent@warden" */
	const char *sp = strchr(pub->text, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
	unsigned char pb[128];
	int pbl = sp2 ? unb64(sp + 1, (size_t)(sp2 - sp - 1), pb, sizeof pb) : -1;
	CHECK(pbl == (int)bl && memcmp(pb, blob, bl) == 0);
	CHECK(sp2 && strcmp(sp2, " agent@warden\n") == 0);
}

static void shapes(const struct canary_set *cs)
{
	const struct canary *c = find(cs, ".aws/credentials");
	CHECK(c && c->mode == 0600 && c->ntokens == 2);
	if (c && c->ntokens == 2) {
		CHECK(strncmp(c->tokens[0], "AKIA", 4) == 0 && all_of(c->tokens[0] + 4, 16, UPALNUM));
		CHECK(all_of(c->tokens[1], 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"));
		CHECK(strncmp(c->text, "[default]\n", 10) == 0);
		CHECK(strstr(c->text, "aws_access_key_id = AKIA"));
		CHECK(strstr(c->text, "aws_secret_access_key = "));
		CHECK_STR(c->inside, "/home/agent/.aws/credentials");
	}
	c = find(cs, ".config/gh/hosts.yml");
	CHECK(c && c->ntokens == 1);
	if (c && c->ntokens == 1) {
		CHECK(strncmp(c->tokens[0], "gho_", 4) == 0 && all_of(c->tokens[0] + 4, 36, ALNUM));
		CHECK(strncmp(c->text, "github.com:\n", 12) == 0);
		CHECK(strstr(c->text, "oauth_token: gho_") && strstr(c->text, "user: ") &&
		      strstr(c->text, "git_protocol: "));
	}
	c = find(cs, ".env");
	CHECK(c && c->ntokens >= 1 && strstr(c->text, "API_KEY=sk-"));
	c = find(cs, ".ssh/id_ed25519");
	CHECK(c && c->mode == 0600 && c->ntokens >= 1);
	if (c) {
		CHECK(strncmp(c->text, "-----BEGIN OPENSSH PRIVATE KEY-----\n", 36) == 0);
		CHECK(strstr(c->text, "\n-----END OPENSSH PRIVATE KEY-----\n"));
		/* "openssh-key-v1\0" + "none" + "none": the body every such key begins with */
		CHECK(strstr(c->text, "\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"));
		for (size_t j = 0; j < c->ntokens; j++)
			CHECK(strlen(c->tokens[j]) == 70);
	}
	c = find(cs, ".ssh/id_ed25519.pub");
	CHECK(c && c->mode == 0644 && strncmp(c->text, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 37) == 0);
	if (c && find(cs, ".ssh/id_ed25519"))
		key_pair_holds(find(cs, ".ssh/id_ed25519"), c);
	/* every token is in its decoy's text, and in the scanner, bound nowhere */
	size_t nt = 0;
	for (size_t i = 0; i < cs->n; i++)
		for (size_t j = 0; j < cs->v[i].ntokens; j++) {
			nt++;
			CHECK(strstr(cs->v[i].text, cs->v[i].tokens[j]));
			const struct secret *s = secrets_find_phantom(&cs->scan, cs->v[i].tokens[j],
								      strlen(cs->v[i].tokens[j]));
			CHECK(s && s->spec->nhosts == 0 && !s->value &&
			      strcmp(s->spec->name, cs->v[i].inside) == 0);
		}
	CHECK(cs->scan.n == nt && nt >= 7);
}

int main(void)
{
	struct canary_set a, b;
	struct werr e = { 0 };
	CHECK(canary_generate(&a, "/home/agent", &e) == 0);
	CHECK(canary_generate(&b, "/home/agent", &e) == 0);
	shapes(&a);
	shapes(&b);
	CHECK(a.n == b.n);
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		CHECK(strcmp(a.v[i].text, b.v[i].text) != 0);
		for (size_t j = 0; j < a.v[i].ntokens; j++)
			CHECK(!secrets_find_phantom(&b.scan, a.v[i].tokens[j], strlen(a.v[i].tokens[j])));
	}

	/* what a bind in the home would leave out, each decoy generated among
	 * them */
	for (size_t i = 0; i < a.n; i++)
		CHECK(canary_decoy_at(a.v[i].rel) && strcmp(canary_decoy_at(a.v[i].rel), a.v[i].rel) == 0);
	CHECK(strcmp(canary_decoy_at(".ssh"), ".ssh/id_ed25519") == 0);
	CHECK(strcmp(canary_decoy_at(".aws/credentials/x"), ".aws/credentials") == 0);
	CHECK(!canary_decoy_at(".cargo/registry") && !canary_decoy_at(".ssh/keys") &&
	      !canary_decoy_at(".envs"));

	/* a bind of the session at .ssh, or above the home, turns decoys off */
	canary_skip_covered(&a, "/home/agent/.ssh");
	canary_skip_covered(&a, "/home/agent/.aws/credentials/x");
	CHECK(find(&a, ".ssh/id_ed25519")->off && find(&a, ".ssh/id_ed25519.pub")->off);
	CHECK(find(&a, ".aws/credentials")->off);
	CHECK(!find(&a, ".env")->off && !find(&a, ".config/gh/hosts.yml")->off);
	canary_skip_covered(&b, "/home");
	for (size_t i = 0; i < b.n; i++)
		CHECK(b.v[i].off);

	/* placed: what is not off, with its mode, its directories made */
	char dir[] = "/tmp/test-canary-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int err = -1;
	struct seed_file seeds[SEED_MAX];
	size_t nseeds = canary_seeds(&a, seeds, SEED_MAX);
	CHECK(nseeds == a.n);
	unsigned placed = seed_place(seeds, nseeds, fd, &err);
	CHECK(err == 0);
	for (size_t i = 0; i < a.n; i++) {
		struct stat st;
		bool there = fstatat(fd, a.v[i].rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
		CHECK(there == !a.v[i].off && !!(placed & (1u << i)) == !a.v[i].off);
		if (there)
			CHECK((st.st_mode & 07777) == a.v[i].mode && (size_t)st.st_size == strlen(a.v[i].text));
	}
	/* placing again fails (O_EXCL): nothing written over */
	CHECK(seed_place(seeds, nseeds, fd, &err) == 0 && err == EEXIST);
	close(fd);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	canary_free(&a);
	canary_free(&b);
	return check_status();
}
