/* endpoint.c - reading where a client's API is: a base URL turned into the
 * allow pattern "host:port", and Codex's config.toml as far as warden reads
 * it (the provider, its base_url and env_key, the lines to import into new
 * state). Both read text the user wrote; both have a fuzz target
 * (tests/fuzz/fuzz_agentconf.c). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/lines.h"
#include "../common/sbuf.h"
#include "../net/rules.h"
#include "agents.h"

/* ---- base URLs ----------------------------------------------------------- */

int agent_url_pattern(const char *url, char **pattern, struct werr *e)
{
	uint16_t port;
	const char *rest;
	if (strncasecmp(url, "https://", 8) == 0) {
		port = 443;
		rest = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		port = 80;
		rest = url + 7;
	} else {
		return werr_set(e, 0, "\"%.200s\" is not an http:// or https:// URL", url);
	}
	size_t alen = strcspn(rest, "/?#");
	const char *at = memchr(rest, '@', alen);
	if (at) /* user:password@ - the host comes after it */
		alen -= (size_t)(at + 1 - rest), rest = at + 1;
	const char *hend = rest + alen;
	const char *colon = NULL;
	if (*rest == '[') {
		const char *rb = memchr(rest, ']', alen);
		if (!rb)
			return werr_set(e, 0, "\"%.200s\": unclosed '[' in the host", url);
		if (rb + 1 < hend) {
			if (rb[1] != ':')
				return werr_set(e, 0, "\"%.200s\": junk after the IPv6 address", url);
			colon = rb + 1;
		}
	} else {
		colon = memchr(rest, ':', alen);
	}
	size_t hlen = colon ? (size_t)(colon - rest) : alen;
	if (colon && net_port_parse(colon + 1, (size_t)(hend - colon - 1), &port) < 0)
		return werr_set(e, 0, "\"%.200s\": bad port", url);
	struct net_host h;
	const char *why = NULL;
	if (hlen == 0 || net_host_parse(&h, rest, hlen, &why) < 0)
		return werr_set(e, 0, "\"%.200s\": bad host (%s)", url, why ? why : "empty");
	char hp[NET_HOST_PORT_MAX];
	*pattern = xstrdup(net_host_port(&h, port, hp, sizeof hp));
	return 0;
}

/* ---- Codex's config.toml: model_provider and its base_url ----------------- */

/* A TOML basic or literal string at s (after '='), on one line. */
static char *toml_string(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || (*s != '"' && *s != '\''))
		return NULL;
	char q = *s++;
	struct sbuf { char *v; size_t n; } b = { xmalloc((size_t)(end - s) + 1), 0 };
	for (; s < end && *s != q; s++) {
		if (q == '"' && *s == '\\') {
			if (++s >= end)
				break;
			switch (*s) {
			case '"': case '\\': case '/': b.v[b.n++] = *s; break;
			case 't': b.v[b.n++] = '\t'; break;
			default: free(b.v); return NULL; /* not in a URL or a name */
			}
			continue;
		}
		b.v[b.n++] = *s;
	}
	if (s >= end) {
		free(b.v);
		return NULL;
	}
	for (s++; s < end && (*s == ' ' || *s == '\t'); s++)
		;
	if (s < end && *s != '#') {
		free(b.v);
		return NULL;
	}
	b.v[b.n] = '\0';
	return b.v;
}

/* v as a TOML basic string, quotes included. */
static char *toml_quote(const char *v)
{
	char *out = xmalloc(strlen(v) * 2 + 3), *o = out;
	*o++ = '"';
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			*o++ = '\\', *o++ = *v;
		else if (*v == '\t')
			*o++ = '\\', *o++ = 't';
		else
			*o++ = *v;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

/* "key = value" at s: the key (bare or quoted), *val after the '='. */
static bool toml_key(const char *s, const char *end, const char *key, const char **val)
{
	size_t kl = strlen(key);
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	bool quoted = s < end && *s == '"';
	if (quoted)
		s++;
	if ((size_t)(end - s) < kl || memcmp(s, key, kl) != 0)
		return false;
	s += kl;
	if (quoted && (s >= end || *s++ != '"'))
		return false;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s != '=')
		return false;
	*val = s + 1;
	return true;
}

/* The table a header line names, with its dotted parts joined by '.' and
 * quotes dropped: "[model_providers.\"my gw\"]" gives "model_providers.my gw". */
