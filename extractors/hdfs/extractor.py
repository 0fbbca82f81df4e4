"""The HDFS pull extractor: a WebHDFS crawl of the configured roots, full or incremental.

Full run: every directory under the roots is listed (LISTSTATUS_BATCH pages, a few directories
at once) and every entry becomes an element plus a PARENT_CHILD relation from its directory.
Records stream to the writer as pages arrive: nothing holds the tree.

Incremental run (the default after the first): a directory whose modification time is the one
recorded when it was last listed completely has the same children, so it is not listed again;
only its known subdirectories are looked at (GETFILESTATUS each, they may have changed
inside). A directory without subdirectories costs no request at all. What this cannot see:
changes that leave every directory time alone (appends, chmod/chown/setrep of a file, a
setTimes); `--full` (or the snapshot-diff mode, where available) catches those.

Deletions: a listed directory's children are compared with those indexed under it; one that is
gone is proven deleted, with everything indexed below it. Deletions are applied only when the
whole run succeeds; a failed run flags nothing (its proven deletions wait in the state, are
checked again, and are applied by the next successful run). Per root, the deletion fail-safe
(extractors/common/deletions.py) refuses them when the root's listing came back empty or they
would flag more than `[deletions] max_share_percent` of what is indexed under the root; refused
deletions stay pending and the run report says why.

State (state_dir/hdfs-state.sqlite, hdfs/state.py): per directory, the modification time at
its last complete listing; the pending deletions. It is committed at checkpoints, only after
the writer has flushed what came before, so a run killed midway redoes at most the work since
the last checkpoint and loses nothing. The WebHDFS calls run in hdfs/pool.py's workers; the
include/exclude patterns are hdfs/filters.py.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
from hdfs import Client, HdfsError

from navd.config import NavdConfig
from navd.errors import NavdError, connection_reason, first_line, request_url
from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.hdfs.settings import hdfs_settings
from navd.extractors.common.deletions import DeletionGuard, DeletionsConfig
from navd.extractors.hdfs.filters import PathFilter
from navd.extractors.hdfs.pool import PAGE_SIZE, Pool
from navd.extractors.hdfs.records import (SIGNATURE_FIELDS, BadEntry, HdfsEntry, Signature, child_path, directory_ref,
                                         document_signature, element_for, entry_from_webhdfs, entry_signature,
                                         records_for)
from navd.extractors.hdfs.state import HdfsState
from navd.index.client import SolrIndex
from navd.index.queries import not_flagged_below, not_flagged_children
from navd.logs import get_logger
from navd.model import Deletion, ElementType, EntityRef, Record, SourceType, identity, path_qualified_name
from navd.webhdfs import WebHdfsError, hdfs_path, make_client, request_count, snapshot_diff, status_or_none

LOGGER = "navd.extractor.hdfs"
log = get_logger(LOGGER)

DEFAULT_WORKERS = 4
CHECKPOINT_DIRECTORIES = 2000


class HdfsExtractionError(NavdError):
    """The run failed (NameNode unreachable, a refused request): nothing was flagged deleted."""


# --- the crawl ---------------------------------------------------------------------------------

@dataclasses.dataclass
class HdfsReport:
    directories_listed: int = 0
    directories_unchanged: int = 0
    entries: int = 0
    records: int = 0
    deletions: int = 0
    skipped: int = 0       # unreadable directories (permissions) and bad entries, each logged
    requests: int = 0      # WebHDFS requests of the run
    deletions_refused: int = 0  # entities the deletion fail-safe did not flag (see `refused`)
    refused: str = ""      # why: one sentence per refused root, naming the config key


@dataclasses.dataclass
class _Listing:
    """A directory being listed: what the consumer tracks between its pages."""

    path: str
    mtime: int
    compare: bool                       # listed before: compare children with the index
    relist: bool = False                # unchanged, listed only for its subdirectories' times
    entries: int = 0
    ref: EntityRef | None = None        # the directory's ref, the parent of every entry
    # What the index holds under it (name -> (is_dir, signature)), when listed before: entries
    # whose signature is unchanged are not written again, names not seen are deleted.
    indexed: dict[str, tuple[bool, Signature]] | None = None
    seen: set[str] = dataclasses.field(default_factory=set)


def _below(root: str, relative: str) -> str:
    relative = relative.strip("/")
    if relative in ("", "."):
        return root
    return child_path(root, relative.removeprefix("./"))


class HdfsExtractor:
    name = "hdfs"

    def __init__(self, client: Client, index: SolrIndex, *, default_fs: str, roots: Iterable[str], state_dir: Path,
                 path_filter: PathFilter = PathFilter(), workers: int = DEFAULT_WORKERS,
                 checkpoint_every: int = CHECKPOINT_DIRECTORIES, snapshots: bool = True,
                 extractor_run_id: str | None = None, deletions: DeletionsConfig = DeletionsConfig(),
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        if not default_fs:
            raise NavdError("[cluster] default_fs: needed to name HDFS entities (hdfs://nameservice)")
        self.client = client
        self.index = index
        self.default_fs = default_fs
        self.roots = tuple(hdfs_path(r) if "://" in r else r for r in roots)
        self._root_paths = frozenset(r.rstrip("/") or "/" for r in self.roots)
        self.state = HdfsState(state_dir)
        self.filter = path_filter
        self.workers = workers
        self.checkpoint_every = checkpoint_every
        self.snapshots = snapshots
        # Snapshots this run made (deleted if it fails) and the ones it replaces (deleted once
        # the state naming their successors is committed).
        self._new_snapshots: list[tuple[str, str]] = []
        self._obsolete_snapshots: list[tuple[str, str]] = []
        self._finished = False
        self._run_token = ""
        self.extractor_run_id = extractor_run_id or f"hdfs##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        self.clock = clock
        self._since_checkpoint = 0
        self._listings: dict[str, _Listing] = {}
        self.deletions = deletions
        self.guard = DeletionGuard(deletions, LOGGER)
        self.report = HdfsReport()

    @classmethod
    def from_config(cls, config: NavdConfig, index: SolrIndex, state_dir: Path, *,
                    extractor_run_id: str | None = None) -> HdfsExtractor:
        hdfs = hdfs_settings(config)
        return cls(make_client(hdfs), index, default_fs=config.cluster.default_fs, roots=hdfs.roots,
                   state_dir=state_dir, path_filter=PathFilter(hdfs.include, hdfs.exclude),
                   snapshots=hdfs.snapshots, extractor_run_id=extractor_run_id,
                   deletions=config.deletions)

    # -- one run (the runner writes what `extract` yields; navd.extractors.run_pass) -------------

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of one run, a checkpoint every `checkpoint_every` directories listed; deletions
        last, and only if the whole crawl succeeded.

        `full` lists every directory whatever the state says (the first run is full anyway)."""
        full = full or not self._has_state()
        self.report = HdfsReport()
        self.guard = DeletionGuard(self.deletions, LOGGER)
        requests_before = request_count(self.client)
        pool = Pool(self.client, self.workers)
        self._new_snapshots, self._obsolete_snapshots = [], []
        self._finished = False
        self._run_token = uuid.uuid4().hex  # marks the deletions this run's own listings prove
        self._since_checkpoint = 0
        succeeded = False
        try:
            for root in self.roots:
                yield from self._crawl_root(pool, root, full)
            yield from self._apply_deletions()
            self.report.deletions_refused, self.report.refused = self.guard.refused_count, self.guard.reason
            # Only a complete run moves the diff base: a run that dies midway leaves it where
            # it was, and the next diff covers its changes too.
            for root, name in self._new_snapshots:
                self.state.set_meta(f"snapshot:{root}", name)
            self._finished = succeeded = True
        except (requests.ConnectionError, requests.Timeout) as exc:  # the NameNode is down or away
            where = request_url(exc, str(getattr(self.client, "url", "WebHDFS")))
            raise HdfsExtractionError(f"HDFS extraction failed: cannot reach the NameNode's WebHDFS at {where}: "
                                      f"{connection_reason(exc)} (nothing flagged deleted; the next run "
                                      "retries)") from None
        except (HdfsError, requests.RequestException, WebHdfsError) as exc:
            reason = first_line(exc)
            if type(exc) is HdfsError:  # the NameNode's own refusal (safe mode, say): say which one
                reason = f"NameNode {getattr(self.client, 'url', 'WebHDFS')}: {reason}"
            raise HdfsExtractionError(f"HDFS extraction failed: {reason} (nothing flagged deleted; "
                                      "the next run retries)") from None
        finally:
            if not succeeded:
                self._drop_snapshots(self._new_snapshots)
                self._new_snapshots, self._obsolete_snapshots = [], []
            pool.close()
            self.report.requests = request_count(self.client) - requests_before

    def close(self) -> None:
        self.state.close()

    def commit(self) -> None:
        """Persist the state. Call only after the writer has flushed every record yielded so far."""
        self.state.commit()
        if self._finished and self._obsolete_snapshots:
            # The state now names this run's snapshots: the previous ones are no longer needed.
            self._drop_snapshots(self._obsolete_snapshots)
            self._obsolete_snapshots = []

    def _drop_snapshots(self, snapshots: list[tuple[str, str]]) -> None:
        for root, name in snapshots:
            try:
                self.client.delete_snapshot(root, name)
            except (HdfsError, requests.RequestException) as exc:
                log.warning("could not delete navd's snapshot; delete it with hdfs dfs -deleteSnapshot",
                            root=root, snapshot=name, reason=first_line(exc))

    def rollback(self) -> None:
        self.state.rollback()
        self._drop_snapshots(self._new_snapshots)  # the diff base stays the previous snapshot
        self._new_snapshots = []

    def finished(self, records: int) -> HdfsReport:
        self.report.records = records
        return self.report

    # -- internals ------------------------------------------------------------------------------

    def _has_state(self) -> bool:
        return any(self.state.listed_mtime(root.rstrip("/") or "/") is not None for root in self.roots)

    def _crawl_root(self, pool: Pool, root: str, full: bool) -> Iterator[Record | Checkpoint]:
        root = root.rstrip("/") or "/"
        status = status_or_none(self.client, root)
        if status is None:
            log.warning("HDFS root does not exist; skipped", root=root)
            return
        entry = entry_from_webhdfs(root, status)
        changed = full or self.state.listed_mtime(root) != entry.modified_ms
        if changed and self.filter.included(root) and not self.filter.excluded(root):
            # Above the root nothing is indexed: the root has no PARENT_CHILD relation.
            yield element_for(entry, self.default_fs, self.extractor_run_id)
            self.report.entries += 1
        if not entry.is_dir:
            return
        self._listings = {}
        self.state.saw_directory(root, None)
        diff = self._snapshot_diff(root, status, full) if self.snapshots else None
        if diff is None:
            self._visit(pool, entry, full)
        else:
            yield from self._follow_diff(pool, root, diff)
            full = True  # what the diff queued (created directories) is listed to the bottom
        while pool.outstanding:
            kind, path, payload = pool.results.get()
            if kind == "page":
                yield from self._page(pool, self._listings[path], payload, full)
                continue
            pool.outstanding -= 1
            if kind == "listed":
                self._listed(self._listings.pop(path))
                if self._since_checkpoint >= self.checkpoint_every:
                    self._since_checkpoint = 0
                    yield CHECKPOINT
            elif kind == "stat":
                yield from self._stat(pool, path, payload, full)
            else:
                self._failed(path, payload)

    def _snapshot_diff(self, root: str, status: dict[str, Any], full: bool) -> list[dict[str, Any]] | None:
        """Take this run's snapshot of `root`; the diff from the previous one, or None when the
        root is not snapshottable or there is nothing to diff against (then the run crawls)."""
        name = f"navd-{self.clock():%Y%m%dT%H%M%S%f}"
        try:
            self.client.create_snapshot(root, name)
        except HdfsError as exc:
            kind = getattr(exc, "exception", None)
            if kind == "SnapshotException" or "not a snapshottable directory" in str(exc):
                return None  # the usual case: an admin did not allow snapshots on this root
            if kind == "AccessControlException":
                # The NameNode checks ownership before snapshottability: a user who is neither
                # owner nor superuser hears "Permission denied" for any root. Only a root its
                # status (read by this run) says is snapshottable is worth a warning: an admin
                # meant it for diffs. (Hadoop 2 reports no snapshotEnabled: the attempt stays.)
                if status.get("snapshotEnabled"):
                    log.warning("snapshottable root, but navd may not snapshot it (needs owner or superuser); "
                                "crawling it instead", root=root)
                return None
            raise
        self._new_snapshots.append((root, name))
        previous = self.state.get_meta(f"snapshot:{root}")
        if previous is not None:
            self._obsolete_snapshots.append((root, previous))
        if previous is None or full or self.state.listed_mtime(root) is None:
            return None
        try:
            return snapshot_diff(self.client, root, previous, name)
        except HdfsError as exc:
            # Its snapshot deleted by hand, say: a crawl makes the index right again.
            log.warning("snapshot diff failed; crawling instead", root=root, previous=previous,
                        reason=first_line(exc))
            self._obsolete_snapshots.pop()
            return None

    def _follow_diff(self, pool: Pool, root: str, diff: list[dict[str, Any]]) -> Iterator[Record]:
        """Deleted and renamed-away paths become pending deletions; created, renamed-to and
        modified ones are read again (a created directory to the bottom)."""
        self.report.directories_unchanged += 1
        for change in diff:
            kind = change.get("type")
            source = _below(root, change.get("sourcePath", ""))
            if kind in ("DELETE", "RENAME"):
                self.state.add_pending_delete(source, self.state.known(source), self._run_token)
            if kind == "RENAME":
                target = _below(root, change.get("targetPath", ""))
                yield from self._diffed(pool, target, created=True)
            elif kind in ("CREATE", "MODIFY"):
                yield from self._diffed(pool, source, created=kind == "CREATE")

    def _diffed(self, pool: Pool, path: str, *, created: bool) -> Iterator[Record]:
        if self.filter.excluded(path):
            return
        status = status_or_none(self.client, path)
        if status is None:
            return  # gone again since the snapshot: the next diff says so
        entry = self._entry(path, {**status, "pathSuffix": ""})
        if entry is None:
            return
        if self.filter.included(path):
            self.report.entries += 1
            yield from (records_for(entry, self.default_fs, self.extractor_run_id) if entry.parent_path
                        else [element_for(entry, self.default_fs, self.extractor_run_id)])
        if entry.is_dir and created:
            self.state.saw_directory(path, entry.parent_path)
            self._listings[path] = _Listing(path, entry.modified_ms, compare=self.state.listed_mtime(path) is not None)
            pool.submit("list", path)

    def _visit(self, pool: Pool, entry: HdfsEntry, full: bool) -> None:
        """A directory whose current status we have: list it, or, unchanged, look below it."""
        if not self.filter.worth_descending(entry.path):
            return
        previous = self.state.listed_mtime(entry.path)
        if full or previous is None or previous != entry.modified_ms:
            listing = _Listing(entry.path, entry.modified_ms, compare=previous is not None)
            if listing.compare:
                listing.indexed = self._indexed_children(entry.path)
            self._listings[entry.path] = listing
            pool.submit("list", entry.path)
            return
        self.report.directories_unchanged += 1
        subdirectories = self.state.subdirectories(entry.path)
        if not subdirectories:
            return  # same children, none of them a directory: nothing below can have changed
        # The subdirectories' times: one listing page per PAGE_SIZE entries, or one request each.
        pages = max(1, -(-self.state.listed_entries(entry.path) // PAGE_SIZE))
        if pages < len(subdirectories):
            self._listings[entry.path] = _Listing(entry.path, entry.modified_ms, compare=False, relist=True)
            pool.submit("list", entry.path)
            return
        for subdirectory, _mtime in subdirectories:
            pool.submit("stat", subdirectory)

    def _page(self, pool: Pool, listing: _Listing, page: list[dict[str, Any]], full: bool) -> Iterator[Record]:
        if listing.relist:
            for status in page:
                if status.get("type") == "DIRECTORY":
                    yield from self._stat(pool, child_path(listing.path, status["pathSuffix"]), status, full)
            return
        listing.entries += len(page)
        for status in page:
            entry = self._entry(listing.path, status)
            if entry is None or self.filter.excluded(entry.path):
                continue
            if listing.indexed is not None:
                listing.seen.add(entry.name)
                known = listing.indexed.get(entry.name)
                if not full and known is not None and known[1] == entry_signature(entry):
                    if entry.is_dir:
                        self.state.saw_directory(entry.path, listing.path)
                        self._visit(pool, entry, full)
                    continue  # indexed as it is
            if self.filter.included(entry.path):
                self.report.entries += 1
                if listing.ref is None:
                    listing.ref = directory_ref(listing.path, self.default_fs)
                yield from records_for(entry, self.default_fs, self.extractor_run_id, listing.ref)
            if entry.is_dir:
                self.state.saw_directory(entry.path, listing.path)
                self._visit(pool, entry, full)

    def _listed(self, listing: _Listing) -> None:
        """A complete listing: children indexed under it but absent are proven deleted."""
        if listing.relist:
            return
        self.report.directories_listed += 1
        if listing.path in self._root_paths and listing.entries == 0 and listing.indexed:
            indexed = self._indexed_below(listing.path)
            if not self.guard.allows(self._scope(listing.path), would_flag=indexed, indexed=indexed, listed=0):
                # Not trusted: it proves no deletion, and is not recorded as a complete listing,
                # so the next run lists the root again.
                return
        if listing.indexed is not None:
            for name, (is_dir, _signature) in listing.indexed.items():
                if name not in listing.seen:
                    self.state.add_pending_delete(child_path(listing.path, name), is_dir, self._run_token)
        parent = None if listing.path == "/" else (listing.path.rsplit("/", 1)[0] or "/")
        self.state.listed(listing.path, parent, listing.mtime, listing.entries)
        self._since_checkpoint += 1

    def _entry(self, directory: str, status: dict[str, Any]) -> HdfsEntry | None:
        """The entry of a status, or None (a logged skip) when the status is unusable."""
        try:
            return entry_from_webhdfs(directory, status)
        except BadEntry as exc:
            self.report.skipped += 1
            log.warning("HDFS entry skipped", reason=str(exc))
            return None

    def _stat(self, pool: Pool, path: str, status: dict[str, Any] | None, full: bool) -> Iterator[Record]:
        if status is None or self.filter.excluded(path):
            return  # gone since its parent was listed (that parent's next listing proves it), or excluded now
        # A GETFILESTATUS, or an entry of a listing: `path` is already the entry's own.
        entry = self._entry(path, {**status, "pathSuffix": ""})
        if entry is None:
            return
        if self.state.listed_mtime(path) != entry.modified_ms:
            if self.filter.included(path):
                self.report.entries += 1
                yield from records_for(entry, self.default_fs, self.extractor_run_id)
        self._visit(pool, entry, full)

    def _failed(self, path: str, exc: BaseException) -> None:
        self._listings.pop(path, None)
        if isinstance(exc, HdfsError) and getattr(exc, "exception", None) in ("AccessControlException",
                                                                              "FileNotFoundException"):
            # Unreadable or gone meanwhile: skipped, its state untouched, so it is tried again and
            # nothing under it is taken for deleted.
            self.report.skipped += 1
            log.warning("HDFS directory skipped", path=path, reason=first_line(exc))
            return
        raise exc

    def _indexed_children(self, directory: str) -> dict[str, tuple[bool, Signature]]:
        parent_id = identity(SourceType.HDFS, path_qualified_name(directory, self.default_fs))
        children = {}
        for doc in self.index.scan("elements", filters=not_flagged_children(parent_id),
                                   fl=f"originalName,{SIGNATURE_FIELDS}"):
            children[str(doc["originalName"])] = (doc.get("type") == ElementType.DIRECTORY.value,
                                                  document_signature(doc))
        return children

    def _scope(self, root: str) -> str:
        return path_qualified_name(root, self.default_fs)

    def _root_of(self, path: str) -> str:
        """The configured root `path` lies below (the deepest one), or "/" for a root since
        removed from the configuration (its pending deletions are weighed against all of HDFS)."""
        below = [r for r in self._root_paths if path == r or path.startswith(r.rstrip("/") + "/")]
        return max(below, key=len) if below else "/"

    def _indexed_below(self, path: str) -> int:
        """Entities indexed below `path` and not deleted: one Solr count, nothing held."""
        prefix = self._scope(path).rstrip("/") + "/"
        return self.index.count("elements", "*:*", not_flagged_below(prefix, SourceType.HDFS))

    def _apply_deletions(self) -> Iterator[Record]:
        """Flag the proven deletions, root by root, each root only if the fail-safe allows it;
        refused ones stay pending, so a later run (a higher threshold) can apply them."""
        by_root: dict[str, list[tuple[str, bool]]] = {}
        for path, is_dir, proven_by in self.state.pending_deletes():
            # This run's own listings proved these; a failed run's are checked again first.
            if proven_by != self._run_token and status_or_none(self.client, path) is not None:
                self.state.drop_pending_delete(path)  # re-created meanwhile: its listing indexed it
                continue
            by_root.setdefault(self._root_of(path), []).append((path, is_dir))
        for root, pending in by_root.items():
            # Decided before the first Deletion of the root is yielded: counts, not documents.
            would_flag = sum(1 + (self._indexed_below(path) if is_dir else 0) for path, is_dir in pending)
            if self.guard.allows(self._scope(root), would_flag=would_flag, indexed=self._indexed_below(root)):
                yield from self._flag_deleted(pending)

    def _flag_deleted(self, pending: list[tuple[str, bool]]) -> Iterator[Record]:
        now = self.clock()
        for path, is_dir in pending:
            qualified_name = path_qualified_name(path, self.default_fs)
            kind = ElementType.DIRECTORY if is_dir else ElementType.FILE
            yield Deletion(EntityRef(SourceType.HDFS, qualified_name, kind), now)
            self.report.deletions += 1
            if is_dir:  # what is indexed below it went with it
                below = not_flagged_below(qualified_name + "/")
                for doc in self.index.scan("elements", filters=below, fl="qualifiedName,type"):
                    yield Deletion(EntityRef(SourceType.HDFS, str(doc["qualifiedName"]),
                                             ElementType(str(doc["type"]))), now)
                    self.report.deletions += 1
                self.state.forget_subtree(path)
            self.state.drop_pending_delete(path)
            log.info("HDFS entity deleted", path=path, directory=is_dir)


__all__ = ["HdfsExtractionError", "HdfsExtractor", "HdfsReport"]
