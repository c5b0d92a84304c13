/* sshconfig.c - the ssh client's ~/.ssh/config inside (sshconfig.h): the
 * user's host aliases carried (their HostName, Port and User only), then
 * warden's proxy and its no-key-files line. */
#include "sshconfig.h"

#include <ctype.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../common/sbuf.h"
#include "../common/util.h"

/* A file that is never there: naming it stops ssh from trying its default
 * identities (~/.ssh/id_*), and says why to whoever reads the file. */
#define NO_KEY_FILE "~/.ssh/no-key-files-here-keys-come-from-the-agent"

/* The user's ~/.ssh/config read at most this far. */
#define SSH_CONFIG_MAX (1u << 20)

/* One Host block of the user's being carried. */
struct block {
	char host[512]; /* its patterns, one space between */
	char name[256], port[8], user[64];
	bool skip;      /* a pattern warden does not carry: the block left out */
};

/* s[0..n) holds only bytes of set (and is not empty, not over max). */
static bool only(const char *s, size_t n, size_t max, const char *set)
{
	if (!n || n >= max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(set, s[i]))
			return false;
	return true;
}

static bool loopback(const char *h)
{
	return strncmp(h, "127.", 4) == 0 || strcasecmp(h, "localhost") == 0 ||
	       strcmp(h, "::1") == 0;
}

static void block_emit(struct sbuf *b, const struct block *k)
{
	if (k->skip || !k->host[0] || !(k->name[0] || k->port[0] || k->user[0]))
		return;
	sb_printf(b, "Host %s\n", k->host);
	if (k->name[0])
		sb_printf(b, "\tHostName %s\n", k->name);
	if (k->port[0])
		sb_printf(b, "\tPort %s\n", k->port);
	if (k->user[0])
		sb_printf(b, "\tUser %s\n", k->user);
	/* the loopback is reached directly (a host loopback port), as the
	 * proxy's block below leaves it when named as such */
	if (k->name[0] && loopback(k->name))
		sb_printf(b, "\tProxyCommand none\n");
}

/* A Host line's patterns (after the keyword) into k; a pattern with a
 * byte ssh's patterns do not need (a quote, a comma list is fine) leaves
 * the block out. */
static void block_hosts(struct block *k, const char *v, size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		size_t j = i;
		while (j < n && v[j] != ' ' && v[j] != '\t')
			j++;
		if (j == i)
			break;
		if (!only(v + i, j - i, 256, "._-*?!:%[],") || at + (j - i) + 2 > sizeof k->host) {
			k->skip = true;
			return;
		}
		at += (size_t)snprintf(k->host + at, sizeof k->host - at, "%s%.*s", at ? " " : "",
				       (int)(j - i), v + i);
		i = j;
	}
}

/* The value of a carried keyword (the first value wins, as in ssh). */
static void block_set(struct block *k, const char *key, size_t kn, const char *v, size_t n)
{
	char *dst = NULL;
	size_t max = 0;
	const char *set = NULL;
	if (kn == 8 && strncasecmp(key, "hostname", 8) == 0)
		dst = k->name, max = sizeof k->name, set = "._-:%";
	else if (kn == 4 && strncasecmp(key, "port", 4) == 0)
		dst = k->port, max = sizeof k->port, set = "";
	else if (kn == 4 && strncasecmp(key, "user", 4) == 0)
		dst = k->user, max = sizeof k->user, set = "._-";
	if (!dst || dst[0] || !only(v, n, max, set) || v[0] == '-')
		return;
	if (dst == k->port) { /* v is not NUL-terminated: read here */
		long p = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)v[i]))
				return;
			p = p * 10 + (v[i] - '0');
		}
		if (p < 1 || p > 65535)
			return;
	}
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* One line: its keyword and its value (ssh's `Key value` or `Key=value`),
 * the value's trailing blanks and a trailing comment cut. false: a blank
 * or comment line. */
static bool split_line(const char *l, size_t n, const char **key, size_t *kn, const char **v,
		       size_t *vn)
{
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i == n || l[i] == '#')
		return false;
	*key = l + i;
	while (i < n && l[i] != ' ' && l[i] != '\t' && l[i] != '=')
		i++;
	*kn = (size_t)(l + i - *key);
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i < n && l[i] == '=')
		i++;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	*v = l + i;
	size_t end = n;
	const char *hash = memchr(*v, '#', n - i);
	if (hash)
		end = (size_t)(hash - l);
	while (end > i && (l[end - 1] == ' ' || l[end - 1] == '\t' || l[end - 1] == '\r'))
		end--;
	*vn = end - i;
	return true;
}

char *sshconfig_aliases(const char *text, size_t len)
{
	struct sbuf b = { 0 };
	struct block k = { .skip = true }; /* before any Host: the defaults', not carried */
	for (const char *l = text, *end = text + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = (size_t)((nl ? nl : end) - l);
		const char *key, *v;
		size_t kn, vn;
		if (!memchr(l, '\0', n) && split_line(l, n, &key, &kn, &v, &vn)) {
			bool host = kn == 4 && strncasecmp(key, "host", 4) == 0;
			bool match = kn == 5 && strncasecmp(key, "match", 5) == 0;
			if (host || match) {
				block_emit(&b, &k);
				k = (struct block){ .skip = match };
				if (host)
					block_hosts(&k, v, vn);
			} else if (!k.skip) {
				block_set(&k, key, kn, v, vn);
			}
		}
		l = nl ? nl + 1 : end;
	}
	block_emit(&b, &k);
	return b.p;
}

/* The user's name for the remote user ssh picks by default (outside, the
 * local user's; inside it would be the sandbox's `agent`), when it is a
 * plain one. */
static void default_user(struct sbuf *b)
{
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name && only(pw->pw_name, strlen(pw->pw_name), 64, "._-") &&
	    pw->pw_name[0] != '-')
		sb_printf(b, "\tUser %s\n", pw->pw_name);
}

char *sshconfig_text(const struct policy *pol, const char *home)
{
	bool out = policy_net_allows_any(pol);
	if (!out && !pol->ssh_agent.on)
		return NULL;
	struct sbuf b = { 0 };
	sb_printf(&b, "# written by warden for this session (doc/network.md#ssh)\n");
	_cleanup_free_ char *path = home ? xasprintf("%s/.ssh/config", home) : NULL;
	size_t got = 0;
	/* the user's own file, never a FIFO or a device to wait on */
	_cleanup_free_ char *text = path ? read_regular_at(AT_FDCWD, path, 0, SSH_CONFIG_MAX, &got,
							   NULL) : NULL;
	_cleanup_free_ char *aliases = text && got ? sshconfig_aliases(text, got) : NULL;
	if (aliases && *aliases)
		sb_printf(&b, "# your ~/.ssh/config's hosts: their HostName, Port and User only\n%s",
			  aliases);
	if (out)
		sb_printf(&b, "# every host but the loopback through warden's proxy\n"
			      "Host * !127.0.0.1 !localhost !::1\n"
			      "\tProxyCommand " SANDBOX_SELF_EXE " __connect %%h %%p\n");
	sb_printf(&b, "Host *\n"
		      "\t# keys from $SSH_AUTH_SOCK (warden run --ssh-agent) or -i FILE\n"
		      "\tIdentityFile " NO_KEY_FILE "\n");
	default_user(&b);
	return b.p;
}
