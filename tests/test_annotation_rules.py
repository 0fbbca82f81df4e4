"""Annotations, the pure part: edits applied, their checks (one line naming the field), the
changes recorded, the fields on element documents, Navigator's and navd's edit bodies, and the
search widening of `description:`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from navd.annotations.rules import (
    KEEP, Annotation, Edit, apply, changes, element_fields, projection_update, stored_annotation, widened,
)
from navd.annotations.service import navigator_edit
from navd.errors import UsageError
from navd.index.query_syntax import parse, write
from navd.server.annotation_routes import navd_edit

BASE = Annotation("e1", tags=("finance",), description="old", properties={"owner": "bob"},
                  custom_properties={"sales.steward": "ann"})
AT = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)

APPLIED: list[tuple[str, Edit, Annotation]] = [
    ("add tags, sorted, each once", Edit(add_tags=("pii", " pii ", "Churn")),
     Annotation("e1", ("Churn", "finance", "pii"), "old", None, {"owner": "bob"}, {"sales.steward": "ann"})),
    ("remove a tag and one not there", Edit(remove_tags=("finance", "absent")),
     Annotation("e1", (), "old", None, {"owner": "bob"}, {"sales.steward": "ann"})),
    ("replace tags (Navigator's PUT), then add", Edit(replace_tags=("a",), add_tags=("b",)),
     Annotation("e1", ("a", "b"), "old", None, {"owner": "bob"}, {"sales.steward": "ann"})),
    ("description set, name set", Edit(description=" churn inputs ", display_name="Orders"),
     Annotation("e1", ("finance",), "churn inputs", "Orders", {"owner": "bob"}, {"sales.steward": "ann"})),
    ("empty description clears", Edit(description=""),
     Annotation("e1", ("finance",), None, None, {"owner": "bob"}, {"sales.steward": "ann"})),
    ("None clears too", Edit(description=None),
     Annotation("e1", ("finance",), None, None, {"owner": "bob"}, {"sales.steward": "ann"})),
    ("property set and unset", Edit(set_properties={"tier": "gold"}, unset_properties=("owner",)),
     Annotation("e1", ("finance",), "old", None, {"tier": "gold"}, {"sales.steward": "ann"})),
    ("properties replaced whole", Edit(replace_properties={"a.b-c": "1"}),
     Annotation("e1", ("finance",), "old", None, {"a.b-c": "1"}, {"sales.steward": "ann"})),
    ("custom property added", Edit(set_custom={"hr.owner": "x"}),
     Annotation("e1", ("finance",), "old", None, {"owner": "bob"}, {"sales.steward": "ann", "hr.owner": "x"})),
    ("a classification is a tag with attributes", Edit(set_attributes={"PII": {"level": 3, "ok": True}}),
     Annotation("e1", ("PII", "finance"), "old", None, {"owner": "bob"}, {"sales.steward": "ann"},
                {"PII": {"level": 3, "ok": True}})),
    ("nothing asked: the same", Edit(), BASE),
]


@pytest.mark.parametrize(("label", "edit", "expected"), APPLIED, ids=[c[0] for c in APPLIED])
def test_an_edit_gives_the_annotation(label: str, edit: Edit, expected: Annotation) -> None:
    assert apply(BASE, edit) == expected


def test_removing_a_classifications_tag_removes_its_attributes() -> None:
    classified = apply(BASE, Edit(set_attributes={"PII": {"level": 3}}))
    assert apply(classified, Edit(remove_tags=("PII",))).attributes == {}


REFUSED: list[tuple[Edit, str]] = [
    (Edit(add_tags=("",)), "tags: a tag cannot be empty"),
    (Edit(add_tags=("-x",)), "tags: tag '-x': use letters"),
    (Edit(add_tags=("a:b",)), "tags: tag 'a:b': use letters"),
    (Edit(add_tags=("x" * 101,)), "tags: tag 'xxxx"),
    (Edit(add_tags=tuple(f"t{i}" for i in range(101))), "tags: more than 100 on one entity"),
    (Edit(set_properties={"bad key": "v"}), "properties: key 'bad key'"),
    (Edit(set_properties={"k": "v" * 4001}), "properties: k: the value is longer than 4000 characters"),
    (Edit(set_custom={"nonamespace": "v"}), "customProperties: 'nonamespace' is not NAMESPACE.KEY"),
    (Edit(set_custom={"1ns.k": "v"}), "customProperties: '1ns.k' is not NAMESPACE.KEY"),
    (Edit(display_name="two\nlines"), "name: one line, no line breaks"),
    (Edit(description="d" * 10_001), "description: longer than 10000 characters"),
    (Edit(set_attributes={"PII": {"level": [1]}}), "attributes of PII: level: a string, number or boolean"),
]


@pytest.mark.parametrize(("edit", "message"), REFUSED, ids=[m[:40] for _, m in REFUSED])
def test_bad_input_is_one_line_naming_the_field(edit: Edit, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        apply(BASE, edit)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_each_changed_field_is_one_change_with_before_and_after() -> None:
    after = apply(BASE, Edit(add_tags=("pii",), description="new", set_properties={"owner": "eve"},
                             unset_custom=("sales.steward",)))
    assert [(c.field, c.before, c.after, c.actor) for c in changes(BASE, after, "eddie", AT)] == [
        ("tags", ["finance"], ["finance", "pii"], "eddie"),
        ("description", "old", "new", "eddie"),
        ("properties.owner", "bob", "eve", "eddie"),
        ("customProperties.sales.steward", "ann", None, "eddie")]
    assert changes(BASE, BASE, "eddie", AT) == []


def test_the_element_fields_and_the_update_that_removes_them() -> None:
    fields = element_fields(apply(BASE, Edit(display_name="Orders")))
    assert {k: v for k, v in fields.items() if k != "annotation"} == {
        "tags": ["finance"], "userDescription": "old", "displayName": "Orders", "up_owner": "bob",
        "cp_sales.steward": "ann"}
    assert stored_annotation(fields) == apply(BASE, Edit(display_name="Orders"))
    assert element_fields(Annotation("e1")) == {}
    cleared = projection_update("e1", BASE, Annotation("e1"))
    assert cleared == {"identity": "e1", **{f: {"set": None} for f in (
        "annotation", "cp_sales.steward", "displayName", "tags", "up_owner", "userDescription")}}


NAVIGATOR_BODIES: list[tuple[dict[str, Any], Edit]] = [
    # Hue's update_entity re-sends name, description, properties and customProperties as it read them
    ({"name": None, "description": None, "properties": {}, "customProperties": {}, "tags": ["pii"]},
     Edit(replace_tags=("pii",), description=None, display_name=None, replace_properties={}, replace_custom={})),
    ({"name": "Orders", "description": "d", "properties": {"k": "v"}, "customProperties": None},
     Edit(description="d", display_name="Orders", replace_properties={"k": "v"}, replace_custom={})),
    ({"customProperties": {"sales": {"steward": "ann"}, "empty": None}},
     Edit(replace_custom={"sales.steward": "ann"})),
    ({"identity": "x", "originalName": "orders"}, Edit()),  # the entity's own fields: not people's metadata
]


@pytest.mark.parametrize(("body", "edit"), NAVIGATOR_BODIES)
def test_navigators_put_body_is_an_edit(body: dict[str, Any], edit: Edit) -> None:
    assert navigator_edit(body) == edit


@pytest.mark.parametrize(("body", "message"), [
    ({"tags": "pii"}, "tags: a list of strings, not str"),
    ({"properties": ["a"]}, "properties: an object, not list"),
    ({"customProperties": {"sales": "x"}}, "customProperties: sales: an object of key -> value"),
])
def test_a_bad_navigator_body_names_the_key(body: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=f"^{message}"):
        navigator_edit(body)


def test_navds_patch_body_is_an_edit() -> None:
    assert navd_edit({"addTags": ["pii"], "removeTags": ["x"], "description": "d",
                      "properties": {"a": "1", "b": None}, "customProperties": {"ns": {"k": "v", "gone": None}}}) == \
        Edit(add_tags=("pii",), remove_tags=("x",), description="d", display_name=KEEP, set_properties={"a": "1"},
             unset_properties=("b",), set_custom={"ns.k": "v"}, unset_custom=("ns.gone",))
    with pytest.raises(UsageError, match="^tag: not a key of an annotation edit"):
        navd_edit({"tag": "x"})


@pytest.mark.parametrize(("query", "expected"), [
    ("description:*churn*", "(description:*churn* OR userDescription:*churn*)"),
    ('-description:"a b"^2 AND tags:pii', '-(description:"a b"^2 OR userDescription:"a b"^2) AND tags:pii'),
    ("(description:x OR originalName:y)", "((description:x OR userDescription:x) OR originalName:y)"),
    ("queryText:description", "queryText:description"),
])
def test_a_description_search_also_searches_what_people_wrote(query: str, expected: str) -> None:
    assert write(widened(parse(query))) == expected
