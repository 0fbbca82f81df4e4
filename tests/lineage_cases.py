"""Lineage rule cases: small graphs as records, a start, options and the exact graph shown.

Shared by tests/test_lineage_rules.py (the in-memory store, no Solr) and tests/test_lineage.py
(the same cases through the real Solr store must show the same graphs). The expected results
are the behaviour of the walk as it was when it still ran on Solr directly.

Labels: every element of a graph has a short label (`s`, `job1`, `t.u`, ...). A shown node is
`label`, with ` [deleted]` and/or ` [unlinked]`; a shown edge is `source -> target TYPE`, with
the dependency type and `: expression` when the edge has them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

from navd.extractors.spark.records import stubs_for
from navd.lineage.responsibility import ExtractedNamespaces
from navd.lineage.rules import LineageGraph, LineageOptions
from navd.model import (
    Deletion,
    DependencyType,
    Element,
    ElementStub,
    ElementType,
    EntityRef,
    Record,
    Relation,
    RelationType,
    SourceType,
    hive_qualified_name,
    operation_qualified_name,
)
from navd.names import field_ref

CLUSTER = "primary"
DROPPED = datetime(2026, 11, 20, tzinfo=UTC)


@dataclasses.dataclass(frozen=True)
class Graph:
    records: tuple[Record, ...]
    labels: Mapping[str, str]  # identity -> label

    def identity(self, label: str) -> str:
        return next(i for i, shown in self.labels.items() if shown == label)


class _Builder:
    def __init__(self, db: str) -> None:
        self.db = db
        self.records: list[Record] = []
        self.labels: dict[str, str] = {}

    def add(self, label: str, element: Element, *, stub: bool = False) -> Element:
        self.records.append(ElementStub(element) if stub else element)
        self.labels[element.identity] = label
        return element

    def table(self, name: str, *, deleted: bool = False, stub: bool = False) -> Element:
        properties = {"knownFrom": "spark"} if stub else {}
        return self.add(name, Element(SourceType.HIVE, ElementType.TABLE, hive_qualified_name(CLUSTER, self.db, name),
                                      name=name, deleted=deleted, delete_time=DROPPED if deleted else None,
                                      properties=properties), stub=stub)

    def column(self, parent: Element, name: str, *, stub: bool = False) -> Element:
        properties = {"knownFrom": "spark"} if stub else {}
        label = f"{self.labels[parent.identity]}.{name}"
        element = self.add(label, Element(SourceType.HIVE, ElementType.FIELD,
                                          parent.qualified_name.replace("@", f".{name}@"), name=name,
                                          parent=parent.ref, properties=properties), stub=stub)
        self.relate(RelationType.PARENT_CHILD, parent, element)
        return element

    def execution(self, name: str, source: SourceType = SourceType.SPARK) -> Element:
        return self.add(name, Element(source, ElementType.OPERATION_EXECUTION,
                                      operation_qualified_name(source, f"{self.db}-{name}", "1"), name=name))

    def ref(self, label: str, ref: EntityRef) -> EntityRef:
        self.labels[ref.identity] = label
        return ref

    def relate(self, type_: RelationType, one: Element | EntityRef, two: Element | EntityRef,
               **extra: object) -> None:
        ref1 = one.ref if isinstance(one, Element) else one
        ref2 = two.ref if isinstance(two, Element) else two
        self.records.append(Relation(type_, ref1, ref2, **extra))  # type: ignore[arg-type]

    def flow(self, one: Element | EntityRef, two: Element | EntityRef, **extra: object) -> None:
        self.relate(RelationType.DATA_FLOW, one, two, **extra)

    def graph(self) -> Graph:
        return Graph(tuple(self.records), dict(self.labels))


# -- graphs -----------------------------------------------------------------------------------

def pipeline(db: str) -> Graph:
    """s --(job1)--> t --(job2)--> u, with columns, an input nobody indexed, and a template."""
    g = _Builder(db)
    s, t, u = g.table("s"), g.table("t"), g.table("u")
    s_c, s_k, t_u = g.column(s, "c"), g.column(s, "k"), g.column(t, "u")
    job1, job2 = g.execution("job1"), g.execution("job2")
    template = g.add("template", Element(SourceType.SPARK, ElementType.OPERATION,
                                         operation_qualified_name(SourceType.SPARK, f"{db}-ctas"), name="ctas"))
    ghost = g.ref("ghost", EntityRef(SourceType.HIVE, hive_qualified_name(CLUSTER, db, "ghost"), ElementType.TABLE))
    g.flow(s, job1)
    g.flow(job1, t)
    g.flow(t, job2)
    g.flow(job2, u)
    g.flow(ghost, job1, linked1=False)
    g.relate(RelationType.INSTANCE_OF, template, job1)
    g.flow(s_c, t_u, dependency_type=DependencyType.EXPRESSION, expression="upper(c)",
           discriminator=job1.qualified_name)
    g.relate(RelationType.CONTROL_FLOW, s_k, t_u, discriminator=job1.qualified_name)
    return g.graph()


def temporaries(db: str) -> Graph:
    """Lineage across temporary tables: source -> temp (dropped) -> merged."""
    g = _Builder(db)
    source, temp, merged = g.table("source"), g.table("temp", deleted=True), g.table("merged")
    create, insert = g.execution("create"), g.execution("insert")
    g.flow(source, create)
    g.flow(create, temp)
    g.flow(temp, insert)
    g.flow(insert, merged)
    return g.graph()


def tree(db: str) -> Graph:
    """Two levels of inputs: `root` is written by `j` from `a`, `b`, `c`; each of them is written
    by its own job from two tables (`a1`, `a2`, ...). For the node cap: which nodes it cuts."""
    g = _Builder(db)
    root, job = g.table("root"), g.execution("j")
    g.flow(job, root)
    for name in ("a", "b", "c"):
        middle, feeder = g.table(name), g.execution(f"j{name}")
        g.flow(middle, job)
        g.flow(feeder, middle)
        for n in (1, 2):
            g.flow(g.table(f"{name}{n}"), feeder)
    return g.graph()


def fan_out(db: str, width: int, layers: int = 3) -> Graph:
    """`root` (3 columns) read by `width` jobs, each writing its own table, each of those read by
    a job writing the next layer's table, `layers` deep; every column copied from the one it
    reads. For the walk's round trips: they must not grow with `width`."""
    g = _Builder(db)
    root = g.table("root")
    previous = [(root, [g.column(root, f"c{k}") for k in range(3)])] * width
    for layer in range(1, layers + 1):
        current = []
        for i, (source, source_columns) in enumerate(previous):
            target, job = g.table(f"l{layer}_{i}"), g.execution(f"j{layer}_{i}")
            g.flow(source, job)
            g.flow(job, target)
            columns = [g.column(target, f"c{k}") for k in range(3)]
            for one, two in zip(source_columns, columns):
                g.flow(one, two, discriminator=job.qualified_name)
            current.append((target, columns))
        previous = current
    return g.graph()


