"""The configsets: explicit schemas, one shared solrconfig, fields for navd's queries."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from navd.index.admin import CONFIGSETS, configset_dir

CONF_SETS = sorted(CONFIGSETS.values())


def schema(configset: str) -> ET.Element:
    return ET.parse(configset_dir(configset) / "schema.xml").getroot()


def test_every_configset_shares_one_solrconfig() -> None:
    texts = {c: (configset_dir(c) / "solrconfig.xml").read_text() for c in CONF_SETS}
    assert len(set(texts.values())) == 1, "solrconfig.xml differs between configsets"
    text = texts[CONF_SETS[0]]
    assert "ClassicIndexSchemaFactory" in text
    assert "add-unknown-fields" not in text and "AddSchemaFields" not in text


def test_shared_field_types_are_identical() -> None:
    def types(configset: str) -> list[str]:
        return sorted(ET.tostring(t, encoding="unicode").strip() for t in schema(configset).iter("fieldType"))
    assert types("nav_elements") == types("nav_relations") == types("nav_runs")


@pytest.mark.parametrize("configset", CONF_SETS)
def test_schema_is_explicit_and_consistent(configset: str) -> None:
    root = schema(configset)
    assert root.findtext("uniqueKey") == "identity"
    types = {t.get("name") for t in root.iter("fieldType")}
    fields = {f.get("name"): f for f in root.iter("field")}
    for field in [*fields.values(), *root.iter("dynamicField")]:
        assert field.get("type") in types, f"{configset}: {field.get('name')} has undefined type"
    for copy in root.iter("copyField"):
        assert copy.get("source") in fields and copy.get("dest") in fields
    assert not [d for d in root.iter("dynamicField") if d.get("name") == "*"], "catch-all field"


def test_elements_fields_fit_navds_queries() -> None:
    fields = {f.get("name"): f.get("type") for f in schema("nav_elements").iter("field")}
    for exact in ("identity", "qualifiedName", "type", "sourceType", "extractorRunId", "parentId"):
        assert fields[exact] == "string"
    assert fields["deleted"] == "boolean"
    for date in ("created", "lastModified", "deleteTime", "started", "ended"):
        assert fields[date] == "pdate"
    assert fields["size"] == "plong"
    for substring in ("originalName", "fileSystemPath"):
        assert fields[substring] == "text_substr"
    assert fields["queryText"] == "text_ws_lower"


def test_relations_fields_fit_navds_queries() -> None:
    fields = {f.get("name"): f.get("type") for f in schema("nav_relations").iter("field")}
    for exact in ("type", "endpoint1Id", "endpoint2Id", "endpoint1QualifiedName", "endpoint2QualifiedName"):
        assert fields[exact] == "string"
    assert fields["unlinked"] == "boolean"


def test_configsets_are_shipped_as_package_data() -> None:
    for configset in CONF_SETS:
        assert Path(configset_dir(configset) / "schema.xml").is_file()
