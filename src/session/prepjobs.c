/* prepjobs.c - setup run as jobs of a worker thread while the session's
 * main thread goes on (prepjobs.h). */
#include "prepjobs.h"

/* ---- the host identity ---- */

static int hostid_job_run(void *arg, struct werr *e)
{
	struct hostid_job *h = arg;
	return hostid_acquire(&h->ids, e);
}

void hostid_job_start(struct hostid_job *h)
{
	if (hostid_wanted())
		bgjob_start(&h->job, hostid_job_run, h);
}

void hostid_job_end(struct hostid_job *h)
{
	bgjob_join(&h->job);
	hostid_release(&h->ids);
}

int hostid_job_take(struct hostid_job *h, struct sandbox_spec *s, struct werr *e)
{
	if (h->taken)
		return 0;
	h->taken = true;
	if (bgjob_wait(&h->job, e) < 0)
		return -1;
	s->ids = h->ids;
	h->ids = HOSTID_NONE;
	return 0;
}

/* ---- the limits and the session's cgroups ---- */

/* The thread reads the policy's limits only, which nothing changes once
 * the session has begun; nothing else touches lim until it is joined. */
static int limits_job_run(void *arg, struct werr *e)
{
	(void)e;
	struct limits_job *j = arg;
	limits_create(j->lim, j->session);
	return 0;
}

void limits_job_start(struct limits_job *j, struct limits *lim, const struct policy *pol,
		      const struct limits_probe *probe, const char *session)
{
	limits_plan(lim, pol, probe);
	j->lim = lim;
	j->session = session;
	bgjob_start(&j->job, limits_job_run, j);
}

void limits_job_join(struct limits_job *j)
{
	bgjob_join(&j->job);
}

void limits_job_take(struct limits_job *j)
{
	bgjob_join(&j->job);
	if (j->lim)
		limits_notes(j->lim);
}