static char *toml_table(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s >= end || *s != '[')
		return NULL;
	s++;
	char *out = xmalloc((size_t)(end - s) + 1);
	size_t n = 0;
	bool q = false;
	for (; s < end; s++) {
		if (*s == '"') {
			q = !q;
			continue;
		}
		if (!q && *s == ']')
			break;
		if (!q && (*s == ' ' || *s == '\t'))
			continue;
		out[n++] = *s;
	}
	out[n] = '\0';
	return out;
}

/* The keys of a provider table that say where and how to talk to it;
 * anything else (http_headers may hold a token) is not imported. */
static const char *const provider_keys[] = {
	"name", "base_url", "env_key", "wire_api", "requires_openai_auth",
	"request_max_retries", "stream_max_retries", "stream_idle_timeout_ms",
};

static const char *provider_key(const char *s, const char *end, const char **val)
{
	for (size_t i = 0; i < ARRAY_LEN(provider_keys); i++)
		if (toml_key(s, end, provider_keys[i], val))
			return provider_keys[i];
	return NULL;
}

/* A bare value (a number or a boolean) at s, alone on its line but for a
 * comment: its text, else NULL. */
static char *toml_bare(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	size_t n = 0;
	while (s + n < end && (isalnum((unsigned char)s[n]) || (s[n] && strchr("_.+-", s[n]))))
		n++;
	const char *t = s + n;
	while (t < end && (*t == ' ' || *t == '\t'))
		t++;
	if (n == 0 || (t < end && *t != '#'))
		return NULL;
	return xasprintf("%.*s", (int)n, s);
}

void codex_conf_free(struct codex_conf *c)
{
	free(c->provider);
	free(c->base_url);
	free(c->env_key);
	free(c->import_top);
	free(c->import_tables);
	*c = (struct codex_conf){ 0 };
}

/* The top-level keys warden reads and imports: where the API is. */
static const char *const top_keys[] = { "model_provider", "model", "openai_base_url" };

static const char *top_key(const char *s, const char *end, const char **val)
{
	for (size_t i = 0; i < ARRAY_LEN(top_keys); i++)
		if (toml_key(s, end, top_keys[i], val))
			return top_keys[i];
	return NULL;
}

/* A provider's table ([model_providers.NAME]): its name, base_url,
 * env_key and the lines to import. */
struct prov {
	char *name, *url, *key;
	struct strv lines;
};

/* agent_codex_config's walk of the file, line by line. */
struct codex_walk {
	struct codex_conf *c;
	char *table;                 /* the current table's name; NULL: the top */
	char *openai_url;            /* openai_base_url */
	struct prov *pv;
	size_t npv;
	struct sbuf top;             /* the top-level lines to import */
	struct werr *e;
};

/* A top-level key warden imports (top_keys): kept, and written again. */
static int codex_top_key(struct codex_walk *w, const char *key, const char *val, const char *le,
			 unsigned long lineno)
{
	_cleanup_free_ char *v = toml_string(val, le);
	if (!v)
		return werr_set(w->e, 0, "line %lu: %s is not a one-line string", lineno, key);
	char **slot = key[0] == 'm' && key[5] == '_' ? &w->c->provider
		      : key[0] == 'o' ? &w->openai_url : NULL;
	if (slot) {
		free(*slot);
		*slot = xstrdup(v);
	}
	_cleanup_free_ char *q = toml_quote(v);
	_cleanup_free_ char *line = xasprintf("%s = %s\n", key, q);
	sb_puts(&w->top, line);
	return 0;
}

/* A key of the provider's table being read (provider_key). */
static int codex_provider_key(struct prov *pr, const char *key, const char *val, const char *le,
			      unsigned long lineno, struct werr *e)
{
	const char *v0 = val;
	while (v0 < le && (*v0 == ' ' || *v0 == '\t'))
		v0++;
	bool str = v0 < le && (*v0 == '"' || *v0 == '\'');
	_cleanup_free_ char *sv = str ? toml_string(val, le) : toml_bare(val, le);
	if (str && !sv)
		return werr_set(e, 0, "line %lu: %s is not a one-line string", lineno, key);
	if (strcmp(key, "base_url") == 0 || strcmp(key, "env_key") == 0) {
		char **slot = key[0] == 'b' ? &pr->url : &pr->key;
		free(*slot);
		*slot = str ? xstrdup(sv) : NULL;
	}
	/* written again by warden, never copied as it stands:
	 * one key, one value, one line */
	if (sv) {
		_cleanup_free_ char *q = str ? toml_quote(sv) : xstrdup(sv);
		strv_push_owned(&pr->lines, xasprintf("%s = %s", key, q));
	}
	return 0;
}

