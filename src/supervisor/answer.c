/* answer.c - the reply to one seccomp notification (answer.h): the
 * lowest act of the supervisor's syscall handlers, which all call down to
 * it. */
#include "answer.h"

#include <linux/seccomp.h>
#include <seccomp.h>

void notify_answer(int listener, uint64_t id, int error, bool cont, long long val)
{
	struct seccomp_notif_resp r = { .id = id };
	if (error)
		r.error = -error;
	else if (cont)
		r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		r.val = val;
	seccomp_notify_respond(listener, &r);
}
