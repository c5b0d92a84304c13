/* format.c - display-safe strings and one-line event summaries (see
 * format.h): what `warden log` prints of fields a sandboxed program chose. */
#include "format.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../common/shown.h"
#include "../common/util.h"
#include "escape.h"
#include "events.h"
#include "../common/sbuf.h"

static char *display(const char *str, size_t max, bool may_quote)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len = strlen((const char *)s);
	struct sbuf b = { 0 };
	bool quote = !*s;
	size_t shown = 0;
	sb_put(&b, "", 0);
	for (size_t i = 0; s[i];) {
		if (shown == max) {
			sb_puts(&b, "...");
			break;
		}
		unsigned cp;
		size_t n = utf8_seq(s + i, len - i, &cp);
		char esc[16];
		if (n == 0) {
			snprintf(esc, sizeof esc, "\\x%02x", s[i]);
			sb_puts(&b, esc);
			quote = true;
			n = 1;
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			sb_puts(&b, cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : "\\r");
			quote = true;
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", cp);
			sb_puts(&b, esc);
			quote = true;
		} else if (cp_unsafe(cp)) {
			snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
			sb_puts(&b, esc);
			quote = true;
		} else if (cp == '"' || cp == '\\') {
			sb_puts(&b, cp == '"' ? "\\\"" : "\\\\");
			quote = true;
		} else {
			if (cp < 0x80 && strchr(" '=[]{}#;$`|&<>()*?!~", (int)cp))
				quote = true;
			sb_put(&b, (const char *)s + i, n);
		}
		i += n;
		shown++;
	}
	if (!quote || !may_quote)
		return sb_take(&b);
	struct sbuf q = { 0 };
	sb_puts(&q, "\"");
	sb_puts(&q, b.p);
	sb_puts(&q, "\"");
	free(b.p);
	return sb_take(&q);
}

char *audit_display_string(const char *s, size_t max)
{
	return display(s, max, true);
}

char *audit_display_plain(const char *s, size_t max)
{
	return display(s, max, false);
}

#define DISPLAY_STR_MAX 160
#define DISPLAY_ITEMS_MAX 64

char *audit_display_argv(json_t *argv, bool esc)
{
	struct sbuf b = { 0 };
	sb_put(&b, "", 0);
	size_t i;
	json_t *v;
	json_array_foreach(argv, i, v) {
		if (i == DISPLAY_ITEMS_MAX) {
			sb_printf(&b, " ...(%zu more)", json_array_size(argv) - i);
			break;
		}
		if (i)
			sb_puts(&b, " ");
		if (json_is_string(v)) {
			char *u = esc ? utf8_unescape(json_string_value(v), NULL) : NULL;
			char *s = audit_display_string(u ? u : json_string_value(v), DISPLAY_STR_MAX);
			sb_puts(&b, s);
			free(s);
			free(u);
		} else {
			sb_puts(&b, "?");
		}
	}
	return sb_take(&b);
}

/* esc: v is a field its object lists in "escaped" (escape.h), or a string
 * of one: shown as the bytes it stands for. */
