/* execrecord.c - what the log says of an exec (execs_int.h): its `exec`
 * event, as decided at its notification or as found at the stop after it
 * (a file swapped in), and the pipeline's alerts. */
#include "execs_int.h"

#include <sys/stat.h>

#include "../../audit/audit.h"
#include "../../audit/escape.h"

/* A file the agent could have written or replaced (the exec event's
 * "writable"). */
static bool writable(const struct subject *s)
{
	return s->fd >= 0 && S_ISREG(s->st.st_mode) && !s->immutable;
}

bool execs_record(struct execs *x, struct pexec *p, const char *why)
{
	const struct subject *m = &p->s[MAIN], *in = &p->s[INTERP], *pr = &p->s[PROG];
	bool escaped = false;
	json_t *argv = json_bytes_array(p->argv.v, p->argv.n, &escaped);
	const char *scripts[INTERP_CHAIN_MAX], *scripts_sha256[INTERP_CHAIN_MAX];
	for (int i = 0; i < p->nchain; i++) {
		scripts[i] = p->chain[i].resolved ? p->chain[i].resolved : "";
		scripts_sha256[i] = hex_or_null(&p->chain[i]);
	}
	const char *missing = m->fd >= 0 && m->h == H_NOHASH ? m->why : NULL;
	const char *tool = x->link ? x->link(x->link_ctx, p->tgid ? p->tgid : p->tid, p->ppid, p->path,
					     m->resolved, p->argv.v, p->argv.n, why) : NULL;
	struct event ev = ev_exec(&(struct ev_exec){
		.pid = p->inner, .ppid = p->pinner, .host_pid = p->tid, .execveat = p->at,
		.cwd = p->cwd, .path = p->path, .argv = argv, .argv_escaped = escaped,
		.argv_truncated = p->truncated, .resolved = m->resolved, .sha256 = hex_or_null(m),
		.hash_missing = missing,
		.interpreter = p->interp[0] ? p->interp : p->elf_interp ? p->elf_interp : "",
		.writable = writable(m),
		.interpreter_sha256 = p->interp[0] || p->elf_interp ? hex_or_null(in) : NULL,
		.program = p->program, .program_resolved = pr->resolved,
		.program_sha256 = hex_or_null(pr), .deny = why, .tool = tool,
		.code_sha256 = code_or_null(m), .code_missing = code_missing(m),
		.interpreter_resolved = p->interp[0] || p->elf_interp ? in->resolved : NULL,
		.interpreter_code_sha256 = p->interp[0] || p->elf_interp ? code_or_null(in) : NULL,
		.program_code_sha256 = code_or_null(pr), .nscripts = (size_t)p->nchain,
		.scripts = scripts, .scripts_sha256 = scripts_sha256 });
	return !(audit_emit_event(x->log, ev, NULL) < 0 && audit_failed(x->log));
}

void execs_alert(struct execs *x, const char *rule, const char *path, const char *action)
{
	audit_emit_event(x->log, ev_alert(&(struct ev_alert){ .rule = rule, .path = path,
		.action = action }), NULL);
}

void execs_record_swapped(struct execs *x, const struct pexec *p, const char *resolved,
			  const struct subject *now, const char *why)
{
	const char *hex = now->h == H_DONE ? now->hex : NULL;
	bool escaped = false;
	json_t *argv = json_bytes_array(p->argv.v, p->argv.n, &escaped);
	audit_emit_event(x->log, ev_exec(&(struct ev_exec){
		.pid = p->inner, .ppid = p->pinner, .host_pid = p->now, .execveat = p->at,
		.cwd = p->cwd, .path = p->path, .argv = argv, .argv_escaped = escaped,
		.argv_truncated = p->truncated, .resolved = resolved, .sha256 = hex,
		.hash_missing = hex ? NULL : now->why, .interpreter = "", .swapped = true,
		.writable = p->exe >= 0 && S_ISREG(now->st.st_mode) && !now->immutable,
		.code_sha256 = hex && !now->code_err ? now->code : NULL, .deny = why }), NULL);
}
