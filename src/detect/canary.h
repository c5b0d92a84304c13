/* canary.h - canary credentials: believable decoys in the sandbox's home
 * (~/.aws/credentials, ~/.config/gh/hosts.yml, ~/.env, an SSH key pair),
 * their tokens random and unique to the session (getrandom). Nothing real
 * is behind them, so nothing but a search for credentials opens one: an
 * open is a critical alert (`canary.opened`), and so is one of their tokens
 * seen by the proxy anywhere (`canary.token`: the tokens are phantoms bound
 * to no host, src/session/egress.c).
 *
 * Who does what: the session generates the set (canary_generate) and
 * turns off each decoy whose place the session binds something else to
 * (canary_skip_covered); sandbox init writes the others into the home
 * tmpfs before anything of the agent runs (as seed files: canary_seeds); the supervisor
 * watches them with inotify through the home's O_PATH fd that init hands
 * over (canary_watch_new), before init starts the command, and never opens
 * them itself. A tool that probes for credentials finds the decoys and
 * fails as it would with revoked ones: the AWS CLI reads the keys and
 * cannot reach AWS (the network is denied by default; an allowed AWS host
 * rejects the keys), `gh` likewise, ssh offers a key no server knows.
 *
 * A decoy that cannot be placed or watched is said on stderr and the
 * session runs without it: the decoys are a tripwire, not a wall; nothing
 * is exposed by one missing (the proxy still refuses its tokens). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../common/seed.h"
#include "../policy/policy.h"
#include "../secrets/secrets.h"

#define CANARY_MAX 6
#define CANARY_TOKENS_MAX 3

struct canary {
	const char *rel;        /* in the home: ".aws/credentials" (static) */
	char *inside;           /* its path inside: "/home/agent/.aws/credentials" */
	char *text;             /* its contents */
	mode_t mode;            /* 0600 (0644: a public key) */
	char *tokens[CANARY_TOKENS_MAX]; /* what in it would leave as a credential */
	size_t ntokens;
	bool off;               /* not placed: the session binds something else there */
};

struct canary_set {
	struct canary v[CANARY_MAX];
	size_t n;
	/* every token as a phantom bound to no host (spec->name: the path
	 * inside of the decoy it is from), for the proxy's scanner; never a
	 * value */
	struct secrets scan;
	struct policy_secret *specs;
};

/* A fresh set: every decoy, each with its own random tokens. -1 when
 * getrandom or libsodium fails. home: the home inside (AGENT_HOME). */
int canary_generate(struct canary_set *cs, const char *home, struct werr *e);
void canary_free(struct canary_set *cs);
/* Turn off each decoy whose path inside is path, lies beneath it, or is on
 * its way (a bind of the session there would cover or collide with it). */
void canary_skip_covered(struct canary_set *cs, const char *path);
/* The first decoy (its path in the home: ".ssh/id_ed25519") that rel, a
 * path in the home without "~/", is, holds or lies on the way to: what a
 * bind there (a profile's `cache ~/rel`) would leave out. NULL: none. */
const char *canary_decoy_at(const char *rel);

/* For init: each decoy as a file to write into the home (seed.h), out[i]
 * for cs->v[i] (a hole where it is off), at most max; how many. Init
 * places them (seed_place) knowing nothing of decoys; bit i of what it
 * placed is cs->v[i]. The strings are cs's. */
size_t canary_seeds(const struct canary_set *cs, struct seed_file *out, size_t max);

/* supervisor: an inotify watch (IN_OPEN) on each decoy in placed, reached
 * by its path beneath homefd (an O_PATH fd of the home in the sandbox's
 * mount namespace), which it never opens. A decoy that cannot be watched is
 * said on stderr. NULL (nothing to watch, or no inotify: said) when there
 * is none. */
struct canary_watch;
struct canary_watch *canary_watch_new(const struct canary_set *cs, unsigned placed, int homefd,
				      struct audit *log);
/* Read what the watch saw: each open of a decoy is an `alert` event, rule
 * "canary.opened", severity "critical", path (inside). */
void canary_watch_dispatch(struct canary_watch *w);
/* The decoys' watch watched by l (canary_watch_dispatch); -1 with e
 * naming it when l cannot take it. */
int canary_watch_watch(struct loop *l, struct canary_watch *w, struct werr *e);
void canary_watch_free(struct canary_watch *w);
/* The watch's inotify fd, handed to the caller (to close off the main
 * thread, lateclose.h); the watch keeps none. -1 without one. */
int canary_watch_take_fd(struct canary_watch *w);
