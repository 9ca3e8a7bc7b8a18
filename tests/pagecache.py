"""What the page cache holds of an index, and how this process maps it (Linux's /proc and
mincore(2)): for the tests of engine/__init__.py's ``_HUGEPAGE`` and ``release_page_cache``."""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import re
from pathlib import Path

THP = Path("/sys/kernel/mm/transparent_hugepage")
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]


def maps_of(directory: Path) -> dict[str, str]:
    """The VmFlags of each map of this process whose file is in `directory`, by file name."""
    flags, name = {}, None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = re.match(r"[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+ *(.*)", line)
        if head:  # a map begins (an anonymous one names no file)
            path = head[1]
            name = Path(path).name if path and os.path.dirname(path) == str(directory) else None
        elif name is not None and line.startswith("VmFlags:"):
            flags[name] = line.split(":", 1)[1].strip()
    return flags


def array_files(directory: Path) -> list[Path]:
    """The `.npy` files of an index that hold data (the engine maps those; an empty array's
    file is its 128-byte header alone)."""
    return sorted(f for f in directory.glob("*.npy") if f.stat().st_size > 128)


def pages(file: Path) -> int:
    """How many pages `file` spans (what `resident_pages` counts when all of it is cached)."""
    return -(-file.stat().st_size // mmap.PAGESIZE)


def resident_pages(file: Path) -> int:
    """How many of `file`'s pages the page cache holds (mincore(2) on a map of it that reads
    nothing)."""
    size = file.stat().st_size
    fd = os.open(file, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        try:
            vec = ctypes.create_string_buffer(pages(file))
            assert libc.mincore(addr, size, vec) == 0, os.strerror(ctypes.get_errno())
            return sum(b & 1 for b in vec.raw)
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def filesystem_of(path: Path) -> str:
    """The type of the file system that holds `path` (the longest mount point above it)."""
    best, kind = "", ""
    for line in Path("/proc/mounts").read_text().splitlines():
        point, fstype = line.split()[1], line.split()[2]
        if str(path).startswith(point.rstrip("/") + "/") and len(point) > len(best):
            best, kind = point, fstype
    return kind


def droppable(directory: Path) -> bool:
    """Whether the page cache can drop a file of `directory` (not on tmpfs or ramfs, whose
    pages are the files themselves)."""
    return filesystem_of(directory.resolve()) not in ("tmpfs", "ramfs")
