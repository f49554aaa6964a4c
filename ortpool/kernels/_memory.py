"""How many more bytes this process can allocate, and which limit says so: past any limit the
process dies instead of raising. Each limit is a :class:`Room`: ``RLIMIT_AS`` and ``RLIMIT_DATA``
minus the address space and data in use; the memory limit of its cgroup and each ancestor minus
their usage (less the inactive page cache, as the kubelet's "working set"); ``MemAvailable`` plus
``SwapFree``. The limits are kept :data:`LIMITS_TTL` seconds, the usages read at every call.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from pathlib import Path

try:
    import resource
except ImportError:  # not POSIX: no rlimits to read
    resource = None  # type: ignore[assignment]

PROC = Path("/proc")
#: Seconds a reading of the limits (rlimits, cgroup limits and directories) is reused.
LIMITS_TTL = 1.0
#: A cgroup v1 limit at or above this is "no limit" (the kernel writes 2**63 rounded to pages).
_V1_UNLIMITED = 1 << 60


@dataclasses.dataclass(frozen=True)
class Room:
    """Bytes the process can still allocate under one limit (may be negative), the figures that
    give it, and whether the limit counts address space (rlimits) rather than memory written."""

    free: int
    source: str
    address_space: bool = False


@dataclasses.dataclass(frozen=True)
class _Cgroup:
    """One memory cgroup directory with a limit: its files, and the limit when it was read."""

    path: Path
    v2: bool
    limit: int

    def usage(self) -> int | None:
        """Bytes charged to the cgroup minus the inactive page cache; None when unreadable."""
        used = _read_int(self.path / ("memory.current" if self.v2 else "memory.usage_in_bytes"))
        if used is None:
            return None
        name = "inactive_file" if self.v2 else "total_inactive_file"
        cache = _read_fields(self.path / "memory.stat", (name,)).get(name, 0)
        return max(0, used - cache)


@dataclasses.dataclass(frozen=True)
class _Limits:
    address_space: int | None
    data: int | None
    cgroups: tuple[_Cgroup, ...]
    read_at: float


_lock = threading.Lock()
_cached: dict[Path, _Limits] = {}


def rooms(proc: Path = PROC) -> list[Room]:
    """The room under every limit on this process (``proc``: the /proc to read, tests' own)."""
    limits = _limits(proc)
    found = []
    statm = None
    if limits.address_space is not None or limits.data is not None:
        statm = _read_text(proc / "self" / "statm")
    if statm is not None:
        fields, page = statm.split(), os.sysconf("SC_PAGE_SIZE")
        # statm: size resident shared text lib data(+stack) dirty, in pages.
        size, data = int(fields[0]) * page, int(fields[5]) * page
        for limit, used, name, rlimit in ((limits.address_space, size, "address-space", "AS"),
                                          (limits.data, data, "data", "DATA")):
            if limit is not None:
                text = f"{name} limit {limit} bytes (RLIMIT_{rlimit}), {used} in use"
                found.append(Room(limit - used, text, True))
    for group in limits.cgroups:
        used = group.usage()
        if used is not None:
            name = "memory.max" if group.v2 else "memory.limit_in_bytes"
            text = f"cgroup memory limit {group.limit} bytes ({group.path / name}), {used} in use"
            found.append(Room(group.limit - used, text))
    meminfo = _read_fields(proc / "meminfo", ("MemAvailable", "SwapFree"))
    if "MemAvailable" in meminfo:
        available, swap = meminfo["MemAvailable"] * 1024, meminfo.get("SwapFree", 0) * 1024
        text = f"MemAvailable {available} bytes + SwapFree {swap} bytes (/proc/meminfo)"
        found.append(Room(available + swap, text))
    return found


def memory_room(proc: Path = PROC) -> int | None:
    """The least room under the limits on memory written (a cgroup's, ``MemAvailable`` plus
    ``SwapFree``; the rlimits on address space are each process's own); None when none is
    known."""
    found = [room.free for room in rooms(proc) if not room.address_space]
    return min(found) if found else None


def _limits(proc: Path) -> _Limits:
    now = time.monotonic()
    with _lock:
        cached = _cached.get(proc)
        if cached is not None and now - cached.read_at < LIMITS_TTL:
            return cached
    limits = _Limits(_rlimit("RLIMIT_AS"), _rlimit("RLIMIT_DATA"), _cgroups(proc), now)
    with _lock:
        _cached[proc] = limits
    return limits


def _rlimit(name: str) -> int | None:
    if resource is None or not hasattr(resource, name):
        return None
    soft = resource.getrlimit(getattr(resource, name))[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _cgroups(proc: Path) -> tuple[_Cgroup, ...]:
    """The memory cgroups of this process and its ancestors that set a limit (v2 and v1)."""
    membership = _read_text(proc / "self" / "cgroup")
    mountinfo = _read_text(proc / "self" / "mountinfo")
    if membership is None or mountinfo is None:
        return ()
    # mountinfo: id parent dev root mountpoint options [optional...] - fstype source super.
    mounts = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3:
            mounts.append((tail[0], set(tail[2].split(",")), fields[3], Path(fields[4])))
    found = []
    for line in membership.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, group = rest.partition(":")
        v2 = hierarchy == "0" and controllers == ""
        if not v2 and "memory" not in controllers.split(","):
            continue
        for fstype, options, root, mountpoint in mounts:
            if (fstype == "cgroup2") if v2 else (fstype == "cgroup" and "memory" in options):
                found.extend(_levels(_cgroup_dir(group, root, mountpoint), mountpoint, v2))
                break
    return tuple(found)


def _cgroup_dir(group: str, root: str, mountpoint: Path) -> Path:
    """The directory of ``group`` under a mount of ``root``; the mount point when outside it."""
    relative = os.path.relpath(group, root)
    return mountpoint if relative == "." or relative.startswith("..") else mountpoint / relative


def _levels(leaf: Path, top: Path, v2: bool) -> list[_Cgroup]:
    """``leaf`` and its ancestors up to the mount point ``top`` that set a memory limit."""
    levels, path = [], leaf
    while True:
        # v2 writes "max" for no limit, v1 a huge number.
        limit = _read_int(path / ("memory.max" if v2 else "memory.limit_in_bytes"))
        if limit is not None and (v2 or limit < _V1_UNLIMITED):
            levels.append(_Cgroup(path, v2, limit))
        if path == top or path.parent == path:
            return levels
        path = path.parent


def _read_text(path: Path) -> str | None:
    """The file's text, None if unreadable; os.read (``Path.read_text`` costs 100 µs more)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def _read_int(path: Path) -> int | None:
    text = _read_text(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _read_fields(path: Path, names: tuple[str, ...]) -> dict[str, int]:
    """The integers of the ``name: value [kB]`` or ``name value`` lines named (regex: 6x faster)."""
    text = _read_text(path) or ""
    found = {name: re.search(rf"^{name}:?[ \t]+(\d+)", text, re.MULTILINE) for name in names}
    return {name: int(match.group(1)) for name, match in found.items() if match}
