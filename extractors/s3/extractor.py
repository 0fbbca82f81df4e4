"""The S3 pull extractor: ListObjectsV2 listings of the configured roots, complete or incremental.

Complete listing (the first run of a root, every `[s3] complete_listing_hours`, `--full`): one
flat listing of the root (no delimiter: 1,000 keys a request, the cheapest way to see every
object). Every object becomes a FILE, every prefix between the root and an object a DIRECTORY
(a marker object `a/b/` is that directory), each with PARENT_CHILD from its directory; the
bucket is an S3BUCKET. An object whose signature (ETag, size, time, storage class, owner) is the
one written before is not written again, so a complete listing of an unchanged bucket writes
nothing. What the state holds under the root and the listing did not show is deleted.

Incremental run, per-prefix high-water marks: per directory, the state remembers the greatest
key seen below it and whether it held subdirectories. A run lists each known directory that holds
subdirectories one level deep (delimiter '/'): that finds new directories wherever they sort,
and new, changed and deleted objects directly in it; a new directory is listed completely.
A directory of objects only (a partition, a table without partitions) is not listed again,
except the last one of its parent (the newest date partition, the latest logs), which is listed
from its high-water mark (StartAfter): only the keys that sort after the greatest one seen. So
a run costs about one request per directory of directories plus the new keys. What it cannot
see until the next complete listing: an object added, rewritten or deleted inside a directory
of objects that is not the last one of its parent (a rewritten older partition), and a key that
sorts before its directory's mark. S3 has no directory times, so that is the trade.

Deletions go through the fail-safe per root (extractors/common/deletions.py): refused when the
root's listing came back empty while entities are indexed under it, or when they would flag more
than `[deletions] max_share_percent` of them; refused deletions stay recorded and a later run
flags them. A failed run flags nothing. The state is committed at checkpoints, after the writer
flushed what came before.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from navd.config import NavdConfig
from navd.errors import NavdError, first_line
from navd.extractors import CHECKPOINT, Checkpoint
from navd.extractors.common.deletions import DeletionGuard, DeletionsConfig
from navd.index.client import SolrIndex
from navd.index.queries import not_flagged_below
from navd.logs import get_logger
from navd.model import Deletion, ElementType, EntityRef, Record, SourceType
from navd.names import InvalidName, s3_qualified_name, split_s3_name

from .client import RequestCounter, make_client, resolve_credentials
from .records import (BadKey, S3Object, bucket_records, directory_records, directory_ref, object_records,
                      parent_prefix, parse_object)
from .settings import S3Root, s3_settings
from .state import S3State

LOGGER = "navd.extractor.s3"
#: what a listing yields, and then returns (the number of entries it listed)
Listing = Generator[Record | Checkpoint, None, int]
#: a root's listing: its records, then (entries listed, what is recorded but was not listed)
RootListing = Generator[Record | Checkpoint, None, tuple[int, list[tuple[str, bool]]]]
log = get_logger(LOGGER)

#: objects between two checkpoints (state commits)
CHECKPOINT_OBJECTS = 20_000


class S3ExtractionError(NavdError):
    """The run failed (the store unreachable, a refused request, a missing bucket): nothing was
    flagged deleted."""


@dataclasses.dataclass
class S3Report:
    roots: int = 0
    complete_listings: int = 0  # roots listed completely this run (the others incrementally)
    objects_listed: int = 0     # objects (and markers) the store returned
    prefixes_listed: int = 0    # common prefixes the store returned (incremental listings)
    entries: int = 0            # elements written: new or changed objects and directories
    records: int = 0
    deletions: int = 0
    skipped: int = 0            # keys no path can name, each logged
    requests: int = 0           # HTTP requests to the store
    deletions_refused: int = 0  # entities the deletion fail-safe did not flag (see `refused`)
    refused: str = ""


def _prefix_of(name: str) -> str:
    """A directory's key prefix from its qualified name: `s3a://b/a/c` -> `a/c/`, `s3a://b/` -> ""."""
    split = split_s3_name(name)
    key = split[1] if split else ""
    return f"{key}/" if key else ""


def _dir_name(bucket: str, prefix: str) -> str:
    return s3_qualified_name(bucket, prefix)


@dataclasses.dataclass
class _Tree:
    """The directories one listing saw: per directory's name, its greatest key and whether it
    holds subdirectories."""

    marks: dict[str, str] = dataclasses.field(default_factory=dict)
    branches: set[str] = dataclasses.field(default_factory=set)
    parents: dict[str, str | None] = dataclasses.field(default_factory=dict)


