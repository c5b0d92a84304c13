/* initfreeze.h - sandbox init's freeze by signals, made to hold against
 * the processes it stops (initfreeze.c). */
#pragma once
#include <stdbool.h>

/* How often a frozen sandbox is looked at again (ms). */
#define FREEZE_RECHECK_MS 100

/* SIGSTOP to every process of the namespace but init, until all have
 * stopped: 0, ESRCH when there is no other process, EAGAIN when some
 * would not stay stopped in FREEZE_LOOKS looks (the freeze failed: the
 * supervisor then kills), or kill's errno. */
int initfreeze_stop(void);
/* While frozen: any process found running stopped again; whether one
 * was (INIT_MSG_ESCAPED). */
bool initfreeze_recheck(void);
