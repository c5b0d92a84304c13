/* endguard.c - a signal that would end warden during a session's end
 * held until the end is on the record, then warden ended by it; a second
 * one at once (endguard.h). The handler only notes the signal and says so
 * on stderr, with texts made before it can run; SIGPIPE is ignored
 * meanwhile, so that saying it cannot end warden. warden's threads block
 * every signal (bgjob.h, lateclose.h), so it runs on the main thread. */
#include "endguard.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int guarded[ENDGUARD_N] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };

static volatile sig_atomic_t caught;
static char notes[ENDGUARD_N][160];
static size_t note_len[ENDGUARD_N];

static sigset_t guarded_set(void)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < ENDGUARD_N; i++)
		sigaddset(&set, guarded[i]);
	return set;
}

/* What endguard_hold blocks: those, and SIGPIPE (one still pending when
 * the supervisor gives the mask back is dropped by endguard_arm). */
static sigset_t held_set(void)
{
	sigset_t set = guarded_set();
	sigaddset(&set, SIGPIPE);
	return set;
}

/* The first: noted, and said. A second (of any of them): its default
 * action at once, as the handler returns (it is blocked until then). */
static void on_signal(int sig)
{
	int saved = errno;
	if (caught) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigaction(sig, &dfl, NULL);
		raise(sig);
		errno = saved;
		return;
	}
	caught = sig;
	for (size_t i = 0; i < ENDGUARD_N; i++)
		if (guarded[i] == sig)
			(void)!write(STDERR_FILENO, notes[i], note_len[i]);
	errno = saved;
}

void endguard_hold(struct endguard *g)
{
	*g = (struct endguard){ 0 };
	sigset_t set = held_set();
	sigprocmask(SIG_BLOCK, &set, &g->old);
	g->held = true;
	caught = 0;
}

void endguard_arm(struct endguard *g)
{
	if (!g->held || g->armed)
		return;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART,
				.sa_mask = guarded_set() };
	for (size_t i = 0; i < ENDGUARD_N; i++) {
		int n = snprintf(notes[i], sizeof notes[i],
				 "warden: SIG%s: the sandbox is gone; finishing the session's record "
				 "first (send it again to stop at once)\n", sigabbrev_np(guarded[i]));
		note_len[i] = n > 0 && (size_t)n < sizeof notes[i] ? (size_t)n : 0;
		/* one the caller ignores (a background job's SIGINT) stays so */
		if (sigaction(guarded[i], NULL, &g->prev[i]) == 0 && g->prev[i].sa_handler != SIG_IGN)
			sigaction(guarded[i], &sa, NULL);
	}
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ign, &g->prev_pipe);
	g->armed = true;
	/* one that came while held is caught now */
	sigprocmask(SIG_SETMASK, &g->old, NULL);
}

int endguard_caught(const struct endguard *g)
{
	return g->armed ? caught : 0;
}

void endguard_release(struct endguard *g)
{
	if (g->armed) {
		for (size_t i = 0; i < ENDGUARD_N; i++)
			sigaction(guarded[i], &g->prev[i], NULL);
		sigaction(SIGPIPE, &g->prev_pipe, NULL);
	}
	if (g->held)
		sigprocmask(SIG_SETMASK, &g->old, NULL);
	int sig = caught;
	caught = 0;
	*g = (struct endguard){ 0 };
	if (!sig)
		return;
	/* the record is finished: warden ends as the signal asked */
	fflush(NULL);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}
