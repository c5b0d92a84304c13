/* guardrec.h - the agent settings warden checked, one record per agent
 * state directory, shared by the sessions that use it (guard.c's): the
 * first session with no other live one takes the file as checked and
 * writes the record; a session that starts while another runs, or after
 * one that ended without its check (killed, its host gone), takes the
 * record instead of a file the other's agent may have changed. One record
 * per guarded file, under one lock, with one marker per session. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"

/* the largest guarded file read, and recorded */
#define GUARDREC_MAX (64 << 20)

struct guardrec {
	int dfd;        /* the record's directory, under an exclusive flock while open */
	bool live;      /* another session holds its marker */
	bool dead;      /* a session ended without its check (its marker removed) */
};

/* Open (making it) the record in the state directory statedir and take its
 * lock; which sessions live or ended unchecked. */
int guardrec_open(int statedir, struct guardrec *r, struct werr *e);

/* The text of the checked file recorded as name (NULL when there is none,
 * or it is not a regular file of at most GUARDREC_MAX bytes). */
char *guardrec_read(struct guardrec *r, const char *name);

/* text as the checked file recorded as name: 0, or -1 with errno. */
int guardrec_write(struct guardrec *r, const char *name, const char *text);

/* This session's marker, made and held: its fd (kept until the session's
 * end) and *marker its name; -1 when it cannot be made. */
int guardrec_enter(struct guardrec *r, char **marker);

/* The session's check done: its marker removed (statedir: the state
 * directory). */
void guardrec_leave(int statedir, const char *marker);

/* The lock let go. */
void guardrec_close(struct guardrec *r);
