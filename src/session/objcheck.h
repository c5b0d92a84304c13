/* objcheck.h - the objects a session added to or replaced in a git object
 * store, checked by their content once the sandbox is gone. git never
 * hashes an object again when it reads it, so a loose object, or a pack's
 * index, that names an existing id for other bytes would have the host's
 * `git checkout` write the agent's bytes under a clean `git status`. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/util.h"

/* files: whole paths of a store's files the sweep found changed during the
 * session (workspace.h's ws_sweep.objects: loose objects, *.idx, *.pack).
 * Each object they hold is read by the host's git, as for untrusted input,
 * from that file alone (a repository of warden's own in a temporary
 * directory, whose store links to it), and hashed as git names objects;
 * a `missing` answer is none of the session's. An object whose content is
 * not its id: its loose file, or its pack and index, moved aside
 * (".warden-quarantine-SESSION"), said on stderr with how to recover, and
 * an alert (rule git.object-forged) in log, naming a file inside ws (the
 * workspace swept; NULL: none) relative to it; one that could not be read
 * (git failed or took too long, an index git would refuse): rule
 * git.object-unverified. -1 with e when the log could not be written. */
int objcheck_run(const struct strv *files, const char *ws, struct audit *log,
		 const char *session, struct werr *e);
