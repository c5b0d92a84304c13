/* session_secrets.h - what a session holds for its secrets by reference:
 * their values read, the session CA and the egress guard that swaps the
 * phantoms, the decoys of the home, and the seccomp filter compiled
 * meanwhile; made as a job of the setup's worker thread (bgjob.h) while
 * the spec is made. */
#pragma once
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/bgjob.h"
#include "../common/err.h"
#include "../common/util.h"
#include "../detect/canary.h"
#include "../policy/policy.h"
#include "../sandbox/sandbox.h"
#include "../secrets/secrets.h"
#include "egress.h"
#include "session.h"

/* Secrets by reference: their values, the session CA and the guard. */
struct session_secrets {
	struct secrets sec;
	struct strv cas;           /* the CA files the user configured */
	struct egress eg;
	const struct net_rules *rules; /* the policy's, borrowed: hosts inspected */
	const struct mcp_rules *mcp;   /* ... and the mcp rules' */
	char *bundle;              /* the sandbox's trust store (host path), removed at the end */
	int bundle_lock;           /* its lock held for the session (trust.h): set with bundle */
	struct canary_set canary;  /* the decoys (canary.h); none with `canary off` */
	bool want_canary;          /* not `canary off` */
	struct seccomp_kind filter_kind; /* the seccomp filter the policy needs, most likely */
	atomic_bool filter_taken;  /* the preparing thread or the main one is on it */
	void *filter;              /* ... compiled by the thread, or NULL */
	char *cachedir;            /* warden's cache directory (the filter's: seccache.h) */
	size_t filter_len;
	struct bgjob ready;        /* the decoys, the egress and the filter made meanwhile
				      (session_secrets_ready) */
};

/* Read every secret's value (before anything starts: a missing one is an
 * error), and start the job that makes the decoys, the egress (the
 * session CA when there are secrets or hosts that request or mcp rules
 * name) and the filter. ss zeroed before. */
int session_secrets_prepare(const struct session_opts *o, const struct policy *pol,
			    const char *home, struct session_secrets *ss, struct werr *e);

/* The decoys and the egress, once made; the filter to the spec (which
 * checks that it fits, seccomp_compile). */
int session_secrets_ready(struct session_secrets *ss, struct sandbox_spec *s, struct werr *e);

/* Inside: each secret's variable holds its phantom, and the clients trust
 * the session CA (its trust store written under s->cachedir, named by
 * session). */
int session_secrets_spec(struct session_secrets *ss, const char *session, struct sandbox_spec *s,
			 struct werr *e);

/* The thread joined, the trust store removed, everything freed (the
 * values wiped); a zeroed ss too. */
void session_secrets_free(struct session_secrets *ss);
