#!/usr/bin/env python3
"""elfcode.py FILE - the code hash of an ELF file as src/common/elfhash.h
defines it (version 1), written apart from warden's C so that the tests
compare two readings of the definition: SHA-256 over, for each PT_LOAD in
program header order, p_vaddr, p_memsz (8 bytes each), p_flags (4),
p_filesz (8), little-endian, then its p_filesz bytes from p_offset, with
the ELF header's e_shoff, e_shentsize, e_shnum and e_shstrndx as zeros.
Prints the hex digest; exits 1 on a file that is not an ELF file."""
import hashlib
import struct
import sys


def code_hash(data):
    if data[:4] != b'\x7fELF' or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    is64, e = data[4] == 2, '<' if data[5] == 1 else '>'
    data = bytearray(data)
    if is64:
        phoff, = struct.unpack_from(e + 'Q', data, 32)
        phentsize, phnum = struct.unpack_from(e + 'HH', data, 54)
        masks = [(40, 48), (58, 64)]
    else:
        phoff, = struct.unpack_from(e + 'I', data, 28)
        phentsize, phnum = struct.unpack_from(e + 'HH', data, 42)
        masks = [(32, 36), (46, 52)]
    for a, b in masks:
        data[a:b] = bytes(b - a)
    h = hashlib.sha256()
    for i in range(phnum):
        p = phoff + i * phentsize
        if is64:
            ptype, flags, off, vaddr, _, filesz, memsz, _ = struct.unpack_from(e + 'IIQQQQQQ', data, p)
        else:
            ptype, off, vaddr, _, filesz, memsz, flags, _ = struct.unpack_from(e + 'IIIIIIII', data, p)
        if ptype != 1:
            continue
        h.update(struct.pack('<QQIQ', vaddr, memsz, flags, filesz))
        h.update(bytes(data[off:off + filesz]))
    return h.hexdigest()


if __name__ == '__main__':
    with open(sys.argv[1], 'rb') as f:
        digest = code_hash(f.read())
    if digest is None:
        sys.exit(1)
    print(digest)
