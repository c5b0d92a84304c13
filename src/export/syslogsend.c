/* syslogsend.c - the audit log's lines as syslog messages on the local
 * socket, without waiting for the daemon (syslogsend.h). */
#include "syslogsend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../common/sbuf.h"
#include "../common/util.h"
#include "dgram.h"

struct syslogsend {
	struct dgram *d;
	pid_t pid;
	struct sbuf msg;         /* the message being sent */
};

static struct dgram_target target_at(const char *path)
{
	return (struct dgram_target){
		.path = path, .name = "syslog", .noun = "syslog socket",
		.hint = "is a syslog daemon running? rsyslog, or systemd-journald's syslog "
			"socket; or leave out --log syslog",
	};
}

int syslogsend_probe(const char *path, struct werr *e)
{
	struct dgram_target t = target_at(path);
	return dgram_probe(&t, e);
}

int syslogsend_open(struct syslogsend **out, const char *path, struct werr *e)
{
	*out = NULL;
	struct dgram_target t = target_at(path);
	struct dgram *d;
	if (dgram_open(&d, &t, e) < 0)
		return -1;
	struct syslogsend *s = xcalloc(1, sizeof *s);
	s->d = d;
	s->pid = getpid();
	*out = s;
	return 0;
}

void syslogsend_line(void *ctx, const struct event *ev, const char *line, size_t n)
{
	struct syslogsend *s = ctx;
	int pri = LOG_AUTHPRIV | (strcmp(ev->kind, "alert") == 0 ? LOG_WARNING : LOG_INFO);
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm))
		snprintf(stamp, sizeof stamp, "Jan  1 00:00:00");
	s->msg.n = 0;
	sb_printf(&s->msg, "<%d>%s warden[%d]: ", pri, stamp, (int)s->pid);
	sb_put(&s->msg, line, n);
	dgram_send(s->d, s->msg.p, s->msg.n, ev->seq, ev->kind);
}

void syslogsend_end(struct syslogsend *s)
{
	dgram_end(s->d, SYSLOG_END_WAIT_MS);
}

json_t *syslogsend_stats(const struct syslogsend *s)
{
	return dgram_stats(s->d);
}

void syslogsend_free(struct syslogsend *s)
{
	if (!s)
		return;
	dgram_free(s->d, SYSLOG_END_WAIT_MS);
	free(s->msg.p);
	free(s);
}
