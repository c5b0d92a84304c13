/* cisummary.c - the CI summary (cisummary.h): a subscriber of the event
 * stream counts each refused thing (an event whose decision is deny), each
 * alert by rule and severity, the risk score's peak (the `risk` events),
 * each destination of warden's proxy and each program executed (by its
 * name), each `action` (freeze, kill); at the end they are written as
 * Markdown tables, the longest lists cut at CI_ROWS rows. */
#include "cisummary.h"

#include <stdlib.h>
#include <string.h>

#include "../common/shown.h"
#include "../common/util.h"

#define CI_KEEP 256 /* distinct keys kept per table; more only counted */
#define CI_ROWS 20  /* rows written per table */

struct row {
	char *key, *note;
	unsigned long n;
};

struct table {
	struct row v[CI_KEEP];
	size_t n;
	unsigned long total, unlisted;
};

struct cisummary {
	char *log, *id, *workspace, *artifacts;
	struct table refused, alerts, dests, execs, actions;
	unsigned long by_sev[4];
	double risk_peak;
};

static const char *const sev_words[] = { "low", "medium", "high", "critical" };

int cisummary_severity(const char *word)
{
	for (int i = 0; i < 4; i++)
		if (word && strcmp(word, sev_words[i]) == 0)
			return i;
	return -1;
}

struct cisummary *cisummary_new(void)
{
	return xcalloc(1, sizeof(struct cisummary));
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].note);
	}
}

void cisummary_free(struct cisummary *c)
{
	if (!c)
		return;
	table_free(&c->refused);
	table_free(&c->alerts);
	table_free(&c->dests);
	table_free(&c->execs);
	table_free(&c->actions);
	free(c->log);
	free(c->id);
	free(c->workspace);
	free(c->artifacts);
	free(c);
}

/* Count key (taken) in t, with note (taken) kept from its first time. */
static void add(struct table *t, char *key, char *note)
{
	t->total++;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].key, key) == 0) {
			t->v[i].n++;
			free(key);
			free(note);
			return;
		}
	if (t->n == CI_KEEP) {
		t->unlisted++;
		free(key);
		free(note);
		return;
	}
	t->v[t->n++] = (struct row){ .key = key, .note = note, .n = 1 };
}

static const char *str(const json_t *f, const char *k)
{
	const char *v = json_string_value(json_object_get(f, k));
	return v ? v : "";
}

static char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return xstrdup(b ? b + 1 : path);
}

/* What a refused event was about, in a few words. */
static char *subject_of(const struct event *ev, const json_t *f)
{
	if (strcmp(ev->kind, "net") == 0) {
		const char *h = *str(f, "host") ? str(f, "host") : *str(f, "address") ? str(f, "address")
											  : str(f, "path");
		long long port = json_integer_value(json_object_get(f, "port"));
		return port ? xasprintf("net %s:%lld", h, port) : xasprintf("net %s", h);
	}
	if (strcmp(ev->kind, "approval") == 0)
		return xasprintf("%s question: %s", str(f, "kind"), str(f, "summary"));
	const char *what = *str(f, "path") ? str(f, "path") : *str(f, "syscall") ? str(f, "syscall")
									     : str(f, "what");
	return xasprintf("%s %s", ev->kind, what);
}

static void on_net(struct cisummary *c, const json_t *f)
{
	const char *host = str(f, "host");
	if (!*host || strcmp(str(f, "direction"), "inbound") == 0)
		return;
	add(&c->dests, xasprintf("%s:%lld", host, json_integer_value(json_object_get(f, "port"))),
	    xstrdup(str(f, "decision")));
}

static void on_alert(struct cisummary *c, const json_t *f)
{
	const char *sev = str(f, "severity");
	int s = cisummary_severity(sev);
	if (s >= 0)
		c->by_sev[s]++;
	const char *d = *str(f, "detail") ? str(f, "detail") : *str(f, "path") ? str(f, "path")
									      : str(f, "host");
	add(&c->alerts, xasprintf("%s (%s)", str(f, "rule"), *sev ? sev : "-"), xstrdup(d));
}

