/* strset.c - a bounded set of strings (strset.h). */
#include "strset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "util.h"

static uint64_t fnv(const char *s)
{
	return fnv1a(s, SIZE_MAX, NULL);
}

bool strset_add(struct strset *s, const char *v, size_t max)
{
	if (s->n * 2 >= s->cap) {
		if (s->cap >= max * 2) {
			/* full: a value not there is new, and stays out */
			for (size_t i = fnv(v) & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
				if (!s->slot[i])
					return true;
				else if (strcmp(s->slot[i], v) == 0)
					return false;
		}
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **slot = xcalloc(cap, sizeof *slot);
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i]) {
				size_t j = fnv(s->slot[i]) & (cap - 1);
				while (slot[j])
					j = (j + 1) & (cap - 1);
				slot[j] = s->slot[i];
			}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	size_t i = fnv(v) & (s->cap - 1);
	for (; s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (strcmp(s->slot[i], v) == 0)
			return false;
	s->slot[i] = xstrdup(v);
	s->n++;
	return true;
}

void strset_free(struct strset *s)
{
	for (size_t k = 0; k < s->cap; k++)
		free(s->slot[k]);
	free(s->slot);
	*s = (struct strset){ 0 };
}
