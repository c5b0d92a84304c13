/* settingsguard.h - the agent's guarded settings files (src/agents/guard.c
 * checks them: their keys decide which hooks run, which MCP servers start
 * and what is allowed) put on the session's record: at the start what an
 * earlier session's agent changed and was undone, at the end what this
 * one's changed and was undone; each an alert and a line to the user. */
#pragma once

#include "../audit/audit.h"
#include "session.h"

/* At the start, once the log is open: what ag's state recovered from a
 * session that ended without its check (killed, its host gone). */
void settings_recovered(const struct session_agent *ag, struct audit *log);

/* With the sandbox gone: each guarded file checked (a change undone), the
 * session's marker (id) removed once all are. Nothing without an agent. */
void settings_guard(struct session_agent *ag, struct audit *log, const char *id);
