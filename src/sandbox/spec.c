/* spec.c - the lifetime of a struct sandbox_spec on the supervisor side:
 * release everything the session filled in (the workspace plan and its lock,
 * the environment, the /etc cache and its lock, the compiled filter, the
 * paths, the exec layout). The policy it points to is the caller's. */
#include <stdlib.h>

#include "sandbox.h"

void sandbox_spec_free(struct sandbox_spec *s)
{
	hostid_release(&s->ids);
	workspace_cleanup(&s->plan);
	strv_free(&s->argv);
	strv_free(&s->envp);
	free(s->etc_cache);
	free(s->self_cache);
	free(s->seccomp_prog);
	strv_free(&s->etc_binds);
	closep(&s->etc_lock);
	free(s->workspace);
	free(s->exec_path);
	free(s->home);
	free(s->logdir);
	free(s->cachedir);
	free(s->storedir);
	free(s->runtimedir);
	free(s->review_upper);
	free(s->review_work);
	free(s->ca_bundle);
	exec_layout_free(&s->exec);
}
