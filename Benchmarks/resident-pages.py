#!/usr/bin/env python3
"""Which stretches of a file are in the page cache (mincore), in MB from its start.

After `echo 3 > /proc/sys/vm/drop_caches` and a cold `asicfs mount`, this shows what the start
read of the binary: the kernel reads around each page fault (the disk's read_ahead_kb), so the
stretches are wider than the pages touched. With read_ahead_kb set to 4 for the run, they are
the pages touched. contrib/link/layout.ld says how the binary is laid out for this.

    Benchmarks/resident-pages.py FILE
"""
import ctypes
import os
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_runs(path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return size, []
        # PROT_READ, MAP_SHARED: mapping reads nothing; mincore only looks.
        address = libc.mmap(None, size, 1, 1, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
        pages = (size + PAGE - 1) // PAGE
        vector = ctypes.create_string_buffer(pages)
        if libc.mincore(ctypes.c_void_p(address), size, vector) != 0:
            raise OSError(ctypes.get_errno(), f"mincore {path}")
        libc.munmap(ctypes.c_void_p(address), size)
    finally:
        os.close(fd)
    runs, start = [], None
    for index, flags in enumerate(vector.raw):
        if flags & 1 and start is None:
            start = index
        elif not flags & 1 and start is not None:
            runs.append((start, index))
            start = None
    if start is not None:
        runs.append((start, pages))
    return size, runs


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    size, runs = resident_runs(sys.argv[1])
    mb = lambda pages: pages * PAGE / 1e6
    for start, end in runs:
        print(f"{mb(start):8.2f} - {mb(end):8.2f} MB  ({mb(end - start):.2f} MB)")
    print(f"in the page cache: {mb(sum(e - s for s, e in runs)):.2f} of {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
