/* homeseed.c - a file of warden's own in the sandbox's home (homeseed.h). */
#include "homeseed.h"

#include <string.h>

void home_seed(struct sandbox_spec *s, const char *path, const char *text)
{
	if (!text || s->nseeds >= SEED_MAX)
		return;
	for (size_t i = 0; i < s->nhome_binds; i++)
		if (path_is_within(path, s->home_binds[i].name) ||
		    path_is_within(s->home_binds[i].name, path))
			return;
	s->seeds[s->nseeds++] = (struct seed_file){ .path = path, .mode = 0644, .bytes = text };
}
