/* proctitle.c - warden's own argument area noted and overwritten
 * (proctitle.h). */
#include "proctitle.h"

#include <string.h>

static char *area;
static size_t area_len;

void proctitle_note(int argc, char **argv)
{
	if (argc < 1 || !argv[0])
		return;
	char *lo = argv[0], *hi = argv[0] + strlen(argv[0]) + 1;
	for (int i = 1; i < argc && argv[i]; i++) {
		char *end = argv[i] + strlen(argv[i]) + 1;
		if (argv[i] < lo)
			lo = argv[i];
		if (end > hi)
			hi = end;
	}
	area = lo;
	area_len = (size_t)(hi - lo);
}

void proctitle_set(const char *title)
{
	size_t n = strlen(title);
	if (!area || area_len <= n)
		return;
	memset(area, 0, area_len);
	memcpy(area, title, n);
}
