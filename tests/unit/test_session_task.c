/* test_session_task.c - unit tests of the task names `run --task` takes
 * (src/session/task.c): what becomes a directory and a branch warden/NAME
 * is one path component git accepts, never a way out of the tasks'
 * directory. */
#include <string.h>

#include "src/session/task.h"
#include "check.h"

static void test_names(void)
{
	static const char *const good[] = { "fix-123", "a", "Feature_2.x", "x.lock2" };
	static const char *const bad[] = { "", ".", "..", "../x", "a/b", ".hidden", "-rf", "a..b",
					   "x.lock", "a b", "a\nb", "tâche",
					   "0123456789012345678901234567890123456789012345678901234567890123456789" };
	char why[160];
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		CHECK(task_name_valid(good[i], why, sizeof why));
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = '\0';
		CHECK(!task_name_valid(bad[i], why, sizeof why));
		CHECK(why[0] != '\0');
	}
}

int main(void)
{
	test_names();
	return check_status_counted("session_task");
}
