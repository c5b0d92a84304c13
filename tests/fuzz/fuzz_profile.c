/* fuzz_profile.c - libFuzzer target for the profile parser
 * (policy_parse_text, then policy_to_json and policy_digest on what it
 * built). Compiled with -DWARDEN_FUZZ_REPLAY it gets a main() that feeds
 * every file named on the command line (directories: every file in them)
 * to the same entry point, so a seed corpus replays without clang.
 *
 * Includes resolve against a scratch directory holding a few fixed profiles
 * (ok.profile, self.profile, a.profile <-> b.profile) so inputs can reach
 * the include and loop paths. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char incdir[] = "/tmp/warden-fuzz-XXXXXX";
static bool have_incdir;

static const struct {
	const char *name, *text;
} inc_files[] = {
	{ "ok.profile", "mask *.ok\nprotect ok/\nenv pass OK_*\nread-only ~/ok\n" },
	{ "self.profile", "include self.profile\n" },
	{ "a.profile", "mask a\ninclude b.profile\n" },
	{ "b.profile", "mask b\ninclude a.profile\n" },
	{ "default.profile", "include default\n" },
};

static void remove_incdir(void)
{
	for (size_t i = 0; i < ARRAY_LEN(inc_files); i++) {
		char path[sizeof incdir + 64];
		snprintf(path, sizeof path, "%s/%s", incdir, inc_files[i].name);
		unlink(path);
	}
	rmdir(incdir);
}

static void setup(void)
{
	policy_set_home("/home/fuzz");
	if (!mkdtemp(incdir))
		return; /* includes of files are then refused: still a valid run */
	for (size_t i = 0; i < ARRAY_LEN(inc_files); i++) {
		char path[sizeof incdir + 64];
		snprintf(path, sizeof path, "%s/%s", incdir, inc_files[i].name);
		FILE *f = fopen(path, "we");
		if (!f)
			continue;
		fputs(inc_files[i].text, f);
		fclose(f);
	}
	have_incdir = true;
	atexit(remove_incdir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	if (!ready) {
		setup();
		ready = true;
	}
	struct policy p = { 0 };
	struct werr e = { 0 };
	int r = policy_parse_text(&p, "fuzz", have_incdir ? incdir : NULL, (const char *)data, size, &e);
	if (r < 0 && e.msg[0] == '\0')
		abort(); /* every error says what went wrong */

	/* Whatever was built must be encodable: invalid UTF-8 reaching the JSON
	 * would drop entries from the digest. */
	json_t *j = policy_to_json(&p);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		abort();
	free(s);
	json_decref(j);
	char digest[65];
	policy_digest(&p, digest);
	for (size_t i = 0; i < p.npaths; i++)
		if (p.paths[i].path[0] != '/' || path_has_dot_components(p.paths[i].path))
			abort();
	policy_free(&p);
	return 0;
}

#ifdef WARDEN_FUZZ_REPLAY
static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fuzz-profile-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n == cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got < 0)
				fprintf(stderr, "fuzz-profile-replay: %s: %s\n", path, strerror(errno));
			close(fd);
			if (got < 0) {
				free(buf);
				return -1;
			}
			break;
		}
		n += (size_t)got;
	}
	/* An exact-size copy, so ASan/valgrind catch reads past the input. */
	uint8_t *input = xmalloc(n);
	memcpy(input, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(input, n);
	free(input);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	int count = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "fuzz-profile-replay: %s: %s\n", argv[i], strerror(errno));
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed += replay_file(argv[i]) < 0;
			count++;
			continue;
		}
		struct dirent **ents;
		int n = scandir(argv[i], &ents, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "fuzz-profile-replay: %s: %s\n", argv[i], strerror(errno));
			failed++;
			continue;
		}
		for (int k = 0; k < n; k++) {
			if (ents[k]->d_name[0] != '.') {
				char *path = xasprintf("%s/%s", argv[i], ents[k]->d_name);
				failed += replay_file(path) < 0;
				count++;
				free(path);
			}
			free(ents[k]);
		}
		free(ents);
	}
	policy_set_home(NULL);
	printf("fuzz-profile-replay: %d input(s), %d unreadable\n", count, failed);
	return failed || count == 0 ? 1 : 0;
}
#endif
