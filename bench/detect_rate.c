/* detect_rate.c - bench/detect's throughput part: a mix of events shaped
 * like a session's (execs of a build, connections, refused syscalls,
 * file operations, now and then one that fires a rule) fed to the detector
 * with the built-in rules, on the calling thread; and, for scale, the same
 * events through the audit log writer alone and through the writer with the
 * detector subscribed (what a session does with each event).
 *
 *   detect_rate N DIR   (N events; DIR for the logs)
 * Prints "detector: R events/s", "log: R events/s", "log+detector: R events/s". */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/audit/audit.h"
#include "src/detect/detect.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct ev {
	const char *kind;
	json_t *fields;
};

static struct ev *mix(size_t *n)
{
	static const char *const shapes[][2] = {
		{ "exec", "{\"pid\":12,\"ppid\":3,\"syscall\":\"execve\",\"cwd\":\"/w\",\"path\":\"/usr/bin/cc\","
			  "\"argv\":[\"cc\",\"-O2\",\"-c\",\"src/a.c\",\"-o\",\"build/a.o\"],\"resolved\":\"/usr/bin/cc\","
			  "\"sha256\":\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\","
			  "\"decision\":\"allow\"}" },
		{ "exec", "{\"pid\":13,\"ppid\":3,\"syscall\":\"execve\",\"cwd\":\"/w\",\"path\":\"/usr/bin/env\","
			  "\"argv\":[\"/usr/bin/env\",\"node\",\"test.js\"],\"resolved\":\"/usr/bin/env\","
			  "\"sha256\":\"aa\",\"decision\":\"allow\"}" },
		{ "exec", "{\"pid\":14,\"ppid\":3,\"syscall\":\"execve\",\"cwd\":\"/w\",\"path\":\"./a.out\","
			  "\"argv\":[\"./a.out\"],\"resolved\":\"/w/a.out\",\"sha256\":\"bb\",\"decision\":\"allow\"}" },
		{ "net", "{\"method\":\"CONNECT\",\"host\":\"registry.npmjs.org\",\"port\":443,\"address\":\"127.0.0.1\","
			 "\"via\":\"http\",\"bytes_out\":2000,\"bytes_in\":90000,\"duration_ms\":12.5,\"decision\":\"allow\","
			 "\"rule\":\"registry.npmjs.org\"}" },
		{ "syscall", "{\"pid\":15,\"host_pid\":99,\"name\":\"unshare\",\"nr\":272,\"args\":[\"0x10000000\"],"
			     "\"decision\":\"deny\",\"errno\":\"EPERM\"}" },
		{ "file", "{\"pid\":16,\"op\":\"open\",\"syscall\":\"openat\",\"path\":\"/w/build/a.o\",\"flags\":\"0x241\"}" },
		{ "exec", "{\"pid\":17,\"ppid\":3,\"syscall\":\"execve\",\"cwd\":\"/w\",\"path\":\"/usr/bin/git\","
			  "\"argv\":[\"git\",\"commit\",\"-m\",\"fix the build\"],\"resolved\":\"/usr/bin/git\","
			  "\"sha256\":\"cc\",\"decision\":\"allow\"}" },
		{ "net", "{\"method\":\"CONNECT\",\"host\":\"HOST\",\"port\":443,\"via\":\"http\",\"bytes_out\":100,"
			 "\"bytes_in\":0,\"duration_ms\":1,\"decision\":\"deny\",\"reason\":\"no rule\"}" },
	};
	size_t k = sizeof shapes / sizeof shapes[0];
	*n = 1000;
	struct ev *v = calloc(*n, sizeof *v);
	for (size_t i = 0; i < *n; i++) {
		/* execs most often, as in a build */
		size_t s = i % 10 < 5 ? (i % 3 == 0 ? 0 : i % 3 == 1 ? 2 : 6) : i % 10 == 5 ? 1 : i % 10 == 6 ? 3
			 : i % 10 == 7 ? 5 : i % 10 == 8 ? 7 : 4;
		if (s >= k)
			s = 0;
		v[i].kind = shapes[s][0];
		v[i].fields = json_loads(shapes[s][1], 0, NULL);
		/* a refused connection: each to a host of its own */
		if (v[i].fields && json_object_get(v[i].fields, "host") &&
		    strcmp(json_string_value(json_object_get(v[i].fields, "host")), "HOST") == 0)
			json_object_set_new(v[i].fields, "host", json_sprintf("h%zu.example", i));
		if (!v[i].fields) {
			fprintf(stderr, "detect_rate: bad shape %zu\n", s);
			exit(1);
		}
	}
	return v;
}

static struct detect *detector(void)
{
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	if (drules_load(&rs, NULL, 0, &e) < 0) {
		fprintf(stderr, "detect_rate: %s\n", e.msg);
		exit(1);
	}
	/* no thresholds: nothing to act on here */
	struct detect_risk r = { .half_life_s = 600 };
	return detect_new(&rs, &(struct detect_env){ .workspace = "/w", .home = "/home/agent" }, &r);
}

static double through_log(const char *dir, const char *name, struct ev *v, size_t nv, size_t n,
			  bool with_detector)
{
	struct audit *a;
	struct werr e = { 0 };
	if (audit_open(&a, dir, name, &e) < 0) {
		fprintf(stderr, "detect_rate: %s\n", e.msg);
		exit(1);
	}
	struct detect *d = with_detector ? detector() : NULL;
	if (d)
		detect_attach(d, a);
	double t0 = now();
	for (size_t i = 0; i < n; i++)
		audit_emit_event(a, (struct event){ .kind = v[i % nv].kind,
						   .fields = json_incref(v[i % nv].fields) }, NULL);
	double t = now() - t0;
	audit_close(a);
	detect_free(d);
	return (double)n / t;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: detect_rate N DIR\n");
		return 2;
	}
	size_t n = strtoul(argv[1], NULL, 10), nv;
	struct ev *v = mix(&nv);
	struct detect *d = detector();
	double t0 = now(), t = t0;
	for (size_t i = 0; i < n; i++)
		detect_feed(d, v[i % nv].kind, v[i % nv].fields, i + 1, t0 + (double)i * 1e-5);
	t = now() - t0;
	printf("detector: %.0f events/s (%lu alerts)\n", (double)n / t, detect_alerts(d));
	detect_free(d);
	size_t nl = n / 5;
	printf("log: %.0f events/s\n", through_log(argv[2], "bench-log", v, nv, nl, false));
	printf("log+detector: %.0f events/s\n", through_log(argv[2], "bench-both", v, nv, nl, true));
	for (size_t i = 0; i < nv; i++)
		json_decref(v[i].fields);
	free(v);
	return 0;
}
