/* filebound.c - the record's bound on `file` events (filebound.h): a token
 * bucket for allowed operations and a cap for each decision (recbound.h),
 * and past them the operations already on the record told from those that
 * are not.
 *
 * A loop that truncates one file a thousand times would otherwise spend
 * the bound in a quarter of a second and leave the session's later writes
 * unrecorded; past the bound, the first operation of each key (access, op,
 * decision, paths) is still written, and only the repeats are counted. The
 * keys are kept as 64-bit SipHash values under a key drawn for the session
 * (no path can be chosen to collide with another's), at most names_cap of
 * them in a table of twice as many slots; past that, the new ones are
 * counted too, and the summary says how many were which. */
#include "filebound.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "../common/util.h"

#define SUMMARY_EVERY_MS 10000.0

static const char *const kind_names[FILEBOUND_KINDS] = {
	"open", "unlink", "rename", "link", "symlink", "truncate", "mkdir",
	"mknod", "chmod", "chown", "utime", "xattr", "read", "other",
};
_Static_assert(FILEBOUND_KINDS == 14, "kind_names has FILEBOUND_KINDS names");
enum { KIND_XATTR = 11, KIND_READ = 12, KIND_OTHER = 13 };

void filebound_init(struct filebound *b, int level)
{
	*b = (struct filebound){ .names_cap = level >= 2 ? 500000UL : 100000UL };
	/* recbound's classes: 0 refused (a cap alone), 1 allowed (a rate too) */
	b->rb.c[0] = recbound_class(0, 0, 10000UL);
	b->rb.c[1] = level >= 2 ? recbound_class(5000.0, 20000.0, 1000000UL)
			       : recbound_class(200.0, 1000.0, 20000UL);
	b->slots = 1;
	while (b->slots < 2 * b->names_cap)
		b->slots <<= 1;
	if (getrandom(b->key, sizeof b->key, GRND_NONBLOCK) != (ssize_t)sizeof b->key) {
		/* no entropy yet (early boot): the clock's, still not the agent's to know */
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		memcpy(b->key, &t, sizeof t < sizeof b->key ? sizeof t : sizeof b->key);
	}
}

void filebound_free(struct filebound *b)
{
	free(b->seen);
	b->seen = NULL;
}

static int kind_of(const struct ev_file *x)
{
	if (x->access && strcmp(x->access, "read") == 0)
		return KIND_READ;
	if (x->op && (strcmp(x->op, "setxattr") == 0 || strcmp(x->op, "removexattr") == 0))
		return KIND_XATTR;
	for (int i = 0; i < KIND_XATTR; i++)
		if (x->op && strcmp(x->op, kind_names[i]) == 0)
			return i;
	return KIND_OTHER;
}

/* The operation's key: its access, op, decision and paths (a partial one
 * marked as such), hashed with the session's key; never 0 (an empty slot). */
static uint64_t key_of(const struct filebound *b, const struct ev_file *x, bool deny)
{
	const char *p0 = x->npaths > 0 && x->paths[0] ? x->paths[0] : "";
	const char *p1 = x->npaths > 1 && x->paths[1] ? x->paths[1] : "";
	_cleanup_free_ char *s = xasprintf("%s%c%s%c%c%c%c%s%c%s", x->access ? x->access : "", 0,
					   x->op ? x->op : "", 0, deny ? 'd' : 'a',
					   x->partial[0] ? 'p' : '-', x->partial[1] ? 'p' : '-', p0, 0,
					   p1);
	size_t len = strlen(x->access ? x->access : "") + 1 + strlen(x->op ? x->op : "") + 1 + 3 +
		     strlen(p0) + 1 + strlen(p1);
	uint64_t h;
	crypto_shorthash((unsigned char *)&h, (const unsigned char *)s, len, b->key);
	return h ? h : 1;
}

/* Is h on the record? When not, and insert, it is put there if the
 * record keeps fewer than names_cap keys (*kept says whether it was). */
static bool seen_or_keep(struct filebound *b, uint64_t h, bool insert, bool *kept)
{
	*kept = false;
	if (!b->seen) {
		if (!insert)
			return false;
		b->seen = xcalloc(b->slots, sizeof *b->seen);
	}
	size_t i = (size_t)h & (b->slots - 1);
	for (; b->seen[i]; i = (i + 1) & (b->slots - 1))
		if (b->seen[i] == h)
			return true;
	if (insert && b->names < b->names_cap) {
		b->seen[i] = h;
		b->names++;
		*kept = true;
	}
	return false;
}

bool filebound_admit(struct filebound *b, const struct ev_file *x, bool deny, double now_ms)
{
	if (b->summary_ms == 0)
		b->summary_ms = now_ms; /* the summaries' clock starts with the first */
	uint64_t h = key_of(b, x, deny);
	bool kept;
	if (recbound_admit(&b->rb, deny ? 0 : 1, now_ms)) {
		seen_or_keep(b, h, true, &kept); /* its repeats, past the bound, are counted */
		return true;
	}
	bool seen = seen_or_keep(b, h, true, &kept);
	if (kept)
		return true; /* the first of its key: on the record */
	struct filebound_held *held = &b->held[deny];
	held->total++;
	held->repeats += seen;
	held->kinds[kind_of(x)]++;
	return false;
}

bool filebound_summary(struct filebound *b, bool end, double now_ms, struct ev_file *x)
{
	if (!b->held[0].total && !b->held[1].total)
		return false;
	if (!end && now_ms - b->summary_ms < SUMMARY_EVERY_MS)
		return false;
	bool deny = b->held[1].total > 0;
	struct filebound_held *h = &b->held[deny];
	size_t n = 0;
	for (int i = 0; i < FILEBOUND_KINDS; i++)
		if (h->kinds[i]) {
			b->sum_names[n] = kind_names[i];
			b->sum_kinds[n++] = h->kinds[i];
		}
	snprintf(b->sum_text, sizeof b->sum_text,
		 "file operations %s past the record's bound (%s), counted by kind, not listed "
		 "one by one: repeats of an operation already on the record (same access, op, "
		 "decision and paths), and unkept ones, on paths past the %lu the record keeps "
		 "in memory",
		 deny ? "refused or not judged" : "let through",
		 deny ? "a cap of 10000 refusals a session" : "a rate a second and a cap a session",
		 b->names_cap);
	*x = (struct ev_file){ .pid = -1, .op = "summary", .decision = deny ? "deny" : "allow",
			       .has_count = true, .count = h->total, .summary = b->sum_text,
			       .has_repeats = true, .repeats = h->repeats, .nkinds = n,
			       .kind_names = b->sum_names, .kind_counts = b->sum_kinds };
	*h = (struct filebound_held){ 0 };
	b->summary_ms = now_ms;
	return true;
}
