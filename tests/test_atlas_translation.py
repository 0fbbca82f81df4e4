"""navd/atlas.py without a server: the DSL forms and basic searches as the query text Solr reads
(user values always inside one term or phrase), what is refused and how it is named, a lineage
graph as Atlas' AtlasLineageInfo, the type names both ways."""

from __future__ import annotations

import pytest

from navd import atlas
from navd.errors import UsageError
from navd.index.query_syntax import parse, write
from navd.lineage.rules import Edge, LineageGraph, Node
from navd.model import ElementType, SourceType

TABLE = "(sourceType:HIVE AND type:(TABLE OR VIEW))"


@pytest.mark.parametrize(("dsl", "solr"), [
    ("hive_table", TABLE),
    ("from hive_table limit 5", TABLE),
    ("hive_table where qualifiedName = 'sales.t@c1'", f'({TABLE}) AND (qualifiedName:"sales.t@c1")'),
    ('hive_table where name = "o\'rders"', f'({TABLE}) AND (originalName:"o\'rders")'),
    ("hive_table where qualifiedName like 'sales.*'", f"({TABLE}) AND (qualifiedName:sales.*)"),
    ("hive_table where name like 'AND'", f"({TABLE}) AND (originalName:\\AND)"),
    ("hive_table where name = 'a' and owner = 'etl'",
     f'({TABLE}) AND ((originalName:"a") AND (owner:"etl"))'),
    # `and` binds tighter than `or`
    ("hive_db where name = 'a' or name = 'b' and owner = 'c'",
     '((sourceType:HIVE AND type:(DATABASE))) AND ((originalName:"a") OR ((originalName:"b") AND (owner:"c")))'),
])
def test_dsl_forms_as_solr_reads_them(dsl: str, solr: str) -> None:
    assert write(atlas.dsl_search(dsl).query) == solr


@pytest.mark.parametrize("value", ['x") OR *:* OR ("', "{!join from=identity to=identity fromIndex=runs}*:*",
                                   "_query_:\"{!func}1\"", "a\\' OR name = 'b"])
def test_a_dsl_value_stays_one_phrase(value: str) -> None:
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    query = atlas.dsl_search(f"hive_db where qualifiedName = '{escaped}'").query
    condition = query.clauses[1].node.query.clauses  # type: ignore[union-attr]
    assert len(condition) == 1
    assert condition[0].field == "qualifiedName"
    assert condition[0].node.text == value  # type: ignore[union-attr]
    # what is sent parses back to the same tree: the value never became syntax
    assert parse(write(query)) == query


@pytest.mark.parametrize(("dsl", "named"), [
    ("", "query: empty"),
    ("hive_table select name", "query: 'select' is not supported"),
    ("hive_table where name != 'a'", "query: after 'name' navd answers = or like, not '!='"),
    ("hive_table where name > 'a'", "query: '>' at character 23 is not part of the DSL"),
    ("hive_table where secret = 'a'", "query: 'secret' is not an attribute"),
    ("hive_table where name = a", "query: expected string"),
    ("hive_tabel", "query: 'hive_tabel' is not a type navd serves"),
    ("hive_table limit 5000", "limit: 5000 is out of range 1..1000"),
    ("hive_table; drop", "query: ';' at character 11 is not part of the DSL"),
])
def test_unsupported_dsl_is_named(dsl: str, named: str) -> None:
    with pytest.raises(UsageError) as refused:
        atlas.dsl_search(dsl)
    assert str(refused.value).startswith(named), str(refused.value)


def test_basic_search_parameters() -> None:
    search = atlas.basic_search({"typeName": "hive_column", "classification": "PII", "query": "orders",
                                 "excludeDeletedEntities": True, "offset": "20", "limit": 10,
                                 "entityFilters": {"condition": "OR", "criterion": [
                                     {"attributeName": "qualifiedName", "operator": "contains",
                                      "attributeValue": "@c1"},
                                     {"attributeName": "name", "operator": "startsWith", "attributeValue": "a b"}]}})
    assert write(search.query) == ("((sourceType:HIVE AND type:(FIELD))) AND "
                                   "((orders OR originalName:orders OR displayName:orders OR tags:orders)) AND (tags:PII) AND "
                                   "(deleted:false) AND ((qualifiedName:*@c1*) OR (originalName:a\\ b*))")
    assert (search.offset, search.limit) == (20, 10)
    # the query parameter is Solr's syntax, refused as `navd search` refuses it
    with pytest.raises(UsageError, match="^query: "):
        atlas.basic_search({"query": "{!join from=a to=b}x"})
    with pytest.raises(UsageError, match="^sortBy: "):
        atlas.basic_search({"sortBy": "name"})
    with pytest.raises(UsageError, match="^entityFilters: "):
        atlas.basic_search({"entityFilters": {"attributeName": "name", "operator": "regex", "attributeValue": "x"}})


def test_every_type_name_maps_back_to_its_elements() -> None:
    for name, pairs in atlas.ENTITY_TYPES.items():
        assert all(atlas.atlas_type(s, t) == name for s, t in pairs)
        assert parse(write(atlas.type_query(name))) == atlas.type_query(name)
    assert atlas.atlas_type("HDFS", "FILE") == atlas.atlas_type("HDFS", "DIRECTORY") == "hdfs_path"
    assert atlas.atlas_type("YARN", "OPERATION") == "navd_yarn_operation"
    assert "hive_table" in atlas.SUPERTYPES["DataSet"] and "hive_process" in atlas.SUPERTYPES["Process"]


def _node(id_: str, type_: ElementType, source: SourceType = SourceType.HIVE) -> Node:
    return Node(id_, f"{id_}@c1", type_.value, source.value, id_, deleted=False, indexed=True)


def test_lineage_graph_as_atlas_lineage_info() -> None:
    """Data flows through the operation of an execution; a column edge is a column-lineage
    process; a filter's CONTROL_FLOW and the placing edges are not Atlas lineage."""
    nodes = (_node("t", ElementType.TABLE), _node("s", ElementType.TABLE),
             _node("run", ElementType.OPERATION_EXECUTION, SourceType.SPARK),
             _node("job", ElementType.OPERATION, SourceType.SPARK),
             _node("t.u", ElementType.FIELD), _node("s.c", ElementType.FIELD))
    edges = (Edge("s", "run", "DATA_FLOW"), Edge("run", "t", "DATA_FLOW"), Edge("job", "run", "INSTANCE_OF"),
             Edge("s.c", "t.u", "DATA_FLOW", "EXPRESSION", "upper(c)"), Edge("s.c", "t.u", "CONTROL_FLOW"))
    info = atlas.lineage_info(LineageGraph("t", nodes, edges), {}, "INPUT", 3)
    assert info["baseEntityGuid"] == "t"
    column_lineage = next(g for g, e in info["guidEntityMap"].items() if e["typeName"] == "hive_column_lineage")
    assert {(r["fromEntityId"], r["toEntityId"]) for r in info["relations"]} == {
        ("s", "job"), ("job", "t"), ("s.c", column_lineage), (column_lineage, "t.u")}
    assert info["guidEntityMap"]["job"]["typeName"] == "spark_process"
    assert "run" not in info["guidEntityMap"]
    process = info["guidEntityMap"][column_lineage]["attributes"]
    assert (process["depenendencyType"], process["expression"]) == ("EXPRESSION", "upper(c)")
    assert process["qualifiedName"] == "t.u@c1:s.c@c1"