class S3Extractor:
    name = "s3"

    def __init__(self, client: Any, index: SolrIndex | None, *, roots: Sequence[S3Root], state_dir: Path,
                 counter: RequestCounter | None = None, complete_every: timedelta = timedelta(hours=24),
                 extractor_run_id: str | None = None, deletions: DeletionsConfig = DeletionsConfig(),
                 checkpoint_every: int = CHECKPOINT_OBJECTS,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.client = client
        self.counter = counter or RequestCounter()
        self.index = index
        self.roots = tuple(roots)
        self.state = S3State(state_dir)
        self.complete_every = complete_every
        self.extractor_run_id = extractor_run_id or f"s3##{datetime.now(UTC):%Y%m%dT%H%M%S}"
        self.deletions = deletions
        self.guard = DeletionGuard(deletions, LOGGER)
        self.checkpoint_every = checkpoint_every
        self.clock = clock
        self.report = S3Report()
        self._token = ""
        self._since_checkpoint = 0

    @classmethod
    def from_config(cls, config: NavdConfig, index: SolrIndex, state_dir: Path, *,
                    extractor_run_id: str | None = None) -> S3Extractor:
        settings = s3_settings(config)
        client, counter = make_client(settings, resolve_credentials(settings))
        return cls(client, index, roots=settings.parsed_roots, state_dir=state_dir, counter=counter,
                   complete_every=settings.complete_listing_interval, extractor_run_id=extractor_run_id,
                   deletions=config.deletions)

    # -- one run (the runner writes what `extract` yields; navd.extractors.run_pass) -------------

    def extract(self, *, full: bool = False) -> Iterator[Record | Checkpoint]:
        """Records of one run, root by root, each root's deletions after its listing; a checkpoint
        every `checkpoint_every` objects listed.

        `full`: list every root completely and write every element, changed or not."""
        from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415

        self.report = S3Report()
        self.guard = DeletionGuard(self.deletions, LOGGER)
        self._token = uuid.uuid4().hex
        self._since_checkpoint = 0
        before = self.counter.count
        try:
            for root in self.roots:
                yield from self._root(root, full)
            self.report.deletions_refused, self.report.refused = self.guard.refused_count, self.guard.reason
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise S3ExtractionError(f"S3 extraction failed: {error.get('Code', 'error')}: "
                                    f"{first_line(error.get('Message') or str(exc), 300)} "
                                    f"({exc.operation_name}; nothing flagged deleted, the next run retries)") from None
        except BotoCoreError as exc:  # unreachable endpoint, timeouts, bad TLS
            raise S3ExtractionError(f"S3 extraction failed: {first_line(exc, 300)} (nothing flagged deleted; "
                                    "the next run retries)") from None
        finally:
            self.report.requests = self.counter.count - before

    def commit(self) -> None:
        """Persist the state. Call only after the writer has flushed every record yielded so far."""
        self.state.commit()

    def rollback(self) -> None:
        self.state.rollback()

    def finished(self, records: int) -> S3Report:
        self.report.records = records
        return self.report

    def close(self) -> None:
        self.state.close()
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

    # -- a root -----------------------------------------------------------------------------

    def _root(self, root: S3Root, full: bool) -> Iterator[Record | Checkpoint]:
        self.report.roots += 1
        name = root.qualified_name
        yield from self._above(root, full)
        last = self.state.get_meta(f"complete:{name}")
        due = last is None or self.clock() - datetime.fromisoformat(last) >= self.complete_every
        gone: list[tuple[str, bool]]
        if full or due or self.state.directory(name) is None:
            listed, gone = yield from self._complete(root, full)
            self.state.set_meta(f"complete:{name}", self.clock().isoformat())
            self.report.complete_listings += 1
        else:
            listed, gone = yield from self._incremental(root)
        yield from self._flag(root, gone, listed)

    def _above(self, root: S3Root, full: bool) -> Iterator[Record]:
        """The bucket and the directories from it down to the root's prefix (none of them is
        listed or deleted by this root), when not yet written."""
        chain = [""]
        parts = root.prefix.removesuffix("/").split("/") if root.prefix else []
        chain += ["/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)]
        for prefix in chain:
            name = _dir_name(root.bucket, prefix)
            if not full and self.state.directory(name) is not None:
                continue
            parent = _dir_name(root.bucket, parent_prefix(prefix)) if prefix else None
            self.state.saw_directory(name, parent, "", leaf=False, token=self._token)
            self.report.entries += 1
            yield from (bucket_records(root.bucket, self.extractor_run_id) if not prefix
                        else directory_records(root.bucket, prefix, self.extractor_run_id))

    # -- complete listings -----------------------------------------------------------------

    def _complete(self, root: S3Root, full: bool) -> RootListing:
        tree = _Tree()
        top = root.qualified_name
        tree.marks[top] = ""
        tree.parents[top] = self._parent_name(root.bucket, root.prefix)
        listed = yield from self._list_flat(root.bucket, root.prefix, tree, full=full)
        self._save_tree(tree)
        return listed, list(self.state.unseen_below(top, self._token))

    def _list_flat(self, bucket: str, prefix: str, tree: _Tree, *, full: bool, start_after: str = "") -> Listing:
        """Every object under `prefix` (after `start_after`, when given): changed ones written,
        all recorded as seen, their directories collected in `tree`."""
        params: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "FetchOwner": True}
        if start_after:
            params["StartAfter"] = start_after
        listed = 0
        known_dirs: set[str] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(**params):
            objects = self._parse(bucket, page.get("Contents") or ())
            listed += len(objects)
            yield from self._directories(bucket, prefix, objects, tree, known_dirs, full)
            yield from self._objects(objects, full)
        self.report.objects_listed += listed
        return listed

    def _parse(self, bucket: str, contents: Sequence[Mapping[str, Any]]) -> list[S3Object]:
        objects = []
        for raw in contents:
            try:
                objects.append(parse_object(bucket, raw))
            except BadKey as exc:
                self.report.skipped += 1
                log.warning("S3 object skipped", reason=str(exc))
        return objects

    def _directories(self, bucket: str, prefix: str, objects: Sequence[S3Object], tree: _Tree,
                     known_dirs: set[str], full: bool) -> Iterator[Record]:
        """The directories between `prefix` and each object: new ones written (a marker's
        directory with the marker's time and owner), each one's high-water mark raised to the
        greatest key below it (a listing goes in key order: the last key seen)."""
        last_parent = None
        chain: list[str] = []
        top = _dir_name(bucket, prefix)
        for obj in objects:
            parent = obj.key if obj.is_marker else parent_prefix(obj.key)
            if parent != last_parent:
                last_parent, chain = parent, []
                cut = parent[len(prefix):].removesuffix("/").split("/") if len(parent) > len(prefix) else []
                for depth in range(1, len(cut) + 1):
                    sub = prefix + "/".join(cut[:depth]) + "/"
                    name = _dir_name(bucket, sub)
                    chain.append(name)
                    if name not in tree.marks:
                        up = _dir_name(bucket, parent_prefix(sub))
                        tree.parents[name] = up
                        tree.branches.add(up)
                        tree.marks[name] = ""
                        if name not in known_dirs and (full or self.state.directory(name) is None):
                            marker = obj if obj.is_marker and obj.key == sub else None
                            self.report.entries += 1
                            yield from directory_records(bucket, sub, self.extractor_run_id, marker=marker)
                        known_dirs.add(name)
            for name in chain:
                tree.marks[name] = obj.key
            if top in tree.marks:
                tree.marks[top] = obj.key

    def _objects(self, objects: Sequence[S3Object], full: bool) -> Iterator[Record | Checkpoint]:
        """The FILEs of a page of objects whose signature changed (all with `full`); every one
        recorded as seen by this run."""
        files = [o for o in objects if not o.is_marker]
        known = {} if full else self.state.signatures(o.qualified_name for o in files)
        rows = []
        for obj in files:
            signature = obj.signature
            if full or known.get(obj.qualified_name) != signature:
                self.report.entries += 1
                yield from object_records(obj, self.extractor_run_id)
            rows.append((obj.qualified_name, directory_ref(obj.bucket, parent_prefix(obj.key)).qualified_name,
                         signature))
        self.state.saw_objects(rows, self._token)
        self._since_checkpoint += len(objects)
        if self._since_checkpoint >= self.checkpoint_every:
            self._since_checkpoint = 0
            yield CHECKPOINT

    def _save_tree(self, tree: _Tree) -> None:
        for name, mark in tree.marks.items():
            self.state.saw_directory(name, tree.parents.get(name), mark, leaf=name not in tree.branches,
                                     token=self._token)

    def _parent_name(self, bucket: str, prefix: str) -> str | None:
        return _dir_name(bucket, parent_prefix(prefix)) if prefix else None

    # -- incremental runs ------------------------------------------------------------------

    def _incremental(self, root: S3Root) -> RootListing:
        top = root.qualified_name
        gone: list[tuple[str, bool]] = []
        gone_dirs: list[str] = []
        listed = 0
        mark = self.state.directory(top)
        if mark is not None and mark[1]:  # the root holds objects only: what sorts after its mark
            tree = _Tree(marks={top: mark[0]}, parents={top: self._parent_name(root.bucket, root.prefix)})
            listed += yield from self._list_flat(root.bucket, root.prefix, tree, full=False, start_after=mark[0])
            tree.marks[top] = max(tree.marks[top], mark[0])
            self._save_tree(tree)
            return listed, gone
        for directory in self.state.branch_directories(top):
            if any(directory.startswith(d.removesuffix("/") + "/") for d in gone_dirs):
                continue  # below a directory this run found deleted
            count, missing = yield from self._level(root.bucket, directory)
            listed += count
            gone.extend(missing)
            gone_dirs.extend(name for name, is_dir in missing if is_dir)
        return listed, gone

    def _level(self, bucket: str, directory: str) -> RootListing:
        """One directory of directories listed one level deep: its new subdirectories listed
        completely, its last subdirectory of objects from its mark; (entries listed, children
        recorded but no longer listed)."""
        prefix = _prefix_of(directory)
        children: list[str] = []
        objects: list[S3Object] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=bucket, Prefix=prefix, Delimiter="/", FetchOwner=True):
            children.extend(p["Prefix"] for p in page.get("CommonPrefixes") or () if isinstance(p.get("Prefix"), str))
            objects.extend(o for o in self._parse(bucket, page.get("Contents") or ()) if o.key != prefix)
        self.report.prefixes_listed += len(children)
        self.report.objects_listed += len(objects)
        yield from self._objects(objects, full=False)
        listed_dirs: set[str] = set()
        for child in children:
            try:
                name = _dir_name(bucket, child)
            except InvalidName as exc:  # a prefix no path can spell (`a//`)
                self.report.skipped += 1
                log.warning("S3 prefix skipped", reason=str(exc))
                continue
            listed_dirs.add(name)
            known = self.state.directory(name)
            tree = _Tree(marks={name: known[0] if known else ""}, parents={name: directory})
            if known is None:
                self.report.entries += 1
                yield from directory_records(bucket, child, self.extractor_run_id)
                yield from self._list_flat(bucket, child, tree, full=False)
            elif known[1] and child == children[-1]:
                yield from self._list_flat(bucket, child, tree, full=False, start_after=known[0])
                tree.marks[name] = max(tree.marks[name], known[0])
            else:
                self.state.saw_directory(name, directory, known[0], leaf=known[1], token=self._token)
                continue
            self._save_tree(tree)
        listed_objects = {o.qualified_name for o in objects if not o.is_marker}
        missing = [(d, True) for d in sorted(self.state.child_directories(directory) - listed_dirs)]
        missing += [(o, False) for o in sorted(self.state.child_objects(directory) - listed_objects)]
        known = self.state.directory(directory)
        if children or objects or known is None:
            # An empty listing of a directory with recorded children is not trusted (the fail-safe
            # decides on its deletions): it does not make the directory a leaf.
            mark = max((o.key for o in objects), default="")  # saw_directory keeps the greater one
            self.state.saw_directory(directory, self._parent_of(directory), mark, leaf=not children,
                                     token=self._token)
        return len(objects) + len(children), missing

    def _parent_of(self, directory: str) -> str | None:
        split = split_s3_name(directory)
        if split is None or not split[1]:
            return None
        return _dir_name(split[0], parent_prefix(split[1] + "/"))

    # -- deletions ----------------------------------------------------------------------------

    def _indexed_below(self, root: str) -> int:
        """S3 entities indexed below `root` and not deleted: one Solr count (0 without an index)."""
        if self.index is None:
            return self.state.count_below(root)
        prefix = root.removesuffix("/") + "/"
        return self.index.count("elements", "*:*", not_flagged_below(prefix, SourceType.S3))

    def _flag(self, root: S3Root, gone: list[tuple[str, bool]], listed: int) -> Iterator[Record]:
        """Flag what the root's listings proved gone, if the fail-safe allows it; refused
        deletions stay recorded, so the next run proves them again."""
        top = root.qualified_name
        expanded: dict[str, bool] = {}
        for name, is_dir in gone:
            expanded[name] = is_dir
            if is_dir:
                expanded.update(self.state.subtree(name))
        if not expanded:
            return
        indexed = self._indexed_below(top)
        if not self.guard.allows(top, would_flag=len(expanded), indexed=indexed, listed=listed):
            return
        now = self.clock()
        for name, is_dir in sorted(expanded.items()):
            yield Deletion(EntityRef(SourceType.S3, name, ElementType.DIRECTORY if is_dir else ElementType.FILE), now)
            self.report.deletions += 1
        for name, is_dir in gone:
            self.state.forget(name, is_dir)
        if expanded:
            log.info("S3 entities deleted", root=top, count=len(expanded))


__all__ = ["S3ExtractionError", "S3Extractor", "S3Report"]
