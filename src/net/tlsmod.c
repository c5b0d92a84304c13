/* tlsmod.c - in warden's binary: the TLS module loaded from the bytes
 * warden carries (tlsmod.h), and the functions of tls.h, post.h and
 * intercept.h that the rest of warden calls, each forwarded into it. */
#include "tlsmod.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../common/util.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: asked for where vm.memfd_noexec says no */
#endif

/* warden-tls.so's bytes and their SHA-256 in hex (tlsmod_blob.c,
 * generated at the build) */
extern const unsigned char tlsmod_blob[] __attribute__((visibility("hidden")));
extern const unsigned char tlsmod_blob_end[] __attribute__((visibility("hidden")));
extern const char tlsmod_blob_sha256[] __attribute__((visibility("hidden")));

#define CACHED_PREFIX "tlsmod-"

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const struct tlsmod *) loaded;
static const char *loaded_from; /* set before loaded, under load_mu */

/* The module's bytes in a memfd sealed against every change. */
static int module_fd(struct werr *e)
{
	int fd = memfd_create("warden-tls", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* before Linux 6.3: executable is the default */
		fd = memfd_create("warden-tls", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return werr_errno(e, "loading warden's TLS module: memfd_create%s",
				  errno == EACCES ? " (refused by the sysctl vm.memfd_noexec = 2: set it "
						    "to 0 or 1, or give warden a cache directory off noexec "
						    "mounts: XDG_CACHE_HOME or HOME)" : "");
	size_t len = (size_t)(tlsmod_blob_end - tlsmod_blob);
	if (write_all(fd, tlsmod_blob, len) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		werr_errno(e, "loading warden's TLS module: writing its %zu bytes to a memfd", len);
		close(fd);
		return -1;
	}
	return fd;
}

/* The copy in warden's cache directory (private: no sandbox reaches it,
 * session.c's keep_private) is usable: this user's, written by no one
 * else, whole. */
static bool cached_usable(int fd, size_t len)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & 0222) == 0 && (size_t)st.st_size == len;
}

/* The copies of other modules (other builds) removed: a process that
 * loaded one keeps its mapping. */
static void cached_prune(int dfd, const char *keep)
{
	_cleanup_dir_ DIR *d = dir_open_at(dfd, ".", 0);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strncmp(de->d_name, CACHED_PREFIX, strlen(CACHED_PREFIX)) == 0 &&
		    strcmp(de->d_name, keep) != 0)
			unlinkat(dfd, de->d_name, 0);
}

/* warden's cache directory, open, where a copy of the module can be
 * loaded from: -1 when there is none, or it is on a noexec mount (no copy
 * would load there: the memfd then, each time). */
static int cache_dir_open(void)
{
	_cleanup_free_ char *cache = xdg_warden_dir("XDG_CACHE_HOME", user_home(), ".cache");
	if (!cache || mkdir_p(cache, 0700, NULL) < 0)
		return -1;
	int dfd = open(cache, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statvfs vfs;
	if (dfd >= 0 && (fstatvfs(dfd, &vfs) < 0 || (vfs.f_flag & ST_NOEXEC)))
		closep(&dfd);
	return dfd;
}

/* The module as the file name of the cache directory dfd: written once
 * (aside, then renamed into place), then only opened, where the memfd
 * would copy 5 MB each time. -1 when it cannot be had there. */
static int cached_fd(int dfd, const char *name)
{
	size_t len = (size_t)(tlsmod_blob_end - tlsmod_blob);
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && cached_usable(fd, len))
		return fd;
	if (fd >= 0)
		close(fd);
	_cleanup_close_ int t = -1;
	/* mkostemp wants a path: the cache directory's fd named through /proc */
	_cleanup_free_ char *tpath = xasprintf("/proc/self/fd/%d/.tlsmod-XXXXXX", dfd);
	if ((t = mkostemp(tpath, O_CLOEXEC)) < 0)
		return -1;
	const char *tname = strrchr(tpath, '/') + 1;
	if (write_all(t, tlsmod_blob, len) < 0 || fchmod(t, 0400) < 0 ||
	    renameat(dfd, tname, dfd, name) < 0) {
		unlinkat(dfd, tname, 0);
		return -1;
	}
	cached_prune(dfd, name);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !cached_usable(fd, len))
		closep(&fd);
	return fd;
}

/* dlopen of what fd holds, through /proc (the file checked is the file
 * loaded). */