static int on_event(void *ctx, const struct event *ev, struct werr *e)
{
	(void)e;
	struct cisummary *c = ctx;
	const json_t *f = ev->fields;
	if (!f)
		return 0;
	if (strcmp(ev->kind, "session.start") == 0 && !c->workspace && *str(f, "workspace"))
		c->workspace = xstrdup(str(f, "workspace"));
	else if (strcmp(ev->kind, "exec") == 0 && *str(f, "path"))
		add(&c->execs, base_name(str(f, "path")), NULL);
	else if (strcmp(ev->kind, "net") == 0)
		on_net(c, f);
	else if (strcmp(ev->kind, "alert") == 0)
		on_alert(c, f);
	else if (strcmp(ev->kind, "risk") == 0) {
		double s = json_number_value(json_object_get(f, "score"));
		if (s > c->risk_peak)
			c->risk_peak = s;
	} else if (strcmp(ev->kind, "action") == 0)
		add(&c->actions, xasprintf("%s by %s", str(f, "action"), str(f, "by")),
		    xstrdup(str(f, "reason")));
	/* a refused answer (approval) is counted by the operation it refused,
	 * which has its own event */
	if (strcmp(str(f, "decision"), "deny") == 0 && strcmp(ev->kind, "approval") != 0)
		add(&c->refused, subject_of(ev, f), xstrdup(str(f, "reason")));
	return 0;
}

void cisummary_attach(struct cisummary *c, struct audit *a)
{
	const char *path = audit_path(a), *base = strrchr(path, '/');
	c->log = xstrdup(path);
	c->id = xstrdup(base ? base + 1 : path);
	char *dot = strstr(c->id, ".jsonl");
	if (dot)
		*dot = '\0';
	audit_subscribe(a, on_event, c);
}

void cisummary_set_risk_peak(struct cisummary *c, double peak)
{
	if (peak > c->risk_peak)
		c->risk_peak = peak;
}

const char *cisummary_log(const struct cisummary *c) { return c->log; }
const char *cisummary_id(const struct cisummary *c) { return c->id; }
const char *cisummary_workspace(const struct cisummary *c) { return c->workspace; }

void cisummary_set_artifacts(struct cisummary *c, const char *dir)
{
	free(c->artifacts);
	c->artifacts = xstrdup(dir);
}

const char *cisummary_artifacts(const struct cisummary *c) { return c->artifacts; }

int cisummary_max_severity(const struct cisummary *c)
{
	for (int i = 3; i >= 0; i--)
		if (c->by_sev[i])
			return i;
	return -1;
}

/* Markdown table cells: no newline (a space), no '|', no backquote, and
 * what would act on a terminal or reorder what a reader sees shown as
 * shown.h shows it (a name the agent chose, with an escape sequence or a
 * bidirectional control in it, reads as \xHH or \uHHHH, as `warden log
 * show` shows it, on the runner's page and on a terminal printing the
 * summary alike). */
static void cell(FILE *f, const char *s)
{
	_cleanup_free_ char *flat = xstrdup(s ? s : "");
	for (char *p = flat; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	_cleanup_free_ char *t = text_shown(flat);
	for (const char *p = t; *p; p++)
		fputs(*p == '|' ? "\\|" : *p == '`' ? "'" : (char[2]){ *p, 0 }, f);
}

/* A cell's text in a code span (empty: nothing), so that no Markdown in
 * it (emphasis, a link, an image, HTML that closes the table) renders: an
 * alert's `what` quotes what the agent wrote, a git config's section
 * name, say. */
static void code_cell(FILE *f, const char *s)
{
	if (!s || !*s)
		return;
	fputc('`', f);
	cell(f, s);
	fputc('`', f);
}

/* A fenced block of text, each line shown as a cell's text is (its
 * newline kept), no line that could close the fence early. */
static void block(FILE *f, const char *text)
{
	fputs("```\n", f);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		_cleanup_free_ char *line = xasprintf("%.*s", (int)n, p);
		_cleanup_free_ char *t = text_shown(line);
		fprintf(f, "%s%s\n", strncmp(t, "```", 3) == 0 ? " " : "", t);
		p += n + (p[n] == '\n');
	}
	fputs("```\n", f);
}

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->key, y->key);
}

