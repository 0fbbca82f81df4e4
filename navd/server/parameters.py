"""The query parameters a route takes, and the one check that refuses any other.

A misspelt parameter (`?q=` for `?query=`) must not pass unnoticed as the route's default answer:
every route of navd's server (app.mount and the probes) answers an unknown query parameter with
a 400 naming it and the parameters the route takes. What a route takes is what it declares: the
query parameters of its signature and of its dependencies, as FastAPI resolves them (the same
list the OpenAPI description shows). A parameter a known client sends although the route has no
use for it (Hue's Navigator client sends every parameter of its earlier calls along) is declared
by the route as well, so it is accepted, described and documented (docs/api-parameters.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from navd.server.errors import ApiError

#: a name longer than this is cut in the error line (a client may send any length)
_SHOWN_NAME_CHARS = 80


def declared_query_parameters(route: APIRoute) -> frozenset[str]:
    """The query parameter names `route` declares (aliases, as clients send them). Walked per
    request that carries parameters: a handful of dependencies, microseconds."""
    return frozenset(_query_names(route.dependant))


def _query_names(dependant: Dependant) -> Iterator[str]:
    for field in dependant.query_params:
        yield field.alias
    for dependency in dependant.dependencies:
        yield from _query_names(dependency)


def unknown_parameter_error(method: str, path: str, sent: list[str], accepted: frozenset[str]) -> ApiError | None:
    """The refusal of the query parameters in `sent` that `accepted` lacks (in the order sent,
    the first one to blame), None when every one is accepted."""
    unknown = [name for name in dict.fromkeys(sent) if name not in accepted]
    if not unknown:
        return None
    shown = ", ".join(_shown(name) for name in unknown)
    takes = f"it takes {', '.join(sorted(accepted))}" if accepted else "it takes no query parameters"
    what = "not a parameter" if len(unknown) == 1 else "not parameters"
    return ApiError(400, f"{shown}: {what} of {method} {path} ({takes})", unknown[0][:_SHOWN_NAME_CHARS],
                    accepted=sorted(accepted))


def _shown(name: str) -> str:
    if name.isprintable() and name and len(name) <= _SHOWN_NAME_CHARS:
        return name
    return repr(name[:_SHOWN_NAME_CHARS]) + ("..." if len(name) > _SHOWN_NAME_CHARS else "")


async def refuse_unknown_query_parameters(request: Request) -> None:
    """A dependency of every route: 400 when the request carries a query parameter its route does
    not declare. Async: no thread-pool hop for a set lookup."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.query_params:
        return
    refusal = unknown_parameter_error(request.method, route.path, list(request.query_params.keys()),
                                      declared_query_parameters(route))
    if refusal is not None:
        raise refusal
