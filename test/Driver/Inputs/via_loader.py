"""Runs an ELF executable through the dynamic loader its PT_INTERP names
(`ld-linux-x86-64.so.2 PROGRAM ARGS...`), passing the output through.

    python3 via_loader.py PROGRAM ARGS...
"""
import struct
import subprocess
import sys


def interpreter(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("via_loader: %s is not a 64-bit ELF file" % path)
    end = "<" if data[5] == 1 else ">"
    phoff, = struct.unpack_from(end + "Q", data, 0x20)
    phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(end + "IIQQQQ", data,
                                                                   phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP
            return data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode()
    sys.exit("via_loader: %s names no dynamic loader" % path)


if __name__ == "__main__":
    program = sys.argv[1]
    sys.exit(subprocess.call([interpreter(program), program] + sys.argv[2:]))
