/* apparmor.h - Ubuntu's restriction of unprivileged user namespaces by
 * AppArmor (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10
 * and later): recognising, from the kernel features probe, that it is what
 * refused warden's namespaces, and the one fix: warden's AppArmor profile
 * (packaging/apparmor/warden, installed by the package as
 * APPARMOR_PROFILE_PATH), which grants warden `userns` and nothing more. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "features.h"

#define APPARMOR_PROFILE_PATH "/etc/apparmor.d/warden"
#define APPARMOR_PROFILE_ATTACH "/usr/bin/warden" /* the binary the profile names */

/* The restriction is on (the sysctl reads 1) and creating the namespaces
 * failed: as this user, or (probed as root, whom it does not restrict) as
 * nobody. Needs features_probe_userns. */
bool apparmor_userns_restricted(const struct kernel_features *f);

/* The fix, written to buf: load the profile at profile_path when it is
 * there, install it there first when not; and, when self (this binary's
 * path, or NULL) is not the one the profile attaches to, say so. */
void apparmor_userns_fix(const char *profile_path, const char *self, char *buf, size_t len);