static void *open_module(int fd)
{
	char path[40];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static const struct tlsmod *load(struct werr *e)
{
	void *h = NULL;
	/* the copy's name: the module's digest */
	char name[64];
	snprintf(name, sizeof name, CACHED_PREFIX "%.16s.so", tlsmod_blob_sha256);
	_cleanup_close_ int dfd = cache_dir_open();
	_cleanup_close_ int cfd = dfd >= 0 ? cached_fd(dfd, name) : -1;
	bool copy_failed = cfd >= 0 && !(h = open_module(cfd));
	loaded_from = "the cache's copy";
	if (!h) { /* no cache directory, or a copy there that did not load */
		_cleanup_close_ int fd = module_fd(e);
		if (fd < 0)
			return NULL;
		h = open_module(fd);
		loaded_from = "a sealed memfd";
	}
	if (!h) { /* the bytes themselves do not load here: the copy kept */
		const char *why = dlerror();
		werr_set(e, 0, "loading warden's TLS module: %s%s", why ? why : "dlopen failed",
			 why && strstr(why, "libnghttp2") ? " (install libnghttp2-14, which warden's "
							    "package depends on)" : "");
		return NULL;
	}
	if (copy_failed) /* the copy was what failed (cut short by a crash?): made again next time */
		unlinkat(dfd, name, 0);
	const struct tlsmod *m = dlsym(h, "warden_tlsmod");
	if (!m || m->abi != TLSMOD_ABI || m->size != sizeof *m) {
		werr_set(e, 0, "loading warden's TLS module: %s", m ? "a table of another layout"
								  : "no table in it");
		return NULL; /* left loaded: never called */
	}
	m->init();
	return m;
}

const struct tlsmod *tlsmod_get(struct werr *e)
{
	const struct tlsmod *m = atomic_load_explicit(&loaded, memory_order_acquire);
	if (m)
		return m;
	pthread_mutex_lock(&load_mu);
	m = atomic_load_explicit(&loaded, memory_order_relaxed);
	if (!m && (m = load(e)))
		atomic_store_explicit(&loaded, m, memory_order_release);
	pthread_mutex_unlock(&load_mu);
	return m;
}

/* What only the module's own objects reach (a CA, a context): loaded. */
static const struct tlsmod *mod(void)
{
	return atomic_load_explicit(&loaded, memory_order_acquire);
}

const char *tlsmod_source(void)
{
	return mod() ? loaded_from : NULL;
}

/* ---- tls.h, post.h, intercept.h, forwarded ------------------------------- */

struct tls_ca *tls_ca_new(const struct net_host *hosts, size_t n, struct werr *e)
{
	const struct tlsmod *m = tlsmod_get(e);
	return m ? m->ca_new(hosts, n, e) : NULL;
}

const char *tls_ca_pem(const struct tls_ca *ca)
{
	return mod()->ca_pem(ca);
}

void tls_ca_free(struct tls_ca *ca)
{
	if (ca)
		mod()->ca_free(ca);
}

SSL_CTX *tls_server_ctx(struct tls_ca *ca, const struct net_host *h, struct werr *e)
{
	return mod()->server_ctx(ca, h, e);
}

SSL_CTX *tls_client_ctx(const char *const *extra_ca_files, struct werr *e)
{
	const struct tlsmod *m = tlsmod_get(e);
	return m ? m->client_ctx(extra_ca_files, e) : NULL;
}

void tls_ctx_free(SSL_CTX *ctx)
{
	if (ctx)
		mod()->ctx_free(ctx);
}

int intercept_start(struct intercept_job *job, struct werr *e)
{
	const struct tlsmod *m = tlsmod_get(e);
	if (m)
		return m->intercept_start(job, e);
	/* the job owns its sockets, also when it cannot start */
	close(job->client_fd);
	close(job->upstream_fd);
	return -1;
}

int post_ready(struct werr *e)
{
	return tlsmod_get(e) ? 0 : -1;
}

void post_once(const struct post_req *h, struct post_result *d)
{
	struct werr e = { 0 };
	const struct tlsmod *m = tlsmod_get(&e);
	if (m) {
		m->post_once(h, d);
		return;
	}
	char buf[sizeof e.msg + 100];
	*d = (struct post_result){ 0 };
	snprintf(d->why, sizeof d->why, "%s", werr_str(&e, buf, sizeof buf));
}
