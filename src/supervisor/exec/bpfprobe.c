/* bpfprobe.c - the probe of in-kernel exec enforcement (bpfexec_probe,
 * bpfexec.h) for `warden doctor`: a session of its own, in a cgroup made for
 * it and removed, its BPF LSM program loaded, attached and checked for
 * real. Apart from the kernel feature probe (src/sandbox/features.c)
 * because it loads the program with libbpf, which only the warden binary
 * links (the rest of the probe is in the library the unit tests use). */
#include "bpfexec.h"

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../policy/policy.h"
#include "../../sandbox/features.h"

/* The probe: a session of its own, in a cgroup made for it and removed. */
bool bpfexec_probe(char *why, size_t len)
{
	struct werr e = { 0 };
	bool unavailable = true;
	char dir[1100] = "";
#if WARDEN_BPF
	if (caps_admin()) {
		FILE *f = fopen("/proc/self/mounts", "re");
		char line[4096], point[1024], type[64];
		while (f && fgets(line, sizeof line, f))
			if (sscanf(line, "%*s %1023s %63s", point, type) == 2 && strcmp(type, "cgroup2") == 0) {
				snprintf(dir, sizeof dir, "%s/warden-probe-%d", point, (int)getpid());
				break;
			}
		if (f)
			fclose(f);
		if (dir[0] && mkdir(dir, 0700) < 0)
			dir[0] = '\0';
	}
#endif
	struct policy p = { 0 };
	struct bpfexec *b = bpfexec_new(&p, dir[0] ? dir : NULL, &unavailable, &e);
	bpfexec_free(b);
	if (dir[0])
		rmdir(dir);
	if (!b)
		werr_str(&e, why, len);
	return b != NULL;
}
