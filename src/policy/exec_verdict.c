/* exec_verdict.c - the exec rules' verdict on one file (exec_verdict.h). */
#include "exec_verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hash.h"
#include "../common/util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **sorted(const struct strv *v, size_t *n)
{
	*n = v->n;
	char **a = xcalloc(v->n + 1, sizeof *a);
	for (size_t i = 0; i < v->n; i++)
		a[i] = xstrdup(v->v[i]);
	qsort(a, v->n, sizeof *a, cmp_str);
	return a;
}

static bool listed(char *const *list, size_t n, const char *hex)
{
	return n && bsearch(&hex, list, n, sizeof *list, cmp_str);
}

static void free_list(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

void exec_verdict_init(struct exec_verdict_rules *r, const struct policy_exec *x)
{
	r->x = x;
	r->deny = sorted(&x->deny, &r->ndeny);
	r->allow = sorted(&x->allow, &r->nallow);
}

void exec_verdict_free(struct exec_verdict_rules *r)
{
	free_list(r->deny, r->ndeny);
	free_list(r->allow, r->nallow);
	r->deny = r->allow = NULL;
	r->ndeny = r->nallow = 0;
}

bool exec_verdict_in_deny(const struct exec_verdict_rules *r, const char *hex)
{
	return listed(r->deny, r->ndeny, hex);
}

bool exec_verdict_in_allow(const struct exec_verdict_rules *r, const char *hex)
{
	return listed(r->allow, r->nallow, hex);
}

/* A code hash is listed as "code:HEX" among the file hashes. */
static bool code_listed(char *const *list, size_t n, const char *hex)
{
	char key[5 + SHA256_HEX_LEN];
	snprintf(key, sizeof key, "code:%s", hex);
	return listed(list, n, key);
}

bool exec_verdict_code_in_deny(const struct exec_verdict_rules *r, const char *hex)
{
	return code_listed(r->deny, r->ndeny, hex);
}

bool exec_verdict_code_in_allow(const struct exec_verdict_rules *r, const char *hex)
{
	return code_listed(r->allow, r->nallow, hex);
}

enum exec_verdict exec_verdict_of(const struct exec_verdict_rules *r, const char *hex,
				  const char *nohash, bool immutable, const char *resolved,
				  char *why, size_t len)
{
	return exec_verdict_of_code(r, hex, NULL, nohash, immutable, resolved, why, len);
}

enum exec_verdict exec_verdict_of_code(const struct exec_verdict_rules *r, const char *hex,
				       const char *code, const char *nohash, bool immutable,
				       const char *resolved, char *why, size_t len)
{
	why[0] = '\0';
	if (hex && listed(r->deny, r->ndeny, hex)) {
		snprintf(why, len, "exec deny sha256:%s", hex);
		return EXEC_VERDICT_DENY;
	}
	if (hex && code && code_listed(r->deny, r->ndeny, code)) {
		snprintf(why, len, "exec deny code:%s", code);
		return EXEC_VERDICT_DENY;
	}
	if (!hex && r->ndeny) {
		snprintf(why, len, "the file cannot be hashed (%s), and exec deny rules need its hash",
			 nohash ? nohash : "no reason given");
		return EXEC_VERDICT_DENY;
	}
	if (r->x->default_deny) {
		bool ok = hex && (listed(r->allow, r->nallow, hex) ||
				  (code && code_listed(r->allow, r->nallow, code)));
		for (size_t i = 0; !ok && immutable && resolved && i < r->x->allow_dirs.n; i++)
			ok = path_is_within(resolved, r->x->allow_dirs.v[i]);
		if (!ok) {
			snprintf(why, len, "exec default deny: the file is not allowed as code%s%s%s",
				 hex ? " (sha256:" : "", hex ? hex : "", hex ? ")" : "");
			return EXEC_VERDICT_DENY_CODE;
		}
	}
	return EXEC_VERDICT_ALLOW;
}
