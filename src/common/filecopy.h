/* filecopy.h - a file's bytes copied into another with its holes left as
 * holes: the checkpoint store's copies of the workspace's files and the
 * undo's copies back. A sparse file (a disk image, a database's
 * preallocated file) copied byte by byte once took its full size on disk
 * and the time to write it: a 1 GiB image with nothing in it, 6.6 s and
 * 1.1 GB of the store. */
#pragma once
#include <sys/types.h>

/* size bytes of in, from in_off, into out from its offset 0, the extents
 * SEEK_DATA/SEEK_HOLE report as holes skipped (a file system without them
 * reports one extent of data); by copy_file_range where the kernel can,
 * else by reads and writes. out ends size bytes long, or as long as in
 * had from in_off (a file that shrank meanwhile: the caller's hash tells).
 * 0, or -1 with errno. */
int copy_sparse(int in, off_t in_off, off_t size, int out);
