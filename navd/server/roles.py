"""What each user of the server may do: `viewer` reads, `editor` also writes annotations and
events (the OpenLineage intake, sensitivity tags, taints), `admin` may do everything, including
any write route not listed here.

One table, `WRITE_ROLES`, says which role each write route needs; a read (GET, HEAD) needs
`viewer`. A write route missing from the table needs `admin`: a route added without a thought
for its role fails closed. The check itself runs in one place, the authentication dependency
every mounted router carries (navd/server/auth.py). With `[server] auth = "none"` (loopback
only) there are no users and everything is allowed, as before roles existed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class Role(enum.IntEnum):
    """Ordered: a role may do what every lower one may."""

    VIEWER = 1
    EDITOR = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


ROLE_NAMES = tuple(role.label for role in Role)
#: what a method that changes nothing needs
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

#: (method, route template) -> the role a write needs. Reads sent as POST (Navigator's paging)
#: are listed as viewer; a write not listed needs admin.
WRITE_ROLES: Mapping[tuple[str, str], Role] = {
    # Navigator's searches whose query travels in the body: entity and relation paging, the
    # interactive search (Hue's search box)
    ("POST", "/api/v{version}/entities/paging"): Role.VIEWER,
    ("POST", "/api/v{version}/relations/paging"): Role.VIEWER,
    ("POST", "/api/v{version}/interactive/entities"): Role.VIEWER,
    # events of the jobs people run (the Spark and Airflow listeners post as an editor)
    ("POST", "/api/v1/lineage"): Role.EDITOR,
    # annotations: a sensitivity level set or cleared by a person
    ("PUT", "/api/sensitivity/tags"): Role.EDITOR,
    ("DELETE", "/api/sensitivity/tags"): Role.EDITOR,
    # taints mark a range of data bad; the reprocess plan they feed is a read
    ("POST", "/api/taints"): Role.EDITOR,
    ("DELETE", "/api/taints/{taint_id}"): Role.EDITOR,
    ("DELETE", "/api/taints"): Role.EDITOR,
    # what people write on entities (navd/annotations): navd's edit and Navigator's (Hue's)
    ("PATCH", "/api/annotations"): Role.EDITOR,
    ("PUT", "/api/v{version}/entities/{identity}"): Role.EDITOR,
    # Atlas' basic search sends its parameters as a body; its classifications are tags people write
    ("POST", "/api/atlas/v2/search/basic"): Role.VIEWER,
    ("POST", "/api/atlas/v2/entity/guid/{guid}/classifications"): Role.EDITOR,
    ("PUT", "/api/atlas/v2/entity/guid/{guid}/classifications"): Role.EDITOR,
    ("DELETE", "/api/atlas/v2/entity/guid/{guid}/classification/{name}"): Role.EDITOR,
    ("POST", "/api/atlas/v2/types/typedefs"): Role.EDITOR,
    ("PUT", "/api/atlas/v2/types/typedefs"): Role.EDITOR,
}


def parse_role(text: str, label: str) -> Role:
    """`viewer`, `editor` or `admin` as a Role; ValueError naming `label` otherwise."""
    for role in Role:
        if role.label == text:
            return role
    raise ValueError(f"{label}: {text[:40]!r} is not a role: use {', '.join(ROLE_NAMES)}")


def required_role(method: str, route: str) -> Role:
    """The role a request of `method` on the route template `route` needs."""
    if method.upper() in READ_METHODS:
        return Role.VIEWER
    return WRITE_ROLES.get((method.upper(), route), Role.ADMIN)
