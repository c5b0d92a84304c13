/* test_sandbox_apparmor.c - unit tests of what `warden doctor` says of
 * Ubuntu's AppArmor restriction of unprivileged user namespaces: recognised
 * only when the sysctl reads 1 AND creating the namespaces failed (as the
 * user, or as nobody when probed as root), and the one fix: load warden's
 * profile when it is installed, install it first when not, and a warden
 * outside the path the profile covers said so. The probe itself (reading
 * the sysctl, unshare) is the features probe's; this kernel has no such
 * sysctl, so these feed it the values an Ubuntu 24.04 host gives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/sandbox/apparmor.h"
#include "check.h"

static struct kernel_features host(int state, const char *value, bool root, int err, int nobody_err)
{
	struct kernel_features f;
	memset(&f, 0, sizeof f);
	f.sysctl[SYSCTL_APPARMOR_RESTRICT_USERNS].state = state;
	snprintf(f.sysctl[SYSCTL_APPARMOR_RESTRICT_USERNS].value,
		 sizeof f.sysctl[SYSCTL_APPARMOR_RESTRICT_USERNS].value, "%s", value);
	f.userns_probed = true;
	f.root = root;
	f.userns_err = err;
	f.userns_nobody_err = root ? nobody_err : err;
	return f;
}

static void test_recognised(void)
{
	struct kernel_features f = host(1, "1", false, EPERM, 0);
	CHECK(apparmor_userns_restricted(&f));          /* Ubuntu 24.04, a user, no profile */
	f = host(1, "1", false, 0, 0);
	CHECK(!apparmor_userns_restricted(&f));         /* the profile is loaded: it works */
	f = host(1, "1", true, 0, EPERM);
	CHECK(apparmor_userns_restricted(&f));          /* root is not restricted, nobody is */
	f = host(1, "0", false, EPERM, 0);
	CHECK(!apparmor_userns_restricted(&f));         /* off: something else refused them */
	f = host(0, "", false, EPERM, 0);
	CHECK(!apparmor_userns_restricted(&f));         /* no such sysctl (Debian, this kernel) */
	f = host(-1, "", false, EPERM, 0);
	CHECK(!apparmor_userns_restricted(&f));         /* unreadable */
	f = host(1, "1", false, EPERM, 0);
	f.userns_probed = false;
	CHECK(!apparmor_userns_restricted(&f));         /* never tried: nothing to say */
}

static void test_fix(void)
{
	char buf[640], dir[] = "/tmp/test-apparmor-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[128];
	snprintf(path, sizeof path, "%s/warden", dir);

	/* not installed: install it, then load it */
	apparmor_userns_fix(path, APPARMOR_PROFILE_ATTACH, buf, sizeof buf);
	CHECK(strstr(buf, "install warden's AppArmor profile as ") != NULL);
	CHECK(strstr(buf, path) != NULL);
	CHECK(strstr(buf, "packaging/apparmor/warden") != NULL);
	char load[256];
	snprintf(load, sizeof load, "sudo apparmor_parser -r %s", path);
	CHECK(strstr(buf, load) != NULL);
	CHECK(strstr(buf, "this warden is") == NULL);

	/* installed, not loaded: only load it */
	FILE *fp = fopen(path, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	apparmor_userns_fix(path, APPARMOR_PROFILE_ATTACH, buf, sizeof buf);
	CHECK(strncmp(buf, load, strlen(load)) == 0);
	CHECK(strstr(buf, "install warden's") == NULL);

	/* a warden elsewhere (a build tree) is not covered by the profile */
	apparmor_userns_fix(path, "/home/me/warden/build/warden", buf, sizeof buf);
	CHECK(strstr(buf, "this warden is /home/me/warden/build/warden, which the profile does not "
			  "cover: run /usr/bin/warden") != NULL);

	/* a short buffer: cut, terminated */
	char small[16];
	apparmor_userns_fix(path, "/elsewhere", small, sizeof small);
	CHECK(strlen(small) == sizeof small - 1);
	unlink(path);
	rmdir(dir);
}

/* The profile in the tree grants userns to the path the fix names, and
 * nothing but userns (and its local include). */
static void test_profile_file(void)
{
	FILE *fp = fopen(SRCDIR "/packaging/apparmor/warden", "r");
	CHECK(fp != NULL);
	if (!fp)
		return;
	char line[512];
	int rules = 0, userns = 0, profile = 0;
	while (fgets(line, sizeof line, fp)) {
		char *s = line + strspn(line, " \t");
		s[strcspn(s, "\n")] = '\0';
		if (!*s || *s == '#' || strncmp(s, "abi ", 4) == 0 || strncmp(s, "include ", 8) == 0 ||
		    strcmp(s, "}") == 0)
			continue;
		if (strcmp(s, "profile warden " APPARMOR_PROFILE_ATTACH " flags=(unconfined) {") == 0) {
			profile++;
			continue;
		}
		rules++;
		userns += strcmp(s, "userns,") == 0;
	}
	fclose(fp);
	CHECK(profile == 1);
	CHECK(rules == 1 && userns == 1);
}

int main(void)
{
	test_recognised();
	test_fix();
	test_profile_file();
	return check_status_counted("sandbox_apparmor");
}
