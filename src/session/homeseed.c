/* homeseed.c - a file of warden's own in the sandbox's home (homeseed.h). */
#include "homeseed.h"

#include <string.h>

void home_seed(struct sandbox_spec *s, const char *path, const char *text,
	       const struct home_bind *binds, size_t nbinds)
{
	if (!text || s->nseeds >= SEED_MAX)
		return;
	size_t first = strcspn(path, "/");
	for (size_t i = 0; i < nbinds; i++)
		if (strlen(binds[i].name) == first && strncmp(binds[i].name, path, first) == 0)
			return;
	s->seeds[s->nseeds++] = (struct seed_file){ .path = path, .mode = 0644, .bytes = text };
}