static void put_value(struct sbuf *b, json_t *v, int depth, bool esc)
{
	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t n = strlen(s);
		char *d, *u = esc ? utf8_unescape(s, NULL) : NULL;
		if (u)
			d = audit_display_string(u, DISPLAY_STR_MAX);
		else if (n == 64 && strspn(s, "0123456789abcdef") == 64)
			d = audit_display_string(s, 16); /* a digest: its head is enough here */
		else
			d = audit_display_string(s, DISPLAY_STR_MAX);
		sb_puts(b, d);
		free(d);
		free(u);
		break;
	}
	case JSON_INTEGER:
		sb_printf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL: {
		char tmp[64];
		snprintf(tmp, sizeof tmp, "%.3f", json_real_value(v));
		if (strchr(tmp, '.') && !strpbrk(tmp, "eni")) {
			size_t n = strlen(tmp);
			while (tmp[n - 1] == '0')
				tmp[--n] = '\0';
			if (tmp[n - 1] == '.')
				tmp[--n] = '\0';
		}
		sb_puts(b, tmp);
		break;
	}
	case JSON_TRUE: sb_puts(b, "true"); break;
	case JSON_FALSE: sb_puts(b, "false"); break;
	case JSON_NULL: sb_puts(b, "null"); break;
	case JSON_ARRAY: {
		if (depth > 3) {
			sb_puts(b, "[...]");
			break;
		}
		sb_puts(b, "[");
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (i == DISPLAY_ITEMS_MAX) {
				sb_printf(b, " ...(%zu more)", json_array_size(v) - i);
				break;
			}
			if (i)
				sb_puts(b, " ");
			put_value(b, x, depth + 1, esc);
		}
		sb_puts(b, "]");
		break;
	}
	case JSON_OBJECT: {
		if (depth > 3) {
			sb_puts(b, "{...}");
			break;
		}
		sb_puts(b, "{");
		const char *k;
		json_t *x;
		size_t i = 0;
		json_object_foreach(v, k, x) {
			if (i == DISPLAY_ITEMS_MAX) {
				sb_printf(b, " ...(%zu more)", json_object_size(v) - i);
				break;
			}
			if (i++)
				sb_puts(b, " ");
			char *dk = audit_display_string(k, 64);
			sb_puts(b, dk);
			free(dk);
			sb_puts(b, "=");
			put_value(b, x, depth + 1, json_is_escaped(v, k));
		}
		sb_puts(b, "}");
		break;
	}
	}
}

/* Per kind: the fields shown first, and fields too noisy for one line. */
static const struct {
	const char *event;
	const char *first[6];
	const char *hide[5];
} layouts[] = {
	{ "session.start", { "argv", "workspace", "profiles" }, { "version", "policy_digest", "kernel", "uid", "limits" } },
	{ "session.end", { "exit", "duration_ms", "error", "counts" }, { 0 } },
	{ "exec", { "decision", "pid", "ppid", "argv", "path" }, { 0 } },
	{ "file", { "decision", "pid", "op", "path" }, { 0 } },
	{ "net", { "decision", "host", "port", "method", "status" }, { 0 } },
	{ "syscall", { "decision", "pid", "name" }, { 0 } },
	{ "signal", { "decision", "signal", "to", "pid", "to_pid" }, { 0 } },
	{ "approval", { "decision", "by" }, { 0 } },
	{ "tool", { "phase", "id", "decision", "tool", "what" }, { 0 } },
	{ "alert", { "rule", "path" }, { 0 } },
	{ "limit", { "kind", "limit", "detail" }, { 0 } },
	{ "action", { "action", "by", "how", "reason" }, { 0 } },
};

static bool in_list(const char *const *list, size_t n, const char *k)
{
	for (size_t i = 0; i < n && list[i]; i++)
		if (strcmp(list[i], k) == 0)
			return true;
	return false;
}

static void put_field(struct sbuf *b, const char *k, json_t *v, bool esc)
{
	if (b->n)
		sb_puts(b, " ");
	char *dk = audit_display_string(k, 64);
	sb_puts(b, dk);
	free(dk);
	sb_puts(b, "=");
	put_value(b, v, 0, esc);
}

char *audit_event_summary(json_t *ev)
{
	struct sbuf b = { 0 };
	if (!json_is_object(ev))
		return xstrdup("");
	const char *kind = json_string_value(json_object_get(ev, "event"));
	const char *const *first = NULL, *const *hide = NULL;
	size_t nfirst = 0, nhide = 0;
	for (size_t i = 0; kind && i < ARRAY_LEN(layouts); i++) {
		if (strcmp(layouts[i].event, kind) == 0) {
			first = layouts[i].first;
			nfirst = ARRAY_LEN(layouts[i].first);
			hide = layouts[i].hide;
			nhide = ARRAY_LEN(layouts[i].hide);
		}
	}
	for (size_t i = 0; i < nfirst && first[i]; i++) {
		json_t *v = json_object_get(ev, first[i]);
		if (v)
			put_field(&b, first[i], v, json_is_escaped(ev, first[i]));
	}
	const char *k;
	json_t *v;
	json_object_foreach(ev, k, v) {
		if (audit_is_header_key(k) || in_list(first, nfirst, k) ||
		    in_list(hide, nhide, k))
			continue;
		put_field(&b, k, v, json_is_escaped(ev, k));
	}
	return sb_take(&b);
}