static bool in_provider(const struct codex_walk *w)
{
	return w->table && w->npv && strncmp(w->table, "model_providers.", 16) == 0 &&
	       strcmp(w->table + 16, w->pv[w->npv - 1].name) == 0;
}

static int codex_line(const char *p, size_t n, unsigned long lineno, void *ctx)
{
	struct codex_walk *w = ctx;
	const char *le = p + n;
	const char *val, *key;
	char *t = toml_table(p, le);
	if (t) {
		free(w->table);
		w->table = t;
		if (strncmp(t, "model_providers.", 16) == 0 && t[16]) {
			w->pv = xrealloc(w->pv, (w->npv + 1) * sizeof *w->pv);
			w->pv[w->npv++] = (struct prov){ .name = xstrdup(t + 16) };
		}
		return 0;
	}
	if (!w->table && (key = top_key(p, le, &val)))
		return codex_top_key(w, key, val, le, lineno);
	if (in_provider(w) && (key = provider_key(p, le, &val)))
		return codex_provider_key(&w->pv[w->npv - 1], key, val, le, lineno, w->e);
	return 0;
}

/* The chosen provider's table (want) into c and, written again, tables;
 * every provider freed. */
static void codex_pick(struct codex_walk *w, const char *want, bool ok, struct sbuf *tables)
{
	struct codex_conf *c = w->c;
	for (size_t i = 0; i < w->npv; i++) {
		struct prov *pv = &w->pv[i];
		if (ok && strcmp(pv->name, want) == 0) {
			free(c->base_url);
			free(c->env_key);
			c->base_url = pv->url ? xstrdup(pv->url) : NULL;
			c->env_key = pv->key ? xstrdup(pv->key) : NULL;
			_cleanup_free_ char *qn = toml_quote(pv->name);
			_cleanup_free_ char *head = xasprintf("\n[model_providers.%s]\n", qn);
			sb_puts(tables, head);
			for (size_t k = 0; k < pv->lines.n; k++) {
				sb_puts(tables, pv->lines.v[k]);
				sb_puts(tables, "\n");
			}
		}
		free(pv->name);
		free(pv->url);
		free(pv->key);
		strv_free(&pv->lines);
	}
	free(w->pv);
}

int agent_codex_config(const char *text, size_t len, struct codex_conf *c, struct werr *e)
{
	*c = (struct codex_conf){ 0 };
	struct codex_walk w = { .c = c, .e = e };
	struct sbuf tables = { 0 };
	int r = lines_each(text, len, codex_line, &w);
	free(w.table);
	/* the built-in provider is "openai", reached at openai_base_url */
	const char *want = c->provider ? c->provider : "openai";
	if (strcmp(want, "openai") == 0 && w.openai_url)
		c->base_url = xstrdup(w.openai_url);
	free(w.openai_url);
	codex_pick(&w, want, r == 0, &tables);
	if (r < 0) {
		free(w.top.p);
		free(tables.p);
		codex_conf_free(c);
		return r;
	}
	c->import_top = w.top.p;
	c->import_tables = tables.p;
	return 0;
}

char *agent_codex_merge(const char *seed, const struct codex_conf *c)
{
	/* top-level keys must come before the first table */
	const char *nlb = strstr(seed, "\n[");
	const char *first = seed[0] == '[' ? seed : nlb ? nlb + 1 : seed + strlen(seed);
	struct sbuf b = { 0 };
	_cleanup_free_ char *head = xasprintf("%.*s", (int)(first - seed), seed);
	sb_puts(&b, head);
	if (c->import_top) {
		sb_puts(&b, "\n# Imported by warden from your own ~/.codex/config.toml:\n");
		sb_puts(&b, c->import_top);
		sb_puts(&b, "\n");
	}
	sb_puts(&b, first);
	if (c->import_tables) {
		sb_puts(&b, "\n# Imported by warden from your own ~/.codex/config.toml:");
		sb_puts(&b, c->import_tables);
	}
	return b.p ? b.p : xstrdup("");
}
