/* execs_setup.c - the exec pipeline made (its rules, the devices the agent
 * can write, the hash workers, the tracer, the caches) and freed, and its
 * figures for session.end (execs.h); the pipeline itself is execs.c's. */
#include "execs_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../../sandbox/paths.h"
#include "execpath.h"
#include "exectrace.h"
#include "nsread.h"
#include "pidcache.h"

#define HASH_WORKERS 2

struct execs *execs_new(const struct execs_cfg *cfg, struct werr *e)
{
	const struct policy *pol = cfg->policy;
	const char *const *writable = cfg->writable;
	size_t nwritable = cfg->nwritable;
	struct execs *x = xcalloc(1, sizeof *x);
	x->listener = -1; /* execs_ready */
	x->log = cfg->log;
	x->rules = &pol->exec;
	x->root = cfg->root;
	x->pidns = -2;
	x->timer = -1;
	x->ld = (struct loader_id)LOADER_ID_INIT;
	x->init = cfg->init;
	x->ap = cfg->approvals;
	x->link = cfg->link;
	x->link_ctx = cfg->link_ctx;
	x->kernel = cfg->kernel;
	exec_verdict_init(&x->lists, &pol->exec);
	for (size_t i = 0; i < pol->exec.deny.n; i++)
		x->code_rules = x->code_rules || strncmp(pol->exec.deny.v[i], "code:", 5) == 0;
	for (size_t i = 0; i < pol->exec.allow.n; i++)
		x->code_rules = x->code_rules || strncmp(pol->exec.allow.v[i], "code:", 5) == 0;
	for (size_t i = 0; i < nwritable && x->nwdev < WRITABLE_DEVS; i++) {
		struct stat st;
		if (writable[i] && stat(writable[i], &st) == 0) {
			bool have = false;
			for (size_t k = 0; k < x->nwdev; k++)
				have = have || x->wdev[k] == st.st_dev;
			if (!have)
				x->wdev[x->nwdev++] = st.st_dev;
		}
	}
	/* A directory allowed as a whole must be one the agent cannot write:
	 * in a writable one, anything could be put there and run. */
	static const char *const scratch[] = { "/tmp", "/var/tmp", "/dev/shm", AGENT_HOME };
	for (size_t i = 0; i < pol->exec.allow_dirs.n; i++) {
		const char *d = pol->exec.allow_dirs.v[i], *w = NULL;
		for (size_t k = 0; k < nwritable && !w; k++)
			if (writable[k] && path_is_within(d, writable[k]))
				w = writable[k];
		for (size_t k = 0; k < ARRAY_LEN(scratch) && !w; k++)
			if (path_is_within(d, scratch[k]))
				w = scratch[k];
		if (w) {
			werr_set(e, 0, "exec allow %s: the agent can write there (%s is writable inside the "
				 "sandbox), so anything could be put there and run; allow its programs by hash "
				 "(exec allow FILE, sha256:HEX or hashes:FILE)", d, w);
			execs_free(x);
			return NULL;
		}
	}
	x->reader = nsread_new(cfg->userns);
	x->q = hashq_new(HASH_WORKERS, x->reader);
	x->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	x->t = tracer_new();
	x->ep = execpath_new();
	x->pids = pidcache_new();
	if (!x->q || x->timer < 0) {
		werr_errno(e, "supervisor: setting up exec control");
		execs_free(x);
		return NULL;
	}
	x->tracing = getenv("NOTRACE") == NULL;
	hashcache_open(&x->hc, cfg->kept);
	x->planned_argv = cfg->planned_argv;
	x->planned_cwd = cfg->planned_cwd ? cfg->planned_cwd : "/";
	return x;
}

void execs_ready(struct execs *x, int listener, const char *planned)
{
	x->listener = listener;
	x->planned = planned ? xstrdup(planned) : NULL;
}

void execs_free(struct execs *x)
{
	if (!x)
		return;
	for (struct pexec *p = x->list, *next; p; p = next) {
		next = p->next;
		pexec_free(p);
	}
	hashcache_close(&x->hc);
	loader_id_free(&x->ld);
	tracer_free(x->t);
	execpath_free(x->ep);
	pidcache_free(x->pids);
	if (hashq_free(x->q))
		nsread_free(x->reader); /* (else a worker stuck in a read may still ask it) */
	if (x->timer >= 0)
		close(x->timer);
	if (x->root >= 0)
		close(x->root);
	if (x->pidns >= 0)
		close(x->pidns);
	exec_verdict_free(&x->lists);
	free(x->planned);
	free(x);
}

json_t *execs_stats(const struct execs *x)
{
	unsigned long all = x->hits + x->misses;
	return json_pack("{s:{s:I,s:I,s:I,s:f},s:I,s:I,s:I,s:I}", "hash_cache", "hits",
			 (json_int_t)x->hits, "kept", (json_int_t)x->hc.kept,
			 "misses", (json_int_t)x->misses, "hit_rate",
			 all ? (double)x->hits / (double)all : 0.0, "fixed", (json_int_t)x->unwatched,
			 "verified", (json_int_t)x->verified, "swapped", (json_int_t)x->swapped,
			 "killed", (json_int_t)x->killed);
}

bool execs_cached_hash(struct execs *x, const struct stat *st, char hex[SHA256_HEX_LEN])
{
	const struct hc_entry *c = hashcache_get(&x->hc, st, false);
	if (c)
		memcpy(hex, c->hex, SHA256_HEX_LEN);
	return c != NULL;
}
