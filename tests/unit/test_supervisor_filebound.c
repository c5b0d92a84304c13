/* test_supervisor_filebound.c - unit tests of the record's bound on `file`
 * events (src/supervisor/filebound.c): under the burst every operation is
 * admitted; past it, the first operation on each path (access, op,
 * decision, paths) still is and its repeats are counted; past the bound on
 * names kept, new ones are counted too; the summary says how many, how
 * many repeats, and of which kinds; refusals have their own cap and
 * summary. */
#include <stdio.h>
#include <string.h>

#include "src/supervisor/filebound.h"
#include "check.h"

static struct ev_file op(const char *name, const char *path, const char *access)
{
	return (struct ev_file){ .pid = 1, .op = name, .npaths = 1, .paths = { path },
				 .access = access };
}

int main(void)
{
	struct filebound b;
	filebound_init(&b, 1);
	CHECK(b.names_cap == 100000UL && b.slots >= 2 * b.names_cap);
	b.names_cap = 8; /* small, to reach it */
	double now = 1000.0; /* the clock stands still: no token comes back */
	struct ev_file junk = op("open", "/ws/junk", "write");
	unsigned long in = 0;
	for (int i = 0; i < 1000; i++)
		in += filebound_admit(&b, &junk, false, now);
	CHECK(in == 1000); /* the burst */
	for (int i = 0; i < 500; i++)
		CHECK(!filebound_admit(&b, &junk, false, now)); /* repeats: counted */
	/* a new path past the bound: on the record; its repeat is not */
	struct ev_file pay = op("open", "/ws/payload.txt", "write");
	CHECK(filebound_admit(&b, &pay, false, now));
	CHECK(!filebound_admit(&b, &pay, false, now));
	/* the same path, another op or access: a key of its own */
	struct ev_file rm = op("unlink", "/ws/junk", "write");
	struct ev_file rd = op("open", "/ws/junk", "read");
	CHECK(filebound_admit(&b, &rm, false, now));
	CHECK(filebound_admit(&b, &rd, false, now));
	/* a partial path is not the absolute one of the same text */
	struct ev_file part = op("open", "junk", "write");
	CHECK(filebound_admit(&b, &part, false, now));
	part.partial[0] = true;
	CHECK(filebound_admit(&b, &part, false, now));
	/* 6 kept: 2 more new names, then the set is full */
	char p[32];
	struct ev_file more = op("mkdir", p, "write");
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "/ws/d%d", i);
		CHECK(filebound_admit(&b, &more, false, now) == (i < 2));
	}
	CHECK(b.names == 8);
	/* no summary before 10 s but at the end */
	struct ev_file sum;
	CHECK(!filebound_summary(&b, false, now + 1000.0, &sum));
	CHECK(filebound_summary(&b, false, now + 10001.0, &sum));
	CHECK(strcmp(sum.op, "summary") == 0 && strcmp(sum.decision, "allow") == 0);
	CHECK(sum.count == 503 && sum.has_repeats && sum.repeats == 501);
	CHECK(sum.nkinds == 2);
	CHECK(strcmp(sum.kind_names[0], "open") == 0 && sum.kind_counts[0] == 501);
	CHECK(strcmp(sum.kind_names[1], "mkdir") == 0 && sum.kind_counts[1] == 2);
	CHECK(strstr(sum.summary, "past the 8 the record keeps"));
	CHECK(!filebound_summary(&b, true, now, &sum)); /* the counts reset */

	/* refusals: their own cap; a new refused path past it still recorded */
	struct ev_file env = op("open", "/ws/.envrc", "write");
	for (int i = 0; i < 10000; i++)
		CHECK(filebound_admit(&b, &env, true, now));
	CHECK(!filebound_admit(&b, &env, true, now));
	CHECK(!filebound_admit(&b, &more, true, now)); /* the names kept are full */
	CHECK(filebound_summary(&b, true, now, &sum));
	/* .envrc was recorded with the set full: not kept, so its repeat is not told from a new one */
	CHECK(strcmp(sum.decision, "deny") == 0 && sum.count == 2 && sum.repeats == 0);
	CHECK(!filebound_summary(&b, true, now, &sum));
	filebound_free(&b);

	/* a roomier set: a refused path new past the cap is kept */
	filebound_init(&b, 2);
	CHECK(b.names_cap == 500000UL);
	for (int i = 0; i < 10000; i++)
		CHECK(filebound_admit(&b, &env, true, now));
	CHECK(!filebound_admit(&b, &env, true, now));
	struct ev_file hook = op("open", "/ws/.git/hooks/pre-commit", "write");
	CHECK(filebound_admit(&b, &hook, true, now));
	filebound_free(&b);
	return check_status_counted("supervisor-filebound");
}
