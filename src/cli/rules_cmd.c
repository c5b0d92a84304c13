/* rules_cmd.c - `warden rules show [--profile FILE] [--agent NAME] [-- CMD]`:
 * the detection rules a session would run with (the built-in ones, then
 * the profile's `rules` files), as rules text that names where each comes
 * from, the risk thresholds and the exec rules (the hashes denied and
 * allowed: a file's sha256, a code hash of its loaded segments); `warden
 * rules check FILE` parses one file
 * alone (on top of the built-in rules) and says where it is wrong. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/agents.h"
#include "../common/util.h"
#include "../detect/ruleset.h"
#include "../policy/policy.h"
#include "../session/session.h"
#include "cli.h"
#include "cmdtab.h"

static const char usage[] =
	"usage: warden rules show [--profile FILE] [--agent NAME|none] [-- COMMAND]\n"
	"       warden rules check FILE\n";

static int rules_check(int argc, char **argv)
{
	int rc = cli_operands_only(argc, argv, 2, "rules check", usage);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	struct werr e = { 0 };
	struct ruleset rs = { 0 };
	const char *files[] = { argv[optind] };
	int r = drules_load(&rs, files, 1, &e);
	if (r < 0)
		werr_print(&e);
	else
		printf("%s: %zu rules in force\n", argv[optind], rs.nrules);
	drules_free(&rs);
	return r < 0 ? 1 : 0;
}

/* The exec rules' lists, as comments in the profile's words: sha256:HEX,
 * code:HEX (src/common/elfhash.h), the directories allowed. */
static void exec_lines(const struct policy_exec *x)
{
	printf("# exec: default %s%s; %zu denied, %zu allowed by hash, %zu directories\n",
	       x->default_deny ? "deny" : "allow", x->strict ? ", strict" : "", x->deny.n, x->allow.n,
	       x->allow_dirs.n);
	const struct {
		const char *verb;
		const struct strv *v;
	} lists[] = { { "deny", &x->deny }, { "allow", &x->allow } };
	for (size_t k = 0; k < ARRAY_LEN(lists); k++)
		for (size_t i = 0; i < lists[k].v->n; i++) {
			const char *h = lists[k].v->v[i];
			printf("#   exec %s %s%s\n", lists[k].verb, strncmp(h, "code:", 5) ? "sha256:" : "", h);
		}
	for (size_t i = 0; i < x->allow_dirs.n; i++)
		printf("#   exec allow %s\n", x->allow_dirs.v[i]);
}

int cmd_rules(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return rules_check(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	struct werr e = { 0 };
	_cleanup_(policy_free) struct policy p = { 0 };
	struct session_agent ag = { .state.lock_fd = -1 };
	const char *cmd;
	int r = cli_show_policy(argc, argv, usage, &p, &ag, &cmd);
	if (r >= 0)
		return r;
	agent_endpoint_free(&ag.ep);
	struct ruleset rs = { 0 };
	if (drules_load(&rs, (const char *const *)p.rules_files.v, p.rules_files.n, &e) < 0) {
		werr_print(&e);
		drules_free(&rs);
		return EXIT_WARDEN;
	}
	_cleanup_free_ char *text = drules_text(&rs);
	drules_free(&rs);
	printf("%s\n# risk: warn %g, ask %g, freeze %g, kill %g (0: off); half-life %gs\n", text,
	       p.risk.warn, p.risk.ask, p.risk.freeze, p.risk.kill, p.risk.half_life_s);
	exec_lines(&p.exec);
	return 0;
}
