"""Pure tests of the linker's alias rules and relation rewriting."""

from __future__ import annotations

import random

from navd.linker.aliases import AliasRules, candidate_names, candidates, endpoint_spellings
from navd.index.documents import stored_relation_identity as relation_identity
from navd.linker.relink import Target, relink
from navd.index.documents import relation_document
from navd.model import ElementType, EntityRef, InvalidName, Relation, RelationType, SourceType, path_qualified_name

RULES = AliasRules(cluster="primary", default_fs="hdfs://nameservice1",
                   fs_aliases={"nn1:8020": "hdfs://nameservice1", "hdfs://NN2:8020": "hdfs://nameservice1"})
H, D = SourceType.HDFS, ElementType.DIRECTORY


def names(qn: str, source: SourceType = H, type_: ElementType | None = D) -> list[str]:
    return [n for _, n in candidates(qn, source, type_, RULES)]


def test_authority_alias_maps_to_nameservice() -> None:
    assert names("hdfs://nn1:8020/wh/t")[0] == "hdfs://nameservice1/wh/t"
    assert names("hdfs://NN2:8020/wh/t/")[0] == "hdfs://nameservice1/wh/t"
    # the canonical name also finds elements indexed under an alias authority
    assert set(names("hdfs://nameservice1/wh/t")) >= {"hdfs://nn1:8020/wh/t", "hdfs://nn2:8020/wh/t"}


def test_unknown_authority_is_not_aliased() -> None:
    assert names("hdfs://other:8020/p") == ["hdfs://other:8020/p"]


def test_bare_path_and_trailing_slash() -> None:
    assert names("/wh/sales.db/orders/")[0] == "hdfs://nameservice1/wh/sales.db/orders"
    assert names("/p", type_=ElementType.FILE)[0] == "hdfs://nameservice1/p"
    assert AliasRules(cluster="c").canonical_path("/p") is None  # no default FS: not a path


def test_canonical_path_is_path_qualified_name_with_the_alias_mapped() -> None:
    """canonical_path's shortcut (a written prefix's canonical form kept, for paths with
    nothing to normalise) gives what normalising the whole name gives, valid or not: names
    made of pieces that trip the normalisation (case, slashes, dots, bad authorities, colons)."""
    rules = AliasRules(cluster="c", default_fs="hdfs://ns1",
                       fs_aliases={"nn1:8020": "hdfs://ns1", "s3://old": "s3a://new"})
    pieces = ["hdfs:", "HDFS:", "s3:", "S3N:", "file:", "/", "//", "///", "nn1:8020", "NN1:8020", "ns1",
              "u@Host", "[::1]:9", "h:99999", "[x", "a", ".", "..", "b.", ".c", ":", "x:y", "", "é", "old"]
    rng = random.Random(7)
    checked = set()
    for _ in range(20000):
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        try:
            qualified = path_qualified_name(name, "hdfs://ns1")
        except InvalidName:
            expected = None
        else:
            scheme, _, rest = qualified.partition("://")
            authority, slash, path = rest.partition("/")
            prefix = f"{scheme}://{authority}"
            expected = {"hdfs://nn1:8020": "hdfs://ns1", "s3a://old": "s3a://new"}.get(prefix, prefix) + slash + path
        assert rules.canonical_path(name) == expected, name
        checked.add(expected is not None)
    assert checked == {True, False}
    assert 0 < len(rules._prefixes) < 1000  # the shortcut was taken, its cache bounded by the prefixes


def test_file_scheme() -> None:
    assert names("file:/tmp/x")[0] == "file:///tmp/x"
    assert names("file:///tmp/x/")[0] == "file:///tmp/x"


