/* secrets.c - reading the secrets' real values on the host (variable, file,
 * command with a time bound) and making their phantoms. */
#include "secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "../common/runcmd.h"
#include "../common/util.h"


#define PREFIX_SEGMENT_MAX 12 /* characters of one prefix segment of digits, its '-' or '_' not counted */
#define PREFIX_WORD_MAX 6     /* of one with letters: a vendor's mark (sk, ant, api03, github), not a word */
#define PREFIX_REST_MIN 20    /* characters a kept prefix leaves after it: a token's random body */
#define PHANTOM_TRIES 100
#define PHANTOM_TAIL 20       /* characters of the stable end (Claude Code keeps 20) */
#define PHANTOM_RANDOM_MIN 16 /* random characters a phantom with a stable end keeps */

/* A buffer that may hold a value: wiped before it is freed. */
struct vbuf {
	char *p;
	size_t n, cap;
};

static void vbuf_free(struct vbuf *b)
{
	if (b->p) {
		explicit_bzero(b->p, b->cap);
		free(b->p);
	}
	memset(b, 0, sizeof *b);
}

static void wipe_free(char *p)
{
	if (p) {
		explicit_bzero(p, strlen(p));
		free(p);
	}
}

__attribute__((format(printf, 4, 5)))
static int serr(struct werr *e, int errnum, const struct policy_secret *sp, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr_set(e, errnum, "secret %s (%s): %s", sp->name, sp->origin ? sp->origin : "?", msg);
}

static int from_env(const struct policy_secret *sp, struct vbuf *b, struct werr *e)
{
	const char *v = getenv(sp->name);
	if (!v)
		return serr(e, 0, sp, "the variable %s is not set", sp->name);
	if (!*v)
		return serr(e, 0, sp, "the variable %s is empty", sp->name);
	b->n = strlen(v);
	b->cap = b->n + 1;
	b->p = xmalloc(b->cap);
	memcpy(b->p, v, b->cap);
	return 0;
}

/* Read fd to its end into b, at most SECRET_VALUE_MAX bytes: 0, 1 when
 * there was more, -1 with errno. */