def physical(db: str) -> Graph:
    """A job reads a table's directory by path and writes report."""
    g = _Builder(db)
    orders = g.table("orders")
    directory = g.add("dir", Element(SourceType.HDFS, ElementType.DIRECTORY, f"hdfs://ns1/warehouse/{db}.db/orders",
                                     name="orders"))
    report, job = g.table("report"), g.execution("job")
    g.relate(RelationType.LOGICAL_PHYSICAL, orders, directory)
    g.flow(directory, job)
    g.flow(job, report)
    return g.graph()


def yarn(db: str) -> Graph:
    """A YARN application ran a Spark run whose SQL execution read a and wrote b."""
    g = _Builder(db)
    app = g.add("app", Element(SourceType.YARN, ElementType.OPERATION_EXECUTION,
                               operation_qualified_name(SourceType.YARN, f"application_{db}"), name="app"))
    run, sql = g.execution("run"), g.execution("sql")
    a, b = g.table("a"), g.table("b")
    g.relate(RelationType.LOGICAL_PHYSICAL, run, app)
    g.relate(RelationType.PARENT_CHILD, run, sql)
    g.flow(a, sql)
    g.flow(sql, b)
    return g.graph()


def stubs(db: str, *, raw_dropped: bool = False) -> Graph:
    """raw (a stub only read) -j1-> mid (a stub j1 wrote) -j2-> final, with stub columns."""
    g = _Builder(db)
    raw, mid, final = g.table("raw", stub=True), g.table("mid", stub=True), g.table("final")
    raw_c, mid_c = g.column(raw, "c", stub=True), g.column(mid, "c", stub=True)
    j1, j2 = g.execution("j1"), g.execution("j2")
    g.flow(raw, j1)
    g.flow(j1, mid)
    g.flow(mid, j2)
    g.flow(j2, final)
    g.flow(raw_c, mid_c, dependency_type=DependencyType.SIMPLE, discriminator=j1.qualified_name)
    if raw_dropped:
        g.records.append(Deletion(raw.ref, DROPPED))
    return g.graph()


