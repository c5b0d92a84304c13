/* apparmor.c - Ubuntu's AppArmor restriction of unprivileged user
 * namespaces recognised, and its fix said (apparmor.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apparmor.h"

bool apparmor_userns_restricted(const struct kernel_features *f)
{
	const struct feature_sysctl_value *s = &f->sysctl[SYSCTL_APPARMOR_RESTRICT_USERNS];
	if (s->state != 1 || strcmp(s->value, "1") != 0 || !f->userns_probed)
		return false;
	return f->userns_err != 0 || (f->root && f->userns_nobody_err != 0);
}

void apparmor_userns_fix(const char *profile_path, const char *self, char *buf, size_t len)
{
	int n;
	if (access(profile_path, R_OK) == 0)
		n = snprintf(buf, len,
			     "sudo apparmor_parser -r %s (warden's AppArmor profile is installed but not "
			     "loaded; it grants %s `userns` and nothing more)",
			     profile_path, APPARMOR_PROFILE_ATTACH);
	else
		n = snprintf(buf, len,
			     "install warden's AppArmor profile as %s (the warden package ships it; in "
			     "the source tree: packaging/apparmor/warden), then sudo apparmor_parser -r "
			     "%s (it grants %s `userns` and nothing more)",
			     profile_path, profile_path, APPARMOR_PROFILE_ATTACH);
	if (n >= 0 && (size_t)n < len && self && strcmp(self, APPARMOR_PROFILE_ATTACH) != 0)
		snprintf(buf + n, len - (size_t)n,
			 "; this warden is %s, which the profile does not cover: run %s", self,
			 APPARMOR_PROFILE_ATTACH);
}
