/* fuzz_socks5.c - libFuzzer target for the SOCKS5 handshake parser
 * (src/net/socks5.c). Each input runs as a whole handshake (fed again after
 * the greeting, as a server does) and again in chunks whose sizes come from
 * the input; both must end alike. Then the invariants: replies are the
 * documented shapes, reasons are printable, a request holds a valid host
 * and a non-zero port. Compiled with -DWARDEN_FUZZ_REPLAY it gets a main()
 * that replays files and corpus directories without clang. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/util.h"
#include "src/net/socks5.h"

#define REPLAY_NAME "fuzz-socks5-replay"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool printable(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Feed data in chunks (step 0: all that is left each time). */
static enum socks5_result handshake(struct socks5_parser *p, const uint8_t *data, size_t size,
				    size_t step, size_t *consumed, int *greetings)
{
	socks5_parser_init(p);
	size_t off = 0;
	enum socks5_result r = SOCKS5_NEED_MORE;
	*greetings = 0;
	while (off < size) {
		size_t chunk = step ? 1 + (data[off] % step) : size - off;
		if (chunk > size - off)
			chunk = size - off;
		size_t used = 0;
		r = socks5_feed(p, data + off, chunk, &used);
		if (used > chunk)
			abort();
		off += used;
		if (r == SOCKS5_GREETING) {
			if (p->reply_len != 2 || p->reply[0] != 5 || p->reply[1] != 0)
				abort();
			(*greetings)++;
			continue;
		}
		if (r != SOCKS5_NEED_MORE)
			break;
		if (used != chunk)
			abort();
	}
	if (r == SOCKS5_GREETING)
		r = socks5_feed(p, NULL, 0, NULL);
	*consumed = off;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct socks5_parser a, b;
	size_t ua, ub;
	int ga, gb;
	enum socks5_result ra = handshake(&a, data, size, 0, &ua, &ga);
	enum socks5_result rb = handshake(&b, data, size, 7, &ub, &gb);
	if (ra != rb || ua != ub || ga != gb || a.code != b.code || strcmp(a.reason, b.reason) != 0 ||
	    a.reply_len != b.reply_len || memcmp(a.reply, b.reply, a.reply_len) != 0)
		abort();
	if (ga > 1 || ua > size || ua > 257 + SOCKS5_REQUEST_MAX)
		abort();

	switch (ra) {
	case SOCKS5_NEED_MORE:
	case SOCKS5_GREETING:
		if (ua != size)
			abort();
		break;
	case SOCKS5_ERROR:
		if (!printable(a.reason))
			abort();
		if (a.reply_len == 2) {
			if (ga || a.reply[0] != 5 || a.reply[1] != 0xff)
				abort();
		} else if (a.reply_len == 10) {
			if (!ga || a.reply[0] != 5 || a.reply[1] != a.code || a.code == 0 ||
			    a.reply[3] != 1)
				abort();
		} else if (a.reply_len == 8) {
			if (data[0] != 4 || a.reply[1] != 91)
				abort();
		} else if (a.reply_len != 0) {
			abort();
		}
		if (socks5_feed(&a, data, size, &ua) != SOCKS5_ERROR || ua != 0)
			abort();
		break;
	case SOCKS5_REQUEST: {
		if (!ga || a.port == 0 || a.reply_len != 0 || strcmp(a.host.name, b.host.name) != 0 ||
		    a.port != b.port)
			abort();
		struct net_host h;
		char again[NET_HOST_MAX + 3];
		int n = snprintf(again, sizeof again, a.host.kind == NET_HOST_IPV6 ? "[%s]" : "%s",
				 a.host.name);
		if (net_host_parse(&h, again, (size_t)n, NULL) < 0 || h.kind != a.host.kind ||
		    strcmp(h.name, a.host.name) != 0 || !addr_ip_equal(&h.ip, &a.host.ip))
			abort();
		if (socks5_feed(&a, data, size, &ua) != SOCKS5_REQUEST || ua != 0)
			abort();
		uint8_t out[SOCKS5_REPLY_MAX];
		size_t rl = socks5_reply(out, SOCKS5_SUCCEEDED, &a.host.ip, a.port);
		if (rl != (addr_ip_is_v4(&a.host.ip, NULL) ? 10u : 22u))
			abort();
		break;
	}
	}
	return 0;
}
#ifdef WARDEN_FUZZ_REPLAY
/* Replay: every file named (directories: every file in them) through the
 * entry point above, each as an exact-size copy so ASan and valgrind see
 * reads past the input. */
static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", REPLAY_NAME, path, strerror(errno));
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
		if (got < 0) {
			fprintf(stderr, "%s: %s: %s\n", REPLAY_NAME, path, strerror(errno));
			close(fd);
			free(buf);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	uint8_t *input = xmalloc(n ? n : 1);
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
			fprintf(stderr, "%s: %s: %s\n", REPLAY_NAME, argv[i], strerror(errno));
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
			fprintf(stderr, "%s: %s: %s\n", REPLAY_NAME, argv[i], strerror(errno));
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
	printf("%s: %d input(s), %d unreadable\n", REPLAY_NAME, count, failed);
	return failed || count == 0 ? 1 : 0;
}
#endif
