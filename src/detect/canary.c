/* canary.c - canary credentials (canary.h): the decoys made for one
 * session, written into the sandbox's home by init, and watched from the
 * supervisor with inotify (an open of one is a critical alert). */
#include "canary.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h> /* EVP_EncodeBlock alone: base64, no provider */
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/events.h"
#include "../common/notifylimit.h"

/* the comment of the key pair: the identity the sandbox shows (user agent,
 * host warden), as ssh-keygen would write it there */
#define AGENT_COMMENT "agent@warden"

static const char UPPER_B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char AWS_SECRET[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+";

/* n random characters of alpha into out (NUL-terminated), unbiased
 * (bytes past the last whole multiple of the alphabet's size are drawn
 * again). */
static int rand_chars(char *out, size_t n, const char *alpha)
{
	size_t k = strlen(alpha), lim = 256 - 256 % k;
	unsigned char buf[64];
	size_t have = 0, used = 0;
	for (size_t i = 0; i < n;) {
		if (used == have) {
			ssize_t r = getrandom(buf, sizeof buf, 0);
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				return -1;
			}
			have = (size_t)r;
			used = 0;
		}
		unsigned char b = buf[used++];
		if (b < lim)
			out[i++] = alpha[b % k];
	}
	out[n] = '\0';
	explicit_bzero(buf, sizeof buf);
	return 0;
}

