/* parse_stream.c - the profile's `stream` lines: the audit events sent live
 * as the session runs (src/export/stream.h), to an OTLP/HTTP collector
 * (`stream otlp URL [ca FILE]`) and/or appended to a file as OCSF lines
 * (`stream ocsf FILE`). A later line of a kind replaces an earlier one. */
#include "parse.h"

#include <string.h>

/* FILE of token i: an absolute path or ~/..., expanded into *out. */
static int stream_path(struct parser *ps, const struct line *l, size_t i, const char *d, char **out)
{
	const char *t = l->tok[i];
	if (t[0] != '/' && t[0] != '~')
		return pol_lerr(ps->e, 0, l, l->off[i], "%s: the file must be an absolute path or start "
				"with ~/: '%.200s'", d, t);
	return pol_expand_path(ps, l, l->off[i], d, t, out);
}

static int stream_otlp(struct parser *ps, const struct line *l)
{
	const char *u = l->tok[2];
	if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
		return pol_lerr(ps->e, 0, l, l->off[2], "stream otlp: '%.200s' is not an http:// or https:// URL", u);
	if (strlen(u) > 2048 || strpbrk(u, " \t\r\n\"<>\\^`{|}"))
		return pol_lerr(ps->e, 0, l, l->off[2], "stream otlp: not a valid URL: '%.200s'", u);
	char *ca = NULL;
	if (l->ntok > 3) {
		if (l->ntok != 5 || strcmp(l->tok[3], "ca") != 0)
			return pol_lerr(ps->e, 0, l, l->off[3], "stream otlp: after the URL only 'ca FILE'");
		if (strncmp(u, "https://", 8) != 0)
			return pol_lerr(ps->e, 0, l, l->off[3], "stream otlp: 'ca FILE' is for an https:// URL");
		if (stream_path(ps, l, 4, "stream otlp ca", &ca) < 0)
			return -1;
	}
	struct policy_stream *s = &ps->p->stream;
	free(s->otlp_url);
	free(s->otlp_ca);
	s->otlp_url = xstrdup(u);
	s->otlp_ca = ca;
	return 0;
}

/* `stream otlp URL [ca FILE] | stream ocsf FILE` */
int pol_do_stream(struct parser *ps, const struct line *l)
{
	const char *w = l->tok[1];
	if (strcmp(w, "otlp") == 0)
		return stream_otlp(ps, l);
	if (strcmp(w, "ocsf") != 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "stream: unknown target '%.200s' (expected otlp or ocsf)", w);
	if (pol_want_tokens(ps, l, 3, "stream ocsf") < 0)
		return -1;
	char *f = NULL;
	if (stream_path(ps, l, 2, "stream ocsf", &f) < 0)
		return -1;
	free(ps->p->stream.ocsf_file);
	ps->p->stream.ocsf_file = f;
	return 0;
}
