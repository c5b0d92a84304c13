/* policy_cmd.c - `warden policy show [--profile FILE] [--agent NAME]
 * [-- COMMAND]`: the effective compiled policy (built-in default, the agent
 * profile COMMAND or --agent picks, the user's profile) as JSON, with what
 * COMMAND would need exposed from the host ("exposed") and how each limit
 * is enforced here (limits_here); and the reading of
 * those arguments, which `warden rules show` shares. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/discover.h"
#include "../session/session.h"
#include "../policy/policy.h"
#include "../sandbox/limits.h"
#include "cli.h"
#include "cmdtab.h"

int cli_show_policy(int argc, char **argv, const char *usage, struct policy *p,
		    struct session_agent *ag, const char **cmd)
{
	if (argc < 2 || strcmp(argv[1], "show") != 0) {
		fputs(usage, stderr);
		return 2;
	}
	const char *profile = NULL, *agent = NULL;
	char path[32]; /* "policy show" or "rules show": the same options */
	snprintf(path, sizeof path, "%s show", argv[0]);
	int c;
	optind = 2;
	while ((c = cli_getopt(argc, argv, path)) != -1) {
		if (c == 'p') {
			profile = optarg;
		} else if (c == 'A') {
			agent = optarg;
		} else {
			fputs(usage, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	struct werr e = { 0 };
	*cmd = optind < argc ? argv[optind] : NULL;
	if (session_load_policy(agent, *cmd, profile, user_home(), p, ag, &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	return -1;
}

/* Each limit of the policy's JSON (limits) with what is in force here, as a
 * session would have it now (limits.h): "by" and "detail", or "by": null and
 * "why"; and a share's value worked out ("in_force"). Not in the digest:
 * the policy is the same on every host. */
static void limits_here(json_t *limits, const struct policy *p)
{
	struct limits_probe probe;
	limits_probe(&probe);
	struct limits l;
	limits_plan(&l, p, &probe);
	json_t *here = limits_to_json(&l);
	const char *kind;
	json_t *x;
	json_object_foreach(here, kind, x) {
		json_t *to = json_object_get(limits, kind);
		json_t *by = json_object_get(x, "by");
		if (!to || !by)
			continue; /* unlimited */
		json_object_set(to, "by", by);
		if (json_is_string(by))
			json_object_set(to, "detail", json_object_get(x, "detail"));
		else
			json_object_set(to, "why", json_object_get(x, "why"));
		if (json_is_string(by) && json_object_get(x, "share"))
			json_object_set(to, "in_force", json_object_get(x, "value"));
	}
	json_decref(here);
}

int cmd_policy(int argc, char **argv)
{
	static const char usage[] =
		"usage: warden policy show [--profile FILE] [--agent NAME|none] [-- COMMAND]\n";
	struct werr e = { 0 };
	struct policy p;
	struct session_agent ag;
	const char *cmd;
	int r = cli_show_policy(argc, argv, usage, &p, &ag, &cmd);
	if (r >= 0)
		return r;
	struct discovery d = { 0 };
	_cleanup_free_ char *cwd = realpath(".", NULL);
	if (discover_for(&p, cmd, getenv("PATH"), cwd, user_home(), true, &d, &e) < 0) {
		werr_print(&e);
		agent_endpoint_free(&ag.ep);
		policy_free(&p);
		return EXIT_WARDEN;
	}
	json_t *j = policy_to_json(&p);
	limits_here(json_object_get(j, "limits"), &p);
	if (optind < argc)
		json_object_set_new(j, "exposed", discovery_to_json(&d));
	discovery_free(&d);
	if (ag.def) {
		_cleanup_free_ char *sd = state_default_dir(ag.def->name, user_home());
		json_object_set_new(j, "agent", agent_to_json(ag.def, &ag.ep, sd));
		json_object_set_new(json_object_get(j, "agent"), "profile",
				    json_string(ag.def->profile));
	}
	agent_endpoint_free(&ag.ep);
	char digest[65];
	policy_digest(&p, digest);
	json_object_set_new(j, "digest", json_string(digest));
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
	policy_free(&p);
	return 0;
}