def references(db: str) -> Graph:
    """`job` reads one reference no extractor has indexed of each kind of namespace (a local file,
    a path of the file system `hdfs://nameservice1`, an object of the bucket `lake`, a table of
    the cluster's metastore and one of another cluster's), each only its stub and an unlinked
    DATA_FLOW as a job's source writes them, and writes the table `out`."""
    g = _Builder(db)
    out, job = g.table("out"), g.execution("job")
    for label, source, name, type_ in (
            ("file", SourceType.HDFS, f"file:///data/{db}/in", ElementType.DIRECTORY),
            ("hdfs", SourceType.HDFS, f"hdfs://nameservice1/data/{db}/in", ElementType.DIRECTORY),
            ("s3", SourceType.S3, f"s3a://lake/{db}/in", ElementType.DIRECTORY),
            ("hive", SourceType.HIVE, hive_qualified_name(CLUSTER, db, "in"), ElementType.TABLE),
            ("other", SourceType.HIVE, hive_qualified_name("other", db, "in"), ElementType.TABLE)):
        stub = g.add(label, Element(source, type_, name, name=label, properties={"knownFrom": "openlineage"}),
                     stub=True)
        g.flow(stub, job, linked1=False)
    g.flow(job, out)
    return g.graph()


#: what `references` names, crawled: the cluster's metastore, file system and bucket
CRAWLED = ExtractedNamespaces(hive_clusters=frozenset({CLUSTER}), file_systems=frozenset({"hdfs://nameservice1"}),
                              s3_buckets=frozenset({"lake"}))


#: the days of `history`: run1 and run2 read `a` into `b`, run3 (the job rewritten) reads `c`,
#: then `a` is dropped
DAY = tuple(datetime(2026, 11, d, 10, tzinfo=UTC) for d in range(1, 6))


def at(day: int, hour: int = 12) -> datetime:
    return DAY[day - 1].replace(hour=hour)


def history(db: str) -> Graph:
    """A job over days: run1 (day 1) and run2 (day 2) write `b` from `a`, run3 (day 3) writes it
    from `c`; `a` is dropped on day 4. Each run's relations carry its start and end."""
    g = _Builder(db)
    a, b, c = g.table("a"), g.table("b"), g.table("c")
    a_x, b_y, c_x = g.column(a, "x"), g.column(b, "y"), g.column(c, "x")
    for day, name, source, column in ((1, "run1", a, a_x), (2, "run2", a, a_x), (3, "run3", c, c_x)):
        run = g.execution(name)
        seen = {"first_seen": DAY[day - 1], "last_seen": DAY[day - 1] + timedelta(minutes=5)}
        g.flow(source, run, **seen)
        g.flow(run, b, **seen)
        g.flow(column, b_y, dependency_type=DependencyType.SIMPLE, discriminator=run.qualified_name, **seen)
    g.records.append(Deletion(a.ref, DAY[3]))
    return g.graph()


def dropped_stub(db: str) -> Graph:
    return stubs(db, raw_dropped=True)


