/* gitsign.c - the host's signing settings judged for the sandbox
 * (gitsign.h): the signing key read as git reads user.signingKey (a
 * "key::" or "ssh-" literal, else a path, "~/" expanded), from a .pub
 * file only (for a private key's path, the .pub beside it: a file not
 * named .pub is never opened), checked to be an SSH public key (its
 * blob names its own type) and matched by fingerprint against the keys
 * the session's agent offers. */
#include "gitsign.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/b64.h"
#include "../net/sshagent.h"
#include "plan.h"

#define PUB_MAX (16 * 1024)

struct pubkey {
	char *line;             /* "TYPE BASE64" */
	char fp[SSHAG_FP_MAX];  /* "SHA256:..." */
};

/* git's boolean: true, yes, on or a number other than 0. */
static bool git_bool(const char *v)
{
	if (!v || !*v)
		return false;
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
		return true;
	char *end = NULL;
	long n = strtol(v, &end, 0);
	return !*end && n != 0;
}

/* text's first line as an SSH public key, "TYPE BASE64[ COMMENT]": true
 * with k filled when the key's blob names TYPE. */
static bool parse_pub(const char *text, struct pubkey *k)
{
	const char *t = text + strspn(text, " \t");
	size_t tl = strcspn(t, " \t\r\n");
	const char *b = t + tl + strspn(t + tl, " \t");
	size_t bl = strcspn(b, " \t\r\n");
	if (tl == 0 || tl > 64 || bl < 8 || bl > PUB_MAX || t[tl] == '\r' || t[tl] == '\n')
		return false;
	for (size_t i = 0; i < tl; i++)
		if (!(t[i] >= 'a' && t[i] <= 'z') && !(t[i] >= '0' && t[i] <= '9') &&
		    !strchr("-@.", t[i]))
			return false;
	_cleanup_free_ uint8_t *blob = xmalloc(bl);
	int n = b64_decode(b, bl, blob, bl);
	if (n < 4 + (int)tl)
		return false;
	uint32_t len = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
		       (uint32_t)blob[2] << 8 | blob[3];
	if (len != tl || memcmp(blob + 4, t, tl) != 0)
		return false;
	sshagent_fingerprint(blob, (size_t)n, k->fp);
	k->line = xasprintf("%.*s %.*s", (int)tl, t, (int)bl, b);
	return true;
}

/* The public key v (user.signingKey) names into k: NULL, or why not
 * (malloc'd). */
static char *key_of(const char *v, struct pubkey *k)
{
	if (!strncmp(v, "key::", 5) || !strncmp(v, "ssh-", 4)) {
		if (parse_pub(v + (v[0] == 'k' ? 5 : 0), k))
			return NULL;
		return xasprintf("user.signingKey (%.40s...) is not an SSH public key", v);
	}
	_cleanup_free_ char *path = v[0] == '~' ? ws_expand_user(v) : xstrdup(v);
	if (!path || path[0] != '/')
		return xasprintf("user.signingKey names %s, not a path from / or ~/: set it to your "
				 "key's .pub file, or to key::ssh-... (its text)", v);
	size_t pl = strlen(path);
	bool pub = pl > 4 && strcmp(path + pl - 4, ".pub") == 0;
	/* a private key's file is never opened: the .pub beside it */
	_cleanup_free_ char *pp = pub ? xstrdup(path) : xasprintf("%s.pub", path);
	size_t len = 0;
	_cleanup_free_ char *text = read_regular_at(AT_FDCWD, pp, 0, PUB_MAX, &len, NULL);
	if (!text && pub)
		return xasprintf("user.signingKey names %s, which warden cannot read", pp);
	if (!text)
		return xasprintf("user.signingKey names %s, a private key file, and there is no %s "
				 "beside it: warden carries a public key only (set user.signingKey to "
				 "the .pub file, or to key::ssh-...)", path, pp);
	if (strstr(text, "PRIVATE KEY") || !parse_pub(text, k))
		return xasprintf("%s (user.signingKey) is not an SSH public key", pp);
	return NULL;
}

/* Why the sandbox's git cannot sign with SSH (malloc'd), or NULL with
 * the key carried in k. */
static char *ssh_why(const struct gitsign_host *h, const struct gitsign *sign, struct pubkey *k)
{
	if (!sign->agent_keys)
		return xstrdup("your git signs with SSH (gpg.format=ssh) and the session has no "
			       "SSH agent: run with --ssh-agent (or `ssh-agent on` in a profile)");
	if (!h->key)
		return xstrdup("no user.signingKey is set (gpg.ssh.defaultKeyCommand is not "
			       "carried in): set it to your key's .pub file");
	char *why = key_of(h->key, k);
	if (why)
		return why;
	for (size_t i = 0; i < sign->agent_keys->n; i++)
		if (strcmp(sign->agent_keys->v[i], k->fp) == 0)
			return NULL;
	return xasprintf("the session's SSH agent does not offer your signing key %s "
			 "(user.signingKey): ssh-add it (and name it with --ssh-key when you "
			 "name keys)", k->fp);
}

void gitsign_text(const struct gitsign_host *h, struct gitsign *sign, struct sbuf *b)
{
	bool commit = git_bool(h->commit), tag = git_bool(h->tag);
	bool ssh = h->format && strcmp(h->format, "ssh") == 0;
	struct pubkey k = { 0 };
	_cleanup_free_ char *why = NULL;
	if (ssh)
		why = ssh_why(h, sign, &k);
	else
		why = xasprintf("%s signing (gpg.format%s%s) needs a GnuPG agent, and none is "
				"inside: sign them on the host (git commit --amend -S), or sign with "
				"SSH (gpg.format=ssh) and --ssh-agent",
				h->format && !strcmp(h->format, "x509") ? "X.509" : "OpenPGP",
				h->format ? "=" : " unset", h->format ? h->format : "");
	if (why) {
		if (commit || tag)
			sign->note = xasprintf("%s inside will not be signed: %s",
					       commit && tag ? "commits and tags" : commit ? "commits"
					       : "tags", why);
		free(k.line);
		return;
	}
	sb_printf(b, "[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = \"key::%s\"\n", k.line);
	if (commit)
		sb_printf(b, "[commit]\n\tgpgSign = true\n");
	if (tag)
		sb_printf(b, "[tag]\n\tgpgSign = true\n");
	sign->key_fp = xstrdup(k.fp);
	sign->commit = commit;
	sign->tag = tag;
	free(k.line);
}

void gitsign_host_free(struct gitsign_host *h)
{
	free(h->format);
	free(h->key);
	free(h->commit);
	free(h->tag);
	*h = (struct gitsign_host){ 0 };
}

void gitsign_free(struct gitsign *sign)
{
	free(sign->key_fp);
	free(sign->note);
	sign->key_fp = sign->note = NULL;
}
