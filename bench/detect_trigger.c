/* detect_trigger.c - bench/detect's inside half: writes CLOCK_REALTIME in
 * nanoseconds to FILE, then executes PROGRAM ARGS... at once (the exec the
 * benchmark's rule fires on). Only the exec comes after the time is taken.
 *
 *   detect_trigger FILE PROGRAM [ARG...] */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: detect_trigger FILE PROGRAM [ARG...]\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
	if (write(fd, buf, (size_t)n) != n)
		return 1;
	close(fd);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