static char *rand_str(size_t n, const char *alpha)
{
	char *s = xmalloc(n + 1);
	if (rand_chars(s, n, alpha) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* ---- the SSH key: OpenSSH's own format (openssh-key-v1, unencrypted),
 * a real Ed25519 key made from a random seed ---- */

struct buf {
	unsigned char b[512];
	size_t n;
};

static void put_u32(struct buf *b, uint32_t v)
{
	b->b[b->n++] = (unsigned char)(v >> 24);
	b->b[b->n++] = (unsigned char)(v >> 16);
	b->b[b->n++] = (unsigned char)(v >> 8);
	b->b[b->n++] = (unsigned char)v;
}

static void put_str(struct buf *b, const void *s, size_t n)
{
	put_u32(b, (uint32_t)n);
	memcpy(b->b + b->n, s, n);
	b->n += n;
}

static char *b64(const unsigned char *in, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	return out;
}

/* The private key file and the public one, and as tokens the lines of the
 * private file's body that hold the public key and the seed (the first
 * line is the same in every such file). */
static int ssh_key(struct canary *priv, struct canary *pub)
{
	unsigned char seed[32], pk[crypto_sign_ed25519_PUBLICKEYBYTES],
		sk[crypto_sign_ed25519_SECRETKEYBYTES];
	uint32_t check;
	if (getrandom(seed, sizeof seed, 0) != sizeof seed ||
	    getrandom(&check, sizeof check, 0) != sizeof check)
		return -1;
	/* libsodium: the public key of the seed in tens of microseconds;
	 * libcrypto's EVP would first set up its configuration, names and
	 * providers, about a millisecond of every session's start */
	int ok = sodium_init() >= 0 && crypto_sign_ed25519_seed_keypair(pk, sk, seed) == 0;
	explicit_bzero(sk, sizeof sk);
	if (!ok) {
		explicit_bzero(seed, sizeof seed);
		return -1;
	}
	static const char type[] = "ssh-ed25519", comment[] = AGENT_COMMENT;
	struct buf blob = { .n = 0 }, f = { .n = 0 };
	put_str(&blob, type, strlen(type));
	put_str(&blob, pk, sizeof pk);

	memcpy(f.b, "openssh-key-v1", 15); /* its NUL too */
	f.n = 15;
	put_str(&f, "none", 4); /* cipher */
	put_str(&f, "none", 4); /* kdf */
	put_str(&f, "", 0);     /* kdf options */
	put_u32(&f, 1);         /* keys */
	put_str(&f, blob.b, blob.n);
	size_t pk_at = f.n - sizeof pk;
	struct buf p = { .n = 0 };
	put_u32(&p, check);
	put_u32(&p, check);
	put_str(&p, type, strlen(type));
	put_str(&p, pk, sizeof pk);
	put_u32(&p, 64);
	size_t seed_at = f.n + 4 + p.n; /* in f, once p follows its length */
	memcpy(p.b + p.n, seed, sizeof seed);
	memcpy(p.b + p.n + sizeof seed, pk, sizeof pk);
	p.n += 64;
	put_str(&p, comment, strlen(comment));
	for (unsigned char pad = 1; p.n % 8; pad++)
		p.b[p.n++] = pad;
	put_str(&f, p.b, p.n);
	explicit_bzero(seed, sizeof seed);
	explicit_bzero(&p, sizeof p);

	_cleanup_free_ char *body = b64(f.b, f.n);
	explicit_bzero(&f, sizeof f);
	size_t blen = strlen(body), lines = (blen + 69) / 70;
	char *text = xmalloc(blen + lines + 80);
	size_t t = (size_t)sprintf(text, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	for (size_t i = 0; i < blen; i += 70) {
		size_t n = blen - i < 70 ? blen - i : 70;
		memcpy(text + t, body + i, n);
		t += n;
		text[t++] = '\n';
	}
	sprintf(text + t, "-----END OPENSSH PRIVATE KEY-----\n");
	priv->text = text;
	/* a byte at b is in the base64 characters from b / 3 * 4 */
	const size_t at[] = { pk_at + 16, seed_at + 16 };
	for (size_t i = 0; i < ARRAY_LEN(at); i++) {
		size_t line = at[i] / 3 * 4 / 70;
		if (line * 70 + 70 > blen)
			continue;
		if (priv->ntokens && strncmp(priv->tokens[0], body + line * 70, 70) == 0)
			continue;
		priv->tokens[priv->ntokens++] = xasprintf("%.70s", body + line * 70);
	}
	_cleanup_free_ char *pub64 = b64(blob.b, blob.n);
	pub->text = xasprintf("%s %s %s\n", type, pub64, comment);
	return 0;
}

/* ---- the set ---- */

static struct canary *add(struct canary_set *cs, const char *home, const char *rel, mode_t mode)
{
	struct canary *c = &cs->v[cs->n++];
	*c = (struct canary){ .rel = rel, .inside = xasprintf("%s/%s", home, rel), .mode = mode };
	return c;
}

static char *tok(struct canary *c, size_t n, const char *alpha, const char *prefix)
{
	_cleanup_free_ char *r = rand_str(n, alpha);
	if (!r)
		return NULL;
	char *t = xasprintf("%s%s", prefix, r);
	explicit_bzero(r, n);
	c->tokens[c->ntokens++] = t;
	return t;
}

/* Every decoy's path in the home, in the order canary_generate makes them
 * (it takes them from here). */
static const char *const decoy_rel[] = { ".aws/credentials", ".config/gh/hosts.yml", ".env",
					 ".ssh/id_ed25519", ".ssh/id_ed25519.pub" };
_Static_assert(ARRAY_LEN(decoy_rel) <= CANARY_MAX, "room for every decoy");

const char *canary_decoy_at(const char *rel)
{
	for (size_t i = 0; i < ARRAY_LEN(decoy_rel); i++)
		if (path_overlaps(rel, decoy_rel[i]))
			return decoy_rel[i];
	return NULL;
}

int canary_generate(struct canary_set *cs, const char *home, struct werr *e)
{
	*cs = (struct canary_set){ 0 };
	struct canary *c = add(cs, home, decoy_rel[0], 0600);
	const char *id = tok(c, 16, UPPER_B32, "AKIA");
	const char *secret = tok(c, 40, AWS_SECRET, "");
	if (!id || !secret)
		goto fail;
	c->text = xasprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", id,
			    secret);

	c = add(cs, home, decoy_rel[1], 0600);
	const char *gho = tok(c, 36, ALNUM, "gho_");
	if (!gho)
		goto fail;
	c->text = xasprintf("github.com:\n    oauth_token: %s\n    user: agent\n"
			    "    git_protocol: https\n", gho);

	c = add(cs, home, decoy_rel[2], 0600);
	const char *pw = tok(c, 24, ALNUM, "");
	const char *sk = tok(c, 48, ALNUM, "sk-proj-");
	const char *stripe = tok(c, 24, ALNUM, "sk_live_");
	if (!pw || !sk || !stripe)
		goto fail;
	c->text = xasprintf("# production\nDATABASE_URL=postgres://app:%s@db.internal:5432/app\n"
			    "OPENAI_API_KEY=%s\nSTRIPE_SECRET_KEY=%s\n", pw, sk, stripe);

	struct canary *priv = add(cs, home, decoy_rel[3], 0600);
	struct canary *pub = add(cs, home, decoy_rel[4], 0644);
	if (ssh_key(priv, pub) < 0)
		goto fail;

	/* the tokens as phantoms bound to no host, for the proxy's scanner */
	size_t nt = 0;
	for (size_t i = 0; i < cs->n; i++)
		nt += cs->v[i].ntokens;
	cs->specs = xcalloc(nt ? nt : 1, sizeof *cs->specs);
	cs->scan.v = xcalloc(nt ? nt : 1, sizeof *cs->scan.v);
	for (size_t i = 0; i < cs->n; i++)
		for (size_t j = 0; j < cs->v[i].ntokens; j++) {
			struct policy_secret *sp = &cs->specs[cs->scan.n];
			sp->name = cs->v[i].inside; /* borrowed: canary_free frees it once */
			cs->scan.v[cs->scan.n++] = (struct secret){ .spec = sp,
								    .phantom = cs->v[i].tokens[j] };
			size_t l = strlen(cs->v[i].tokens[j]);
			if (l > cs->scan.maxlen)
				cs->scan.maxlen = l;
		}
	return 0;
fail:
	canary_free(cs);
	return werr_set(e, errno, "canary credentials: random tokens (getrandom, libsodium)");
}

void canary_free(struct canary_set *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct canary *c = &cs->v[i];
		free(c->inside);
		if (c->text)
			explicit_bzero(c->text, strlen(c->text));
		free(c->text);
		for (size_t j = 0; j < c->ntokens; j++)
			free(c->tokens[j]);
	}
	free(cs->scan.v); /* the phantoms are the tokens, freed above */
	free(cs->specs);
	*cs = (struct canary_set){ 0 };
}

void canary_skip_covered(struct canary_set *cs, const char *path)
{
	for (size_t i = 0; i < cs->n; i++)
		if (path_overlaps(cs->v[i].inside, path))
			cs->v[i].off = true;
}

/* ---- for init: the seed files ---- */

_Static_assert(CANARY_MAX <= SEED_MAX, "every decoy has its seed file");

size_t canary_seeds(const struct canary_set *cs, struct seed_file *out, size_t max)
{
	size_t n = 0;
	for (; cs && n < cs->n && n < max; n++) {
		const struct canary *c = &cs->v[n];
		out[n] = c->off ? (struct seed_file){ 0 }
				: (struct seed_file){ .path = c->rel, .mode = c->mode, .bytes = c->text };
	}
	return n;
}

/* ---- supervisor: the watch ---- */

struct canary_watch {
	int fd;
	int wd[CANARY_MAX];           /* -1: not watched */
	const struct canary_set *cs;  /* borrowed */
	struct audit *log;
};

/* Decoys not watched: said on stderr and in the log (an alert, rated low:
 * the host's limits, not the agent's doing), whose reader would otherwise
 * take no canary.opened for no decoy opened. */
static void say_unwatched(struct audit *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say_unwatched(struct audit *log, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	wnote("canary credentials: %s", text);
	if (log)
		audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = "canary.unwatched",
			.action = text }), NULL);
	free(text);
}