static int read_capped(int fd, struct vbuf *b)
{
	b->cap = SECRET_VALUE_MAX + 1;
	b->p = xmalloc(b->cap);
	for (;;) {
		ssize_t got = read(fd, b->p + b->n, b->cap - b->n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			return 0;
		b->n += (size_t)got;
		if (b->n == b->cap)
			return 1;
	}
}

static int from_file(const struct policy_secret *sp, struct vbuf *b, struct werr *e)
{
	const char *path = sp->file ? sp->file : "";
	struct stat st;
	/* stat first: a FIFO or a device is refused without being opened */
	if (stat(path, &st) < 0)
		return serr(e, errno, sp, "cannot read %s", path);
	if (!S_ISREG(st.st_mode))
		return serr(e, 0, sp, "%s is not a regular file", path);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return serr(e, errno, sp, "cannot read %s", path);
	if (fstat(fd, &st) < 0)
		return serr(e, errno, sp, "cannot read %s", path);
	if (!S_ISREG(st.st_mode))
		return serr(e, 0, sp, "%s is not a regular file", path);
	int r = read_capped(fd, b);
	if (r < 0)
		return serr(e, errno, sp, "cannot read %s", path);
	if (r > 0)
		return serr(e, 0, sp, "%s is larger than 64 KiB", path);
	return 0;
}

static int from_command(const struct policy_secret *sp, unsigned timeout_ms, struct vbuf *b,
			struct werr *e)
{
	if (sp->argv.n == 0)
		return serr(e, 0, sp, "no command");
	const char *cmd = sp->argv.v[0];
	const struct runcmd rc = { .argv = sp->argv.v, .out_fd = -1, .err = RUNCMD_ERR_INHERIT,
				   .out_max = SECRET_VALUE_MAX, .timeout_ms = timeout_ms };
	struct runcmd_out r;
	if (runcmd(&rc, &r) < 0)
		return serr(e, errno, sp, "cannot run command '%s'", cmd);
	char limit[32];
	runcmd_timeout_text(limit, sizeof limit, timeout_ms);
	int rv = -1;
	if (r.end == RUNCMD_TIMED_OUT)
		serr(e, 0, sp, "command '%s' timed out after %s", cmd, limit);
	else if (r.end == RUNCMD_TOO_MUCH)
		serr(e, 0, sp, "command '%s' printed more than 64 KiB", cmd);
	else if (r.end == RUNCMD_SIGNALED)
		serr(e, 0, sp, "command '%s' was killed by signal %d", cmd, r.code);
	else if (r.code != 0)
		serr(e, 0, sp, "command '%s' exited with status %d", cmd, r.code);
	else
		rv = 0;
	if (rv == 0) {
		b->cap = r.len + 1; /* what held the value, and its NUL */
		b->n = r.len;
		b->p = steal_ptr(&r.out);
	} else {
		explicit_bzero(r.out, r.len);
	}
	runcmd_out_free(&r);
	return rv;
}

/* Trim trailing CR and LF, then check what a value must be. */
static int check_value(const struct policy_secret *sp, struct vbuf *b, struct werr *e)
{
	while (b->n > 0 && (b->p[b->n - 1] == '\n' || b->p[b->n - 1] == '\r'))
		b->n--;
	explicit_bzero(b->p + b->n, b->cap - b->n);
	const char *what = sp->source == SECRET_FROM_FILE ? "the file" :
			   sp->source == SECRET_FROM_COMMAND ? "the command's output" : "the value";
	if (b->n == 0)
		return serr(e, 0, sp, "%s is empty", what);
	for (size_t i = 0; i < b->n; i++)
		if (b->p[i] == '\0' || b->p[i] == '\r' || b->p[i] == '\n')
			return serr(e, 0, sp, "the value holds a NUL, CR or LF byte: it could not go in a header");
	if (b->n < SECRET_VALUE_MIN)
		return serr(e, 0, sp, "the value is shorter than %d bytes: its phantom could match ordinary text",
			    SECRET_VALUE_MIN);
	return 0;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A prefix segment: [a-z0-9] or [A-Z0-9], 1 to PREFIX_WORD_MAX long, or
 * of digits alone up to PREFIX_SEGMENT_MAX (Slack's team number). */
static bool prefix_segment(const char *v, size_t n)
{
	bool lower = false, upper = false;
	for (size_t i = 0; i < n; i++) {
		lower = lower || (v[i] >= 'a' && v[i] <= 'z');
		upper = upper || (v[i] >= 'A' && v[i] <= 'Z');
	}
	return n > 0 && n <= (lower || upper ? PREFIX_WORD_MAX : PREFIX_SEGMENT_MAX) &&
	       !(lower && upper);
}

/* What follows a kept prefix looks like a token's random body: at least
 * PREFIX_REST_MIN characters of a token's alphabet (base64, base64url, '.')
 * of two kinds or more (lower, upper, digits). A password or passphrase
 * ("correct-horse-battery-staple", "admin_2024_Winter-Sunshine!") keeps no
 * prefix: any of it would be part of the value inside. */
static bool token_body(const char *v, size_t n)
{
	bool lower = false, upper = false, digit = false;
	for (size_t i = 0; i < n; i++) {
		if (!is_alnum(v[i]) && !strchr("-_.+/=", v[i]))
			return false;
		lower = lower || (v[i] >= 'a' && v[i] <= 'z');
		upper = upper || (v[i] >= 'A' && v[i] <= 'Z');
		digit = digit || (v[i] >= '0' && v[i] <= '9');
	}
	return n >= PREFIX_REST_MIN && lower + upper + digit >= 2;
}

/* The longest run of prefix segments, kept when a token's body follows
 * it (a shorter one is not tried: "admin_2024_Winter..." would give up
 * "admin_"). */
static size_t prefix_len(const char *v, size_t n)
{
	size_t keep = 0, i = 0;
	for (;;) {
		size_t j = i;
		while (j < n && is_alnum(v[j]))
			j++;
		if (!prefix_segment(v + i, j - i) || j >= n || (v[j] != '-' && v[j] != '_') ||
		    j + 1 > n / 2)
			break;
		keep = i = j + 1;
	}
	return keep && token_body(v + keep, n - keep) ? keep : 0;
}

static bool all_in(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

#define DIGITS "0123456789"
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" DIGITS

/* The stable end: n characters of set (k of them) from HMAC-SHA256 under
 * the tail key of "warden phantom tail", the name and the value, block
 * after block, each byte taken when below lim (no bias). */
static bool stable_tail(char *out, size_t n, const char *set, size_t k, size_t lim,
			const char *name, const char *value, size_t len,
			const unsigned char key[TAIL_KEY_LEN])
{
	static const char label[] = "warden phantom tail";
	size_t nl = strlen(name), mlen = sizeof label + nl + 1 + len + 4;
	unsigned char *msg = xmalloc(mlen);
	memcpy(msg, label, sizeof label);
	memcpy(msg + sizeof label, name, nl + 1);
	memcpy(msg + sizeof label + nl + 1, value, len);
	/* libsodium's HMAC, not libcrypto's: its HMAC() sets up libcrypto's
	 * providers, which only the TLS module carries (src/net/tlsmod.h) */
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	bool ok = true;
	size_t i = 0;
	for (uint32_t block = 0; ok && i < n; block++) {
		memcpy(msg + mlen - 4, &block, 4);
		crypto_auth_hmacsha256_state st;
		ok = sodium_init() >= 0 && crypto_auth_hmacsha256_init(&st, key, TAIL_KEY_LEN) == 0 &&
		     crypto_auth_hmacsha256_update(&st, msg, mlen) == 0 &&
		     crypto_auth_hmacsha256_final(&st, mac) == 0 && block < 1000;
		sodium_memzero(&st, sizeof st);
		for (unsigned j = 0; ok && j < sizeof mac && i < n; j++)
			if (mac[j] < lim)
				out[i++] = set[mac[j] % k];
	}
	explicit_bzero(mac, sizeof mac);
	explicit_bzero(msg, mlen);
	free(msg);
	return ok;
}

char *secret_phantom_for(const char *value, size_t len, const char *name,
			 const unsigned char *tail_key)
{
	size_t keep = prefix_len(value, len);
	const char *rest = value + keep;
	size_t rn = len - keep;
	char set[80];
	if (all_in(rest, rn, DIGITS))
		snprintf(set, sizeof set, "%s", DIGITS);
	else if (all_in(rest, rn, DIGITS "abcdef"))
		snprintf(set, sizeof set, "%s", DIGITS "abcdef");
	else if (all_in(rest, rn, DIGITS "ABCDEF"))
		snprintf(set, sizeof set, "%s", DIGITS "ABCDEF");
	else
		snprintf(set, sizeof set, "%s%s%s%s", ALNUM, memchr(rest, '-', rn) ? "-" : "",
			 memchr(rest, '_', rn) ? "_" : "", memchr(rest, '.', rn) ? "." : "");
	size_t k = strlen(set), lim = 256 - 256 % k;
	char *ph = xmalloc(len + 1);
	memcpy(ph, value, keep);
	size_t tail = tail_key && name && rn >= PHANTOM_TAIL + PHANTOM_RANDOM_MIN ? PHANTOM_TAIL : 0;
	if (tail && !stable_tail(ph + len - tail, tail, set, k, lim, name, value, len, tail_key)) {
		free(ph);
		errno = EIO;
		return NULL;
	}
	unsigned char rnd[256];
	size_t have = 0, used = 0;
	for (size_t i = keep; i < len - tail;) {
		if (used == have) {
			ssize_t got = getrandom(rnd, sizeof rnd, 0);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				free(ph);
				return NULL;
			}
			have = (size_t)got;
			used = 0;
		}
		unsigned char c = rnd[used++];
		if (c < lim)
			ph[i++] = set[c % k];
	}
	explicit_bzero(rnd, sizeof rnd);
	ph[len] = '\0';
	return ph;
}

static bool inside(const char *hay, const char *needle)
{
	return memmem(hay, strlen(hay), needle, strlen(needle)) != NULL;
}

/* Is this phantom of v[i] clear of every value and of the phantoms made
 * before it? */
static bool phantom_ok(const struct secrets *s, size_t i, const char *ph)
{
	for (size_t j = 0; j < s->n; j++) {
		if (inside(s->v[j].value, ph) || inside(ph, s->v[j].value))
			return false;
		if (j < i && (inside(s->v[j].phantom, ph) || inside(ph, s->v[j].phantom)))
			return false;
	}
	return true;
}

int secrets_load(struct secrets *s, const struct policy *p, const unsigned char *tail_key,
		 struct werr *e)
{
	return secrets_load_within(s, p, tail_key, SECRETS_COMMAND_TIMEOUT_MS, e);
}

int secrets_load_within(struct secrets *s, const struct policy *p, const unsigned char *tail_key,
			unsigned command_timeout_ms, struct werr *e)
{
	memset(s, 0, sizeof *s);
	if (p->nsecrets == 0)
		return 0;
	s->v = xcalloc(p->nsecrets, sizeof *s->v);
	for (size_t i = 0; i < p->nsecrets; i++) {
		const struct policy_secret *sp = &p->secrets[i];
		struct vbuf b = { 0 };
		int r = sp->source == SECRET_FROM_FILE ? from_file(sp, &b, e)
			: sp->source == SECRET_FROM_COMMAND ? from_command(sp, command_timeout_ms, &b, e)
							     : from_env(sp, &b, e);
		if (r == 0)
			r = check_value(sp, &b, e);
		if (r < 0) {
			vbuf_free(&b);
			secrets_free(s);
			return -1;
		}
		s->v[i].spec = sp;
		s->v[i].value = xmalloc(b.n + 1);
		memcpy(s->v[i].value, b.p, b.n);
		s->v[i].value[b.n] = '\0';
		vbuf_free(&b);
		s->n++;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct secret *sc = &s->v[i];
		size_t len = strlen(sc->value);
		for (int t = 0; !sc->phantom; t++) {
			if (t == PHANTOM_TRIES) {
				serr(e, 0, sc->spec, "cannot make a phantom unlike every value");
				secrets_free(s);
				return -1;
			}
			/* half the tries with the stable end, then without: an end
			 * that happens to hold another value cannot stop a session */
			char *ph = secret_phantom_for(sc->value, len, sc->spec->name,
						      t < PHANTOM_TRIES / 2 ? tail_key : NULL);
			if (!ph) {
				serr(e, errno, sc->spec, "getrandom");
				secrets_free(s);
				return -1;
			}
			if (phantom_ok(s, i, ph))
				sc->phantom = ph;
			else
				free(ph);
		}
		if (len > s->maxlen)
			s->maxlen = len;
	}
	return 0;
}

void secrets_free(struct secrets *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		wipe_free(s->v[i].value);
		free(s->v[i].phantom);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

bool secret_bound(const struct secret *s, const struct net_host *h, uint16_t port)
{
	for (size_t i = 0; s->spec && i < s->spec->nhosts; i++)
		if (rules_rule_matches(&s->spec->hosts[i], h, port))
			return true;
	return false;
}

bool secret_bound_for(const struct secret *s, const struct net_host *h, uint16_t port,
		      const struct net_program *prog)
{
	for (size_t i = 0; s->spec && i < s->spec->nhosts; i++)
		if (rules_rule_matches(&s->spec->hosts[i], h, port) &&
		    rules_program_matches(&s->spec->hosts[i], prog))
			return true;
	return false;
}

const struct secret *secrets_find_phantom(const struct secrets *s, const void *data, size_t len)
{
	if (!len)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].phantom && memmem(data, len, s->v[i].phantom, strlen(s->v[i].phantom)))
			return &s->v[i];
	return NULL;
}

const struct secret *secrets_find_value(const struct secrets *s, const void *data, size_t len)
{
	if (!len)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].value && memmem(data, len, s->v[i].value, strlen(s->v[i].value)))
			return &s->v[i];
	return NULL;
}