def test_catalog_names() -> None:
    t = ElementType.TABLE
    assert candidates("spark_catalog.sales.orders@primary", SourceType.SPARK, t, RULES)[0] == \
        (SourceType.HIVE, "sales.orders@primary")
    assert candidates("Sales.ORDERS@Primary", SourceType.HIVE, t, RULES)[0] == (SourceType.HIVE, "sales.orders@primary")
    assert candidates("sales.orders", SourceType.HIVE, t, RULES)[0] == (SourceType.HIVE, "sales.orders@primary")
    assert candidates("`spark_catalog`.`sales`.`orders`", SourceType.SPARK, t, RULES)[0] == \
        (SourceType.HIVE, "sales.orders@primary")
    # a column db.t.c is not mistaken for catalog.db.t
    assert candidates("spark_catalog.db.t@primary", SourceType.HIVE, ElementType.FIELD, RULES)[0] == \
        (SourceType.HIVE, "spark_catalog.db.t@primary")
    assert candidates("spark_catalog.db.t.C@primary", SourceType.SPARK, ElementType.FIELD, RULES)[0] == \
        (SourceType.HIVE, "db.t.c@primary")
    # a column's name may hold dots, spaces, '@' and backticks: never part of its table's name
    f = ElementType.FIELD
    assert candidates("spark_catalog.db.t.B.C@primary", SourceType.SPARK, f, RULES)[0] == \
        (SourceType.HIVE, "db.t.b.c@primary")
    assert candidates("DB.T.`Addr.Zip Code`", SourceType.HIVE, f, RULES)[0] == \
        (SourceType.HIVE, "db.t.addr.zip code@primary")
    assert candidates("db.t.e-mail@home@primary", SourceType.HIVE, f, RULES)[0] == \
        (SourceType.HIVE, "db.t.e-mail@home@primary")
    assert candidates("ice.db.t.b.c@primary", SourceType.SPARK, f, RULES)[0] == \
        (SourceType.SPARK, "ice.db.t.b.c@primary")
    assert candidates("db@primary", SourceType.HIVE, f, RULES) == [(SourceType.HIVE, "db@primary")]  # no table
    # partition values keep their case
    assert candidates("DB.T@primary/k=AbC", SourceType.HIVE, ElementType.PARTITION, RULES)[0] == \
        (SourceType.HIVE, "db.t@primary/k=AbC")
    # other V2 catalogs stay SPARK
    assert candidates("iceberg.db.t@primary", SourceType.SPARK, t, RULES)[0] == (SourceType.SPARK, "iceberg.db.t@primary")


def test_operations_only_exact() -> None:
    assert candidates("spark://app/1", SourceType.SPARK, ElementType.OPERATION_EXECUTION, RULES) == \
        [(SourceType.SPARK, "spark://app/1")]


def test_candidate_names_function() -> None:
    assert candidate_names("hdfs://nn1:8020/p/", "HDFS", "DIRECTORY", default_fs="hdfs://nameservice1",
                           nameservice_aliases={"nn1:8020": "hdfs://nameservice1"})[0] == "hdfs://nameservice1/p"


def test_path_field_takes_its_paths_aliases() -> None:
    """A column of a path (`<path>#<column>`): the path part is aliased, the column never."""
    field = ElementType.FIELD
    assert names("hdfs://nn1:8020/out#b.c", type_=field) == [
        "hdfs://nameservice1/out#b.c", "hdfs://nn1:8020/out#b.c", "hdfs://nn2:8020/out#b.c"]
    assert set(names("hdfs://nameservice1/out#x/../y", type_=field)) >= {
        "hdfs://nameservice1/out#x/../y", "hdfs://nn1:8020/out#x/../y", "hdfs://nn2:8020/out#x/../y"}
    assert names("file:///tmp/x#id", type_=field) == ["file:///tmp/x#id"]


def test_spellings_are_the_reverse_of_candidates() -> None:
    for source, qn, type_ in [(H, "hdfs://nameservice1/wh/t", D), (H, "file:///tmp/x", ElementType.FILE),
                              (H, "hdfs://nameservice1/wh/t#b.c d", ElementType.FIELD),
                              (SourceType.HIVE, "db.t@primary", ElementType.TABLE),
                              (SourceType.HIVE, "db.t.c@primary", ElementType.FIELD),
                              (SourceType.HIVE, "db.t.b.c d@primary", ElementType.FIELD)]:
        spellings = endpoint_spellings(qn, source, type_, RULES)
        assert len(spellings) > 1
        for s, name in spellings:
            assert (source, qn) in candidates(name, s, type_, RULES), name
    assert (H, "/wh/t") in endpoint_spellings("hdfs://nameservice1/wh/t", H, D, RULES)
    assert (SourceType.SPARK, "spark_catalog.db.t@primary") in \
        endpoint_spellings("db.t@primary", SourceType.HIVE, ElementType.TABLE, RULES)


def test_relink_computes_the_extractors_identity() -> None:
    exe = EntityRef(SourceType.SPARK, "spark://app/1", ElementType.OPERATION_EXECUTION)
    seen = EntityRef(H, "hdfs://nn1:8020/wh/t", D)
    real = EntityRef(H, "hdfs://nameservice1/wh/t", D)
    unlinked = relation_document(Relation(RelationType.DATA_FLOW, exe, seen, linked2=False, discriminator="x"))
    expected = relation_document(Relation(RelationType.DATA_FLOW, exe, real, discriminator="x"))
    new = relink(unlinked, {2: Target(real.identity, real.qualified_name, "DIRECTORY", "HDFS")})
    assert new == expected
    assert relation_identity(unlinked) == unlinked["identity"]
    assert relink(unlinked, {}) is None