/* "; " and the kernel's limit err reached, said with its sysctl
 * (notifylimit.h), written to buf; "" when err is no such limit. */
static const char *limit_hint(enum notify_limit kind, int err, char *buf, size_t len)
{
	if (len < 3 || !notify_limit_said(kind, err, buf + 2, len - 2))
		return "";
	memcpy(buf, "; ", 2);
	return buf;
}

struct canary_watch *canary_watch_new(const struct canary_set *cs, unsigned placed, int homefd,
				      struct audit *log)
{
	if (!cs || !placed)
		return NULL;
	if (homefd < 0) {
		say_unwatched(log, "the sandbox's home was not handed over; the decoys are not "
			      "watched (their tokens are still refused by the proxy)");
		return NULL;
	}
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		char said[400];
		say_unwatched(log, "inotify: %s; the decoys are not watched (their tokens are "
			      "still refused by the proxy)%s", strerror(err),
			      limit_hint(NOTIFY_INOTIFY_INSTANCES, err, said, sizeof said));
		return NULL;
	}
	struct canary_watch *w = xcalloc(1, sizeof *w);
	*w = (struct canary_watch){ .fd = fd, .cs = cs, .log = log };
	size_t n = 0;
	for (size_t i = 0; i < CANARY_MAX; i++) {
		w->wd[i] = -1;
		if (i >= cs->n || !(placed & (1u << i)))
			continue;
		/* the home's own path in this process, then the decoy's: a
		 * watch takes a path, and opens nothing */
		char path[4200];
		snprintf(path, sizeof path, "/proc/self/fd/%d/%s", homefd, cs->v[i].rel);
		w->wd[i] = inotify_add_watch(fd, path, IN_OPEN | IN_DONT_FOLLOW);
		if (w->wd[i] < 0) {
			int err = errno;
			char said[400];
			say_unwatched(log, "~/%s cannot be watched: %s; an open of it goes unseen "
				      "(its tokens are still refused by the proxy)%s", cs->v[i].rel,
				      strerror(err),
				      limit_hint(NOTIFY_INOTIFY_WATCHES, err, said, sizeof said));
		} else
			n++;
	}
	if (!n) {
		canary_watch_free(w);
		return NULL;
	}
	return w;
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	canary_watch_dispatch(src->ctx);
}

