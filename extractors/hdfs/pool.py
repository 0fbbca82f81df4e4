"""Worker threads doing the crawl's WebHDFS calls, their results in a bounded queue.

The consumer (the crawl) takes results one at a time and decides what they mean; the workers
only list (LISTSTATUS_BATCH, in pages) and stat (GETFILESTATUS). The bound keeps memory flat
whatever the namespace: a worker waits while PAGES_BOUND pages wait for the consumer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from hdfs import Client

from navd.index.client import batches
from navd.webhdfs import list_status_batch, status_or_none

PAGE_SIZE = 1000  # entries per LISTSTATUS_BATCH page: the NameNode's dfs.ls.limit default
_RESULTS_BOUND = 16  # pages (<= dfs.ls.limit entries each) waiting for the consumer: memory stays flat


class Pool:
    """Worker threads doing WebHDFS calls; results come back in a bounded queue.

    Tasks are taken newest first (depth first), which keeps the backlog of directories small."""

    def __init__(self, client: Client, workers: int) -> None:
        self.client = client
        self.tasks: queue.LifoQueue[tuple[str, str] | None] = queue.LifoQueue()
        self.results: queue.Queue[tuple[str, str, Any]] = queue.Queue(maxsize=_RESULTS_BOUND)
        self.stopping = threading.Event()
        self.outstanding = 0
        self.threads = [threading.Thread(target=self._work, name=f"navd-hdfs-{i}", daemon=True)
                        for i in range(workers)]
        for thread in self.threads:
            thread.start()

    def submit(self, kind: str, path: str) -> None:
        self.outstanding += 1
        self.tasks.put((kind, path))

    def _put(self, item: tuple[str, str, Any]) -> bool:
        while not self.stopping.is_set():
            try:
                self.results.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _work(self) -> None:
        while not self.stopping.is_set():
            task = self.tasks.get()
            if task is None:
                return
            kind, path = task
            try:
                if kind == "list":
                    for page in _pages(self.client, path):
                        if not self._put(("page", path, page)):
                            return
                    self._put(("listed", path, None))
                else:
                    self._put(("stat", path, status_or_none(self.client, path)))
            except Exception as exc:  # handed to the consumer, which decides what it means
                self._put(("error", path, exc))

    def close(self) -> None:
        self.stopping.set()
        for _ in self.threads:
            self.tasks.put(None)
        for thread in self.threads:
            thread.join(timeout=30)


def _pages(client: Client, path: str) -> Iterator[list[dict[str, Any]]]:
    return batches(list_status_batch(client, path), PAGE_SIZE)
