/* kfile.h - files as the BPF LSM program of bpfexec.h names them: by the
 * kernel's device number and inode, while their ctime stays; and found
 * again, opened O_PATH, as the task that asked sees them. Built with the
 * program only (WARDEN_BPF). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../../bpf/exec_lsm.h"

/* The kernel's dev_t (MKDEV: major << 20 | minor) of a userspace st_dev. */
uint64_t kfile_dev(dev_t d);

/* st's ctime in nanoseconds, as the program's records give it. */
uint64_t kfile_ctime(const struct stat *st);

/* Is the file open at fd (fstat's st) the one the kernel named k, of
 * ctime ctime? */
bool kfile_same(int fd, const struct stat *st, const struct exec_lsm_key *k, uint64_t ctime);

/* The file of rec opened O_PATH as its task sees it (st filled), or -1. */
int kfile_find(const struct exec_lsm_rec *rec, struct stat *st);

/* The name of the file open at fd as process pid sees it, into out ("" when
 * none is found). */
void kfile_task_path(pid_t pid, int fd, const struct stat *st, char *out, size_t len);
