"""Worker threads apart from the pool FastAPI runs sync routes in (anyio's default limiter, 40
threads): password hashing and the readiness probe each get a few of their own, so a flood of
logins cannot take every request thread, and a probe answers while the routes are busy."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

ResultT = TypeVar("ResultT")


class OwnThreads:
    """At most `size` calls at once in worker threads; more wait their turn (in the event loop,
    holding no thread). The limiter is made on first use, inside the server's event loop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[..., ResultT], *args: object) -> ResultT:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.size)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)


def hash_thread_count(configured: int) -> int:
    """`[server] hash_threads`, 0 meaning half the cores (at least 1): scrypt keeps a core busy
    for its whole run, and the other half stays free for the requests already logged in."""
    return configured or max(1, (os.cpu_count() or 2) // 2)