def dotted(db: str) -> Graph:
    """A Spark job copied s's column `b.c` (flattened JSON) into t's `a b` and filtered on s's
    `ünï.x`: column edges and stubs as the Spark extractor writes them (records.stubs_for), so
    the columns hang under their own tables, not under a phantom `s.b`."""
    g = _Builder(db)
    s, t = g.table("s"), g.table("t")
    job = g.execution("job")
    g.flow(s, job)
    g.flow(job, t)
    dotted_, spaced, accented = field_ref(s.ref, "b.c"), field_ref(t.ref, "a b"), field_ref(s.ref, "ünï.x")
    g.ref("s.b.c", dotted_)
    g.ref("t.a_b", spaced)  # labels hold no space (the notation splits on them)
    g.ref("s.ünï.x", accented)
    columns = [Relation(RelationType.DATA_FLOW, dotted_, spaced, linked1=False, linked2=False,
                        dependency_type=DependencyType.SIMPLE, discriminator=job.qualified_name),
               Relation(RelationType.CONTROL_FLOW, accented, spaced, linked1=False, linked2=False,
                        discriminator=job.qualified_name)]
    g.records.extend(columns)
    g.records.extend(stubs_for(columns, None))
    return g.graph()


def cycle(db: str) -> Graph:
    """a -j1-> b -j2-> a."""
    g = _Builder(db)
    a, b = g.table("a"), g.table("b")
    j1, j2 = g.execution("j1"), g.execution("j2")
    g.flow(a, j1)
    g.flow(j1, b)
    g.flow(b, j2)
    g.flow(j2, a)
    return g.graph()


# -- cases ------------------------------------------------------------------------------------

UP, DOWN = "upstream", "downstream"


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    graph: Callable[[str], Graph]
    start: str  # the label of the root
    options: LineageOptions
    edges: frozenset[str]
    nodes: frozenset[str] | None = None  # None: the ends of the edges
    truncated: bool = False
    lookup: str | None = None  # the start spelled as a user may type it (`{db}`, `{DB}`: the database)


def case(id_: str, graph: Callable[[str], Graph], start: str, edges: set[str], *, nodes: set[str] | None = None,
         truncated: bool = False, lookup: str | None = None, **options: object) -> Case:
    return Case(id_, graph, start, LineageOptions(**options), frozenset(edges),  # type: ignore[arg-type]
                None if nodes is None else frozenset(nodes), truncated, lookup)


DF, CF, LP, PC, IO = "DATA_FLOW", "CONTROL_FLOW", "LOGICAL_PHYSICAL", "PARENT_CHILD", "INSTANCE_OF"

