"""HTTP errors: every refusal is `{"error": ..., "parameter": ...}` JSON naming what was wrong
(`parameter` null when no parameter is to blame), never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from navd.errors import (
    AmbiguousEntity,
    ConfigError,
    EntityNotFound,
    NavdError,
    SolrError,
    SolrUnavailable,
    UsageError,
    first_line,
)
from navd.logs import get_logger
from navd.names import InvalidName

log = get_logger("navd.server")


class ErrorBody(BaseModel):
    """What every refusal answers (the OpenAPI description shows it)."""

    error: str  # one line
    parameter: str | None  # the query or path parameter to blame, null when none is


#: the refusals any authenticated route may answer, for the OpenAPI description
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "a bad parameter, named in `parameter`"},
    401: {"model": ErrorBody, "description": "no or wrong credentials (auth = basic or kerberos)"},
    403: {"model": ErrorBody, "description": "the user's role may not do this: `needed_role` names the one it needs"},
    429: {"model": ErrorBody, "description": "too many failed logins from this address or for this user: "
                                             "retry after the Retry-After header's seconds"},
    503: {"model": ErrorBody, "description": "Solr unreachable"},
}


class ApiError(Exception):
    """A request refused: its HTTP status, one line, the parameter to blame and extra fields."""

    def __init__(self, status: int, message: str, parameter: str | None = None, *,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.headers = headers or {}
        self.status = status
        self.message = message
        self.parameter = parameter
        self.extra = extra


def error_response(status: int, message: str, parameter: str | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, "parameter": parameter, **extra}, status_code=status)


@contextmanager
def blame(parameter: str) -> Iterator[None]:
    """Facade errors caused by the value of `parameter` become 4xx naming it: a refused query or
    a malformed name is 400, an unknown entity 404, a query Solr cannot parse 400; a name that
    matches several elements is 300 Multiple Choices with the `candidates`."""
    try:
        yield
    except (UsageError, InvalidName) as exc:
        message = first_line(exc)
        raise ApiError(400, message if message.startswith(parameter) else f"{parameter}: {message}", parameter) from None
    except EntityNotFound as exc:
        raise ApiError(404, first_line(exc), parameter) from None
    except AmbiguousEntity as exc:  # as the CLI's exit 4: the candidates, never a guess
        raise ApiError(300, f"{parameter}: {first_line(exc)}", parameter, candidates=list(exc.candidates),
                       found=exc.found) from None
    except SolrError as exc:
        if isinstance(exc, SolrUnavailable) or exc.status != 400:
            raise
        raise ApiError(400, f"{parameter}: Solr refused it: {first_line(exc)}", parameter) from None


def check_range(parameter: str, value: int, low: int, high: int, key: str | None = None) -> None:
    if not low <= value <= high:
        cap = f" ([server] {key})" if key else ""
        raise ApiError(400, f"{parameter}: must be from {low} to {high}{cap}, got {value}", parameter)


def parse_time(parameter: str, value: str | None) -> datetime | None:
    """A time parameter (ISO 8601 or a date; UTC unless a zone is given), None if absent; a
    UsageError naming the parameter if it is no time (the catalogue APIs answer it in their
    own error shape)."""
    if value is None:
        return None
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{parameter}: {value[:100]!r} is not an ISO 8601 date-time (2022-09-15T07:47:19Z)") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def time_parameter(parameter: str, value: str | None) -> datetime | None:
    """parse_time, refused as a 400 naming the parameter."""
    try:
        return parse_time(parameter, value)
    except UsageError as exc:
        raise ApiError(400, str(exc), parameter) from None


def install_handlers(app: FastAPI) -> None:
    """Map every expected failure to JSON. The unexpected ones are caught by the outermost
    middleware (navd.server.app), which logs them and answers a JSON 500 without internals."""

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        response = error_response(exc.status, exc.message, exc.parameter, **exc.extra)
        response.headers.update(exc.headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problem = exc.errors()[0]
        location = [str(part) for part in problem.get("loc", ())]
        parameter = location[-1] if len(location) > 1 else None
        message = "is required" if problem.get("type") == "missing" else str(problem.get("msg", "invalid"))
        shown = repr(problem["input"])[:80] if "input" in problem and problem.get("type") != "missing" else ""
        return error_response(400, f"{parameter or 'request'}: {message}" + (f", got {shown}" if shown else ""),
                              parameter)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = error_response(exc.status_code, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, _exc: ClientDisconnect) -> JSONResponse:
        # The client hung up, or was hung up on for sending its body too slowly
        # (navd/server/connections.py), before the route had read it: nobody to answer.
        log.info("client gone before its request was read", path=request.url.path)
        return error_response(408, "request body: the connection closed before it was read")

    @app.exception_handler(SolrUnavailable)
    async def solr_down(_request: Request, exc: SolrUnavailable) -> JSONResponse:
        log.warning("request failed: Solr unreachable", reason=first_line(exc))
        return error_response(503, f"Solr unreachable: {first_line(exc)}")

    @app.exception_handler(NavdError)
    async def navd_error(_request: Request, exc: NavdError) -> JSONResponse:
        log.error("request failed", reason=first_line(exc))
        if isinstance(exc, ConfigError):  # e.g. an unreadable users file: the admin's, not the client's
            return error_response(500, "the server is misconfigured (logged)")
        return error_response(502 if isinstance(exc, SolrError) else 500, first_line(exc))
