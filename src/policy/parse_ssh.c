/* parse_ssh.c - the profile's `ssh-agent` directive: the host's SSH agent
 * reachable inside through warden's filter (src/supervisor/sshagent_srv.h),
 * with the keys it may use, and whether each signature asks a human. */
#include "parse.h"

#include <string.h>

/* A key as a line names it: "SHA256:" and 43 characters of unpadded
 * base64, or a comment (anything else: a key's comment is the user's). */
static bool fingerprint_shaped(const char *k)
{
	if (strncmp(k, "SHA256:", 7) != 0)
		return true; /* a comment */
	const char *b = k + 7;
	return strlen(b) == 43 && strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					     "0123456789+/") == 43;
}

/* `ssh-agent on|ask [KEY...]`, `ssh-agent KEY...` or `ssh-agent off`:
 * the keys of every line add up (none named by any line: all of the
 * agent's); `ask` stays once said; `off` ends what earlier lines said. */
int pol_do_ssh_agent(struct parser *ps, const struct line *l)
{
	struct policy_ssh_agent *s = &ps->p->ssh_agent;
	size_t i = 1;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "ssh-agent: missing argument (on, ask, off or "
				"the keys: SHA256:... or a comment)");
	if (strcmp(l->tok[1], "off") == 0) {
		if (pol_want_tokens(ps, l, 2, "ssh-agent off") < 0)
			return -1;
		strv_free(&s->keys);
		*s = (struct policy_ssh_agent){ 0 };
		return 0;
	}
	s->on = true;
	if (strcmp(l->tok[1], "ask") == 0 || strcmp(l->tok[1], "on") == 0) {
		s->ask = s->ask || l->tok[1][0] == 'a';
		i++;
	}
	for (; i < l->ntok; i++) {
		const char *k = l->tok[i];
		if (strcmp(k, "off") == 0 || strcmp(k, "ask") == 0 || strcmp(k, "on") == 0)
			return pol_lerr(ps->e, 0, l, l->off[i], "ssh-agent: '%s' where a key was "
					"expected (`ssh-agent on|ask [KEY...]` or `ssh-agent off`)", k);
		if (!fingerprint_shaped(k))
			return pol_lerr(ps->e, 0, l, l->off[i], "ssh-agent: '%.200s' is not a SHA256 "
					"fingerprint (SHA256: and 43 characters, as ssh-add -l prints)", k);
		if (pol_push_unique(ps, l, &s->keys, k) < 0)
			return -1;
	}
	return 0;
}

void policy_add_ssh_key(struct policy *p, const char *key)
{
	p->ssh_agent.on = true;
	if (key && !strv_contains(&p->ssh_agent.keys, key))
		strv_push(&p->ssh_agent.keys, key);
}
