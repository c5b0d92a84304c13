# forge_object.py - what an agent does to forge the content of a file its
# repository already holds, run inside the sandbox in a checkout of the
# repository (python3 -c "$(<forge_object.py)" HOW FILE): the blob FILE has
# at HEAD gets the content "forged\n" under the same id, which git never
# checks when it reads it. HOW:
#   rename   a new loose object file renamed over the old one (the
#            directory objects/XX/ changes)
#   inplace  the loose object file written over where it is (only the
#            file's own ctime changes)
#   pack     a new pack whose index maps the id to the forged content
#            (git reads packs before loose objects): a pack of the forged
#            blob made by git in a scratch repository, its one-object index
#            rewritten to name the id
# Prints "forged ID".
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BODY = b"forged\n"


def git(*args, cwd=None, stdin=None):
    return subprocess.run(("git",) + args, cwd=cwd, input=stdin, check=True,
                          capture_output=True).stdout.decode().strip()


def loose(path, how):
    data = zlib.compress(b"blob %d\0" % len(BODY) + BODY)
    if how == "rename":
        with open(path + ".t", "wb") as f:
            f.write(data)
        os.chmod(path + ".t", 0o444)
        os.rename(path + ".t", path)
        return
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()
    os.chmod(path, 0o444)


def pack(objects, oid):
    scratch = tempfile.mkdtemp()
    git("init", "-q", scratch)
    fake = git("hash-object", "-w", "--stdin", cwd=scratch, stdin=BODY)
    name = git("pack-objects", "p", cwd=scratch, stdin=(fake + "\n").encode())
    base = os.path.join(scratch, "p-" + name)
    with open(base + ".idx", "rb") as f:
        idx = f.read()
    # version 2 with one object: the header (8 bytes), the fan-out (256
    # words), its id (20), its CRC and offset (8), the pack's checksum (20)
    tid = bytes.fromhex(oid)
    fanout = b"".join(struct.pack(">I", int(i >= tid[0])) for i in range(256))
    kept = idx[8 + 1024 + 20:8 + 1024 + 48]
    dst = os.path.join(objects, "pack", "pack-" + "f" * 40)
    shutil.copy(base + ".pack", dst + ".pack")
    with open(dst + ".idx", "wb") as f:
        f.write(idx[:8] + fanout + tid + kept + bytes(20))


def main():
    how, file = sys.argv[1], sys.argv[2]
    oid = git("rev-parse", "HEAD:" + file)
    objects = os.path.join(git("rev-parse", "--git-common-dir"), "objects")
    if how == "pack":
        pack(objects, oid)
    else:
        loose(os.path.join(objects, oid[:2], oid[2:]), how)
    print("forged", oid)


main()