CASES: tuple[Case, ...] = (
    # direction, and executions contracted away
    case("upstream contracts the execution", pipeline, "t", {f"s -> t {DF}"}, direction=UP),
    case("downstream contracts the execution", pipeline, "t", {f"t -> u {DF}"}, direction=DOWN),
    case("both directions", pipeline, "t", {f"s -> t {DF}", f"t -> u {DF}"}),
    case("nothing upstream of a source", pipeline, "s", set(), nodes={"s"}, direction=UP),
    case("nothing downstream of a sink", pipeline, "u", set(), nodes={"u"}, direction=DOWN),
    # depth counts dataset hops, not executions
    case("downstream depth 1", pipeline, "s", {f"s -> t {DF}"}, direction=DOWN, depth=1),
    case("downstream depth 2", pipeline, "s", {f"s -> t {DF}", f"t -> u {DF}"}, direction=DOWN, depth=2),
    case("upstream depth 1", pipeline, "u", {f"t -> u {DF}"}, direction=UP, depth=1),
    case("both depth 1", pipeline, "t", {f"s -> t {DF}", f"t -> u {DF}"}, depth=1),
    # operations: executions, templates and unresolved inputs shown
    case("operations show executions, template, unlinked input", pipeline, "t",
         {f"s -> job1 {DF}", f"ghost [unlinked] -> job1 {DF}", f"job1 -> t {DF}", f"template -> job1 {IO}"},
         nodes={"t", "s", "ghost [unlinked]", "job1", "template"}, direction=UP, operations=True),
    case("operations downstream", pipeline, "t", {f"t -> job2 {DF}", f"job2 -> u {DF}"},
         direction=DOWN, operations=True),
    case("an execution's own lineage", pipeline, "job1", {f"s -> job1 {DF}"}, direction=UP),
    case("an execution with operations", pipeline, "job1",
         {f"s -> job1 {DF}", f"ghost [unlinked] -> job1 {DF}", f"template -> job1 {IO}"},
         direction=UP, operations=True),
    case("a template's executions are not its lineage", pipeline, "template", set(), nodes={"template"},
         operations=True),
    # columns
    case("columns upstream", pipeline, "t",
         {f"s -> t {DF}", f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"}, direction=UP, columns=True),
    case("columns downstream of the source", pipeline, "s",
         {f"s -> t {DF}", f"t -> u {DF}", f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"},
         direction=DOWN, columns=True),
    case("a column root implies columns", pipeline, "t.u", {f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"},
         direction=UP),
    case("a column root downstream implies columns", pipeline, "s.c", {f"s.c -> t.u {DF} EXPRESSION: upper(c)"},
         direction=DOWN),
    case("a column root with operations shows no executions", pipeline, "t.u",
         {f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"}, direction=UP, operations=True),
    case("a column with no column edges has no lineage", pipeline, "s.k", set(), nodes={"s.k"}, direction=UP),
    case("a column upstream", pipeline, "t.u", {f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"},
         direction=UP, columns=True),
    case("columns with operations", pipeline, "t",
         {f"s -> job1 {DF}", f"ghost [unlinked] -> job1 {DF}", f"job1 -> t {DF}", f"template -> job1 {IO}",
          f"s.c -> t.u {DF} EXPRESSION: upper(c)", f"s.k -> t.u {CF}"},
         direction=UP, columns=True, operations=True),
    # column names with dots, spaces and unicode: under their own tables
    case("dotted columns under their tables", dotted, "t",
         {f"s -> t {DF}", f"s.b.c -> t.a_b {DF} SIMPLE", f"s.ünï.x -> t.a_b {CF}"}, direction=UP, columns=True),
    case("downstream of a table with a dotted column", dotted, "s",
         {f"s -> t {DF}", f"s.b.c -> t.a_b {DF} SIMPLE", f"s.ünï.x -> t.a_b {CF}"}, direction=DOWN, columns=True),
    case("a dotted column root", dotted, "s.b.c", {f"s.b.c -> t.a_b {DF} SIMPLE"}, direction=DOWN),
    case("a spaced column found by its typed name", dotted, "t.a_b",
         {f"s.b.c -> t.a_b {DF} SIMPLE", f"s.ünï.x -> t.a_b {CF}"}, direction=UP, lookup="{DB}.T.A B@PRIMARY"),
    # deleted entities: hidden, their connection kept; shown with `deleted`
    case("a dropped temporary keeps the connection", temporaries, "merged", {f"source -> merged {DF}"}, direction=UP),
    case("deleted shows the dropped temporary", temporaries, "merged",
         {f"source -> temp [deleted] {DF}", f"temp [deleted] -> merged {DF}"}, direction=UP, deleted=True),
    case("a deleted root is shown", temporaries, "temp", {f"source -> temp [deleted] {DF}"}, direction=UP),
    case("a hidden deleted entity still uses up a level", temporaries, "merged", set(), nodes={"merged"},
         direction=UP, depth=1),
    case("deleted within depth 1", temporaries, "merged", {f"temp [deleted] -> merged {DF}"},
         direction=UP, depth=1, deleted=True),
    case("operations through a hidden deleted table", temporaries, "merged",
         {f"source -> create {DF}", f"create -> insert {DF}", f"insert -> merged {DF}"},
         direction=UP, operations=True),
    # logical-physical: from the physical end to the logical one only
    case("a path read leads to the table it backs", physical, "report",
         {f"dir -> report {DF}", f"orders -> dir {LP}"}, direction=UP),
    case("from the table its directory is not lineage", physical, "orders", set(), nodes={"orders"}),
    case("downstream of a directory reaches its table too", physical, "dir",
         {f"dir -> report {DF}", f"orders -> dir {LP}"}, direction=DOWN),
    case("the table behind a path is one level further", physical, "report", {f"dir -> report {DF}"},
         direction=UP, depth=1),
    # parent-child between executions: downwards only
    case("an application reaches its Spark work's datasets", yarn, "app",
         {f"run -> app {LP}", f"run -> sql {PC}", f"a -> sql {DF}", f"sql -> b {DF}"}, operations=True),
    case("an application's datasets without operations", yarn, "app", {f"a -> b {DF}"},
         nodes={"app", "a", "b"}),
    case("an application downstream alone", yarn, "app", set(), nodes={"app"}, direction=DOWN),
    case("never up from an execution to its parent", yarn, "b", {f"a -> sql {DF}", f"sql -> b {DF}"},
         direction=UP, operations=True),
    # stubs: one only read is an unresolved reference; one an operation wrote is an entity
    case("a stub only read is hidden like an unlinked input", stubs, "final", {f"mid -> final {DF}"}, direction=UP),
    case("operations show the unread stub as unlinked", stubs, "final",
         {f"raw [unlinked] -> j1 {DF}", f"j1 -> mid {DF}", f"mid -> j2 {DF}", f"j2 -> final {DF}"},
         direction=UP, operations=True),
    case("columns of an unresolved stub are unresolved", stubs, "mid",
         {f"raw [unlinked] -> j1 {DF}", f"j1 -> mid {DF}", f"raw.c [unlinked] -> mid.c {DF} SIMPLE"},
         direction=UP, columns=True, operations=True),
    case("columns of an unresolved stub are hidden", stubs, "mid", set(), nodes={"mid"}, direction=UP, columns=True),
    # references no extractor indexed: hidden while one is responsible for their namespace
    case("Navigator's rule: every reference only read waits", references, "out", set(), nodes={"out"}, direction=UP),
    case("no extractor enabled: every reference is an entity", references, "out",
         {f"{r} -> out {DF}" for r in ("file", "hdfs", "s3", "hive", "other")}, direction=UP,
         extracted=ExtractedNamespaces()),
    case("references of crawled namespaces wait, the others are entities", references, "out",
         {f"file -> out {DF}", f"other -> out {DF}"}, direction=UP, extracted=CRAWLED),
    case("operations show the waiting references as unlinked", references, "out",
         {f"file -> job {DF}", f"other -> job {DF}", f"hdfs [unlinked] -> job {DF}", f"s3 [unlinked] -> job {DF}",
          f"hive [unlinked] -> job {DF}", f"job -> out {DF}"}, direction=UP, operations=True, extracted=CRAWLED),
    case("a stub no extractor indexes and its columns are entities", stubs, "mid",
         {f"raw -> mid {DF}", f"raw.c -> mid.c {DF} SIMPLE"}, direction=UP, columns=True,
         extracted=ExtractedNamespaces()),
    case("an unlinked input of no extracted namespace is an entity", pipeline, "t",
         {f"s -> t {DF}", f"ghost -> t {DF}"}, direction=UP, extracted=ExtractedNamespaces()),
    case("a dropped stub existed: hidden as deleted", dropped_stub, "final", {f"mid -> final {DF}"}, direction=UP),
    case("a dropped stub shown with deleted", dropped_stub, "final",
         {f"raw [deleted] -> mid {DF}", f"mid -> final {DF}"}, direction=UP, deleted=True),
    # cycles, the node cap, finding the start
    case("a cycle ends", cycle, "a", {f"a -> b {DF}", f"b -> a {DF}"}, direction=DOWN),
    case("a cycle both ways", cycle, "b", {f"a -> b {DF}", f"b -> a {DF}"}),
    case("the node cap truncates", temporaries, "merged", {f"temp [deleted] -> merged {DF}"}, truncated=True,
         direction=UP, deleted=True, max_nodes=3),
    case("found by another spelling", pipeline, "t", {f"s -> t {DF}"}, direction=UP, lookup="{DB}.T@PRIMARY"),
    case("found by a path spelling", physical, "dir", {f"dir -> report {DF}", f"orders -> dir {LP}"},
         direction=DOWN, lookup="hdfs://NS1/warehouse/{db}.db/orders/"),
    # as of a moment: relations from their first execution, deletions from their time
    case("now: the dropped input is hidden", history, "b", {f"c -> b {DF}"}, direction=UP),
    case("as of before the first run: nothing", history, "b", set(), nodes={"b"}, direction=UP, as_of=at(1, 9)),
    case("as of the first run's start", history, "b", {f"a -> b {DF}"}, direction=UP, as_of=DAY[0]),
    case("as of day 3: both inputs, a not yet dropped", history, "b", {f"a -> b {DF}", f"c -> b {DF}"},
         direction=UP, as_of=at(3)),
    case("as of day 5 with deleted: a shown dropped", history, "b", {f"a [deleted] -> b {DF}", f"c -> b {DF}"},
         direction=UP, as_of=at(5), deleted=True),
    case("as of day 1, columns: only run1's column edge", history, "b",
         {f"a -> b {DF}", f"a.x -> b.y {DF} SIMPLE"}, direction=UP, as_of=at(1), columns=True),
    case("as of day 1, downstream", history, "a", {f"a -> b {DF}"}, direction=DOWN, as_of=at(1)),
    case("as of day 3, operations: each run shown", history, "b",
         {f"a -> run1 {DF}", f"a -> run2 {DF}", f"c -> run3 {DF}", f"run1 -> b {DF}", f"run2 -> b {DF}",
          f"run3 -> b {DF}"}, direction=UP, as_of=at(3), operations=True),
    # the latest run only
    case("latest: the rewritten job's input only", history, "b", {f"c -> b {DF}"}, direction=UP, latest=True,
         deleted=True),
    case("latest as of day 2: the job as it then was", history, "b", {f"a -> b {DF}"}, direction=UP, latest=True,
         as_of=at(2)),
    case("latest as of day 2, operations: run2, not run1", history, "b", {f"a -> run2 {DF}", f"run2 -> b {DF}"},
         direction=UP, latest=True, as_of=at(2), operations=True),
    case("latest as of day 3, downstream of a: no longer read into b", history, "a", set(), nodes={"a"},
         direction=DOWN, latest=True, as_of=at(3)),
    case("latest as of day 2, downstream of a", history, "a", {f"a -> b {DF}"}, direction=DOWN, latest=True,
         as_of=at(2)),
    case("latest as of day 3, downstream of c", history, "c", {f"c -> b {DF}"}, direction=DOWN, latest=True,
         as_of=at(3)),
)


def start_name(case_: Case, graph: Graph, db: str) -> str:
    if case_.lookup is not None:
        return case_.lookup.replace("{db}", db).replace("{DB}", db.upper())
    return graph.identity(case_.start)


def shown(graph: LineageGraph, labels: Mapping[str, str]) -> tuple[frozenset[str], frozenset[str]]:
    """(nodes, edges) of a lineage graph in the cases' notation."""
    by_id = {n.id: n for n in graph.nodes}

    def node(node_id: str) -> str:
        n = by_id[node_id]
        return labels[n.id] + (" [deleted]" if n.deleted else "") + ("" if n.indexed else " [unlinked]")

    edges = frozenset(f"{node(e.source)} -> {node(e.target)} {e.type}"
                      + (f" {e.dependency_type}" if e.dependency_type else "")
                      + (f": {e.expression}" if e.expression else "") for e in graph.edges)
    return frozenset(node(n.id) for n in graph.nodes), edges


def expected_nodes(case_: Case) -> frozenset[str]:
    if case_.nodes is not None:
        return case_.nodes
    return frozenset(end for edge in case_.edges for end in _edge_ends(edge))


def _edge_ends(edge: str) -> tuple[str, str]:
    source, rest = edge.split(" -> ", 1)
    words = rest.split(" ")
    # the target label runs to the relation type (its flags are bracketed words)
    target = [words[0]]
    for word in words[1:]:
        if word.startswith("[") and word.endswith("]"):
            target.append(word)
        else:
            break
    return source, " ".join(target)