int canary_watch_watch(struct loop *l, struct canary_watch *w, struct werr *e)
{
	return loop_add(l, "the decoys' watch", w->fd, on_ready, w, e);
}

void canary_watch_dispatch(struct canary_watch *w)
{
	union {
		char b[4096];
		struct inotify_event align;
	} u;
	ssize_t n;
	while ((n = read(w->fd, u.b, sizeof u.b)) > 0) {
		for (char *p = u.b; p < u.b + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof *ev + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				audit_emit_event(w->log, ev_alert(&(struct ev_alert){
					.rule = "canary.opened", .severity = "critical",
					.detail = "the decoys' watch overflowed: opens of decoys went "
						  "uncounted" }), NULL);
				continue;
			}
			for (size_t i = 0; i < CANARY_MAX; i++) {
				if (w->wd[i] < 0 || w->wd[i] != ev->wd)
					continue;
				if (ev->mask & IN_IGNORED) {
					w->wd[i] = -1; /* removed, or its file system gone */
				} else if (ev->mask & IN_OPEN) {
					audit_emit_event(w->log, ev_alert(&(struct ev_alert){
						.rule = "canary.opened", .severity = "critical",
						.path = w->cs->v[i].inside, .action = "logged",
						.detail = "a decoy credential warden placed was opened" }),
						NULL);
				}
			}
		}
	}
}

int canary_watch_take_fd(struct canary_watch *w)
{
	if (!w)
		return -1;
	int fd = w->fd;
	w->fd = -1;
	return fd;
}

void canary_watch_free(struct canary_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}
