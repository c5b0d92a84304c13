/* homeseed.c - what warden places in the sandbox's home beside its binds
 * (homeseed.h): its own files, and the decoys it leaves out. */
#include "homeseed.h"

#include <string.h>

void home_seed(struct sandbox_spec *s, const char *path, const char *text)
{
	if (!text || s->nseeds >= SEED_MAX)
		return;
	for (size_t i = 0; i < s->nhome_binds; i++)
		if (path_overlaps(path, s->home_binds[i].name))
			return;
	s->seeds[s->nseeds++] = (struct seed_file){ .path = path, .mode = 0644, .bytes = text };
}

void home_skip_decoys(struct canary_set *cs, const struct sandbox_spec *s,
		      const struct policy *pol)
{
	for (size_t i = 0; i < s->nhome_binds; i++) {
		_cleanup_free_ char *in = xasprintf(AGENT_HOME "/%s", s->home_binds[i].name);
		canary_skip_covered(cs, in);
	}
	for (size_t i = 0; i < pol->npaths; i++)
		canary_skip_covered(cs, pol->paths[i].path);
	for (size_t i = 0; i < s->exec.n; i++)
		for (size_t j = 0; j < cs->n; j++)
			if (path_is_within(s->exec.w[i].path, cs->v[j].inside))
				cs->v[j].off = true;
}