static void table_write(FILE *f, const char *title, const struct table *t, const char *head)
{
	fprintf(f, "\n### %s (%lu)\n\n", title, t->total);
	if (!t->n) {
		fputs("None.\n", f);
		return;
	}
	struct row sorted[CI_KEEP];
	memcpy(sorted, t->v, t->n * sizeof *sorted);
	qsort(sorted, t->n, sizeof *sorted, by_count);
	bool notes = strchr(head, '|') != NULL;
	fprintf(f, "| %s | times |\n| --- |%s --- |\n", head, notes ? " --- |" : "");
	for (size_t i = 0; i < t->n && i < CI_ROWS; i++) {
		fputs("| ", f);
		code_cell(f, sorted[i].key);
		fputs(" | ", f);
		if (notes) {
			code_cell(f, sorted[i].note);
			fputs(" | ", f);
		}
		fprintf(f, "%lu |\n", sorted[i].n);
	}
	if (t->n > CI_ROWS || t->unlisted)
		fprintf(f, "\n(and %zu more: see the log)\n", t->n - (t->n > CI_ROWS ? CI_ROWS : t->n) +
								   (size_t)t->unlisted);
}

void cisummary_write(const struct cisummary *c, const struct cisummary_end *x, FILE *f)
{
	fprintf(f, "## warden session %s\n\n", c->id ? c->id : "(none)");
	if (x->failed_on)
		fprintf(f, "- exit status: %d (an alert at or above --fail-on; the command's own: "
			"%d)\n", x->status, x->command_status);
	else
		fprintf(f, "- exit status: %d%s\n", x->status, x->error ? " (**warden failed**)" : "");
	if (x->error) {
		fputs("- warden's error: ", f);
		code_cell(f, x->error);
		fputc('\n', f);
	}
	fprintf(f, "- alerts: %lu (critical %lu, high %lu, medium %lu, low %lu); risk peak %.1f\n",
		c->alerts.total, c->by_sev[3], c->by_sev[2], c->by_sev[1], c->by_sev[0], c->risk_peak);
	if (x->fail_on)
		fprintf(f, "- --fail-on %s: %s\n", x->fail_on,
			x->failed_on ? "**failed**"
			: x->not_evaluated ? "**not evaluated** (exit status 125: warden failed)" : "passed");
	fprintf(f, "- refusals: %lu\n", c->refused.total);
	if (x->verify)
		fprintf(f, "- audit log: %s (`warden log verify`: %s)\n", x->verified ? "verified" : "**NOT verified**",
			x->verify);
	if (x->artifacts)
		fprintf(f, "- artifacts: `%s`\n", x->artifacts);
	else
		fputs("- artifacts: none (warden refused their directory, or stopped before it had "
		      "checked it)\n", f);
	table_write(f, "Alerts", &c->alerts, "rule (severity) | what");
	table_write(f, "Refusals", &c->refused, "what | reason");
	table_write(f, "Actions", &c->actions, "action | reason");
	table_write(f, "Destinations", &c->dests, "host:port | decision");
	table_write(f, "Execs by program", &c->execs, "program");
	fputs("\n### Workspace changes\n\n", f);
	if (x->changes && *x->changes)
		block(f, x->changes);
	if (x->diffstat && *x->diffstat) {
		fputs("\n`git diff --stat HEAD` (changes not committed, the session's and any before):\n\n", f);
		block(f, x->diffstat);
	}
	if ((!x->changes || !*x->changes) && (!x->diffstat || !*x->diffstat))
		fputs("None recorded (checkpoints off, and not a git repository with a commit).\n", f);
}
