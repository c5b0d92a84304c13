/* gitsign.h - how the host's git signs commits and tags (gpg.format,
 * user.signingKey, commit.gpgSign, tag.gpgSign), and what of it the
 * sandbox's ~/.gitconfig (gitident.h) carries: with the user's SSH agent
 * inside (--ssh-agent) and SSH signing (gpg.format=ssh), gpg.format, the
 * signing key as the public key itself ("key::TYPE BASE64", no file of the
 * host needed: read from a .pub file, never from a private key) and the
 * gpgSign settings, once the agent offers that key. Nothing else: no
 * gpg.ssh.program, allowedSignersFile or defaultKeyCommand (host paths
 * and commands). Where the host's git signs and the sandbox's cannot
 * (OpenPGP or X.509, which need a GnuPG agent inside; SSH without the
 * agent; a key the agent does not offer, or none warden can read), no
 * signing setting goes in, so that commits do not fail, and a line says
 * so at the session's start. */
#pragma once
#include <stdbool.h>

#include "../common/sbuf.h"
#include "../common/util.h"

/* The host's settings, as git takes them (the last one read wins). */
struct gitsign_host {
	char *format;       /* gpg.format; NULL: unset (openpgp) */
	char *key;          /* user.signingKey; NULL: unset */
	char *commit, *tag; /* commit.gpgSign, tag.gpgSign as written; NULL: unset */
};

struct gitsign {
	/* in: the fingerprints ("SHA256:...") of the keys the session's SSH
	 * agent socket offers; NULL: the session has no agent */
	const struct strv *agent_keys;
	/* out: the signing key's fingerprint, when carried (malloc'd) */
	char *key_fp;
	bool commit, tag;   /* out: commits, tags signed inside */
	/* out: "commits inside will not be signed: WHY" when the host's git
	 * signs them and the sandbox's will not (malloc'd), else NULL */
	char *note;
};

/* The sections carried, appended to b (none: nothing), and sign's out
 * fields. */
void gitsign_text(const struct gitsign_host *h, struct gitsign *sign, struct sbuf *b);
void gitsign_host_free(struct gitsign_host *h);
/* sign's out fields freed */
void gitsign_free(struct gitsign *sign);
