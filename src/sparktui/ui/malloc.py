"""The dashboard process's glibc malloc, tuned for a process left open for days beside a run that
needs the memory (on a GB10 the pool is shared with the GPU). No-ops where libc is not glibc."""

from __future__ import annotations

import ctypes

TRIM_EVERY_TICKS = 60  # the dashboard ticks once a second: a minute between trims
FIRST_TRIM_TICK = 10  # the first, once the start-up checks' burst is over


def _libc():
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def fewer_arenas(arenas: int = 2) -> None:
    """glibc gives threads that allocate their own malloc arenas (up to eight per core), and each
    keeps megabytes resident; the dashboard's reader and check threads need no more than two
    (5 MB less RSS at 2 cores, measured by benchmarks/side_by_side.py). Before any thread starts."""
    libc = _libc()
    try:
        libc.mallopt(-8, arenas)  # M_ARENA_MAX
    except AttributeError:
        pass  # not glibc (musl, macOS): nothing to tune


def give_back_freed() -> bool:
    """Return freed heap pages to the system (malloc_trim). glibc keeps what a burst freed (the
    first checks' JSON, NVML's initialisation buffers) resident until then. True where it ran."""
    libc = _libc()
    try:
        libc.malloc_trim(0)
    except AttributeError:
        return False
    return True
