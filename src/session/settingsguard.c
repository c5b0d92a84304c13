/* settingsguard.c - the agent's guarded settings files on the session's
 * record: what was undone, an alert and a line to the user (see
 * settingsguard.h). */
#include "settingsguard.h"

#include "../agents/agents.h"
#include "../agents/state.h"
#include "../audit/events.h"
#include "../common/util.h"

/* Guarded file i of the agent's state, as warden checked it at the start
 * (guard.c); a change is undone, recorded as an alert and told. 0, or -1
 * when it could not be checked. */
static int guard_one(struct session_agent *ag, struct audit *log, const char *id, size_t i)
{
	struct state_guard_change c;
	struct werr e = { 0 };
	int r = state_guard_check(ag->def, &ag->state, i, id, &c, &e);
	if (r != 0 && c.what) {
		_cleanup_free_ char *detail = xasprintf("%s during the session", c.what);
		audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = "agent.settings-changed",
			.path = c.path, .moved_to = c.moved_to, .action = r > 0 ? "restored" : "failed",
			.detail = detail }), NULL);
	}
	if (r > 0)
		wnote("%s: %s during the session (the agent can write it); restored to the settings "
		      "warden checked at the start%s%s", c.path, c.what,
		      c.moved_to ? ", the agent's file kept as " : "", c.moved_to ? c.moved_to : "");
	if (r < 0)
		werr_print(&e);
	state_guard_change_free(&c);
	return r < 0 ? -1 : 0;
}

void settings_guard(struct session_agent *ag, struct audit *log, const char *id)
{
	const struct agent_def *a = ag->def;
	if (!a)
		return;
	int rc = 0;
	for (size_t i = 0; i < a->nguards; i++)
		rc |= guard_one(ag, log, id, i);
	if (rc == 0)
		state_guard_leave(&ag->state);
}

void settings_recovered(const struct session_agent *ag, struct audit *log)
{
	for (size_t i = 0; i < AGENT_GUARDS_MAX; i++) {
		const struct state_guard_change *c = &ag->state.recovered[i];
		if (!c->what)
			continue;
		_cleanup_free_ char *detail =
			xasprintf("%s during a session that ended without its check", c->what);
		audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = "agent.settings-changed",
			.path = c->path, .moved_to = c->moved_to, .action = "restored",
			.detail = detail }), NULL);
		wnote("%s: %s during a session that ended without warden's check (the agent can "
		      "write it); restored to the settings warden checked%s%s", c->path, c->what,
		      c->moved_to ? ", the agent's file kept as " : "", c->moved_to ? c->moved_to : "");
	}
}
