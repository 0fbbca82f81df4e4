"""The app factory: navd's API, health, readiness and metrics on one FastAPI app.

A module adds its routes with one line in `create_app`: `mount(app, its_router)` puts them
behind the server's authentication (the Navigator-compatible API mounts so under /api/v{N}).
/healthz and /readyz stay open: load balancers and systemd probes carry no credentials, and they
tell nothing but "up". /openapi.json is served behind the same authentication (it lists every
route); /docs and /redoc are off: FastAPI's pages load their scripts from a CDN, and edge nodes
are air-gapped. Before any route, navd/server/request_checks.py refuses what a web page of
another site could send (a foreign Host, a foreign Origin on a write, a body that is not JSON).
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from navd import __version__
from navd.config import NavdConfig, is_loopback_host, server_users_path
from navd.errors import NavdError, first_line
from navd.index.client import SolrIndex
from navd.index.hub_cache import HubCache
from navd.logs import get_logger
from navd.openlineage.intake import Intake
from navd.server.errors import ERROR_RESPONSES, ApiError, error_response, install_handlers
from navd.server.kerberos import Acceptor, Refused
from navd.server.metrics import Metrics
from navd.server.request_checks import RESPONSE_HEADERS, RequestChecks, machine_names, server_names
from navd.server.users import Users

log = get_logger("navd.server")
REALM = "navd"
NEGOTIATE = "Negotiate"


def create_app(config: NavdConfig, index: SolrIndex, intake: Intake | None = None) -> FastAPI:
    """The server's app over `index` (a read-only client: navd-reader on the embedded Solr);
    with `intake` (`[openlineage] enabled`, its own write-capable client) the OpenLineage intake
    at POST /api/v1/lineage."""
    from navd.server import api, page, sensitivity_routes, taint_routes
    from navd.server.navigator_routes import navigator_router

    app = FastAPI(title="navd", version=__version__, docs_url=None, redoc_url=None, openapi_url=None,
                  description="navd's metadata and lineage API: the JSON `navd ... --json` prints.")
    app.state.config = config
    app.state.index = index
    # one hub cache for every request of this server (navd/index/hub_cache.py)
    app.state.hubs = HubCache(config.lineage)
    app.state.users = Users(server_users_path(config)) if config.server.auth == "basic" else None
    # Kerberos: the keytab checked and the service credentials acquired now, so a bad keytab or
    # principal stops the start (fail closed) instead of refusing every request.
    app.state.kerberos = Acceptor(config.server) if config.server.auth == "kerberos" else None
    app.state.metrics = Metrics(index)
    install_handlers(app)
    # added first, so inside Guard: its refusals are timed and carry Guard's headers
    names = server_names(config.server, () if is_loopback_host(config.server.host) else machine_names())
    app.add_middleware(RequestChecks, names=names)
    app.add_middleware(Guard, metrics=app.state.metrics)
    app.include_router(probes)
    mount(app, openapi_router)
    mount(app, api.router)
    mount(app, taint_routes.router)  # /api/taints, /api/reprocess (navd/server/taint_routes.py)
    mount(app, app.state.metrics.router)
    mount(app, sensitivity_routes.router)
    if intake is not None:
        from navd.server.openlineage_routes import router as openlineage_router

        app.state.intake = intake
        # before Navigator's routes: /api/v1 is no Navigator version, but keep Marquez's path first
        mount(app, openlineage_router)
    from navd.server.marquez_routes import router as marquez_router

    mount(app, marquez_router)  # Marquez's reads, before Navigator's /api/v{N} as the intake
    from navd.server.usage_routes import router as usage_router

    mount(app, usage_router)  # usage, unused, deps, impact
    mount(app, navigator_router(api.index_of))  # Navigator's /api/v9..v19 (docs/navigator-api.md)
    mount(app, page.router)  # the lineage page at / and its files (navd/server/page.py)
    return app


def mount(app: FastAPI, router: APIRouter, prefix: str = "") -> None:
    """Serve `router`'s routes behind the configured authentication."""
    app.include_router(router, prefix=prefix, dependencies=[Depends(authenticate)], responses=ERROR_RESPONSES)


def authenticate(request: Request) -> str | None:
    """The authenticated user's name (None with `auth = "none"`, loopback only); 401 otherwise.
    Sync: scrypt takes tens of milliseconds, and so may a GSS-API accept; FastAPI runs this in
    its thread pool."""
    kerberos: Acceptor | None = request.app.state.kerberos
    if kerberos is not None:
        return _negotiate(request, kerberos)
    users: Users | None = request.app.state.users
    if users is None:
        return None
    challenge = {"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8"'}
    scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        raise ApiError(401, "authentication required (HTTP basic)", headers=challenge)
    try:
        name, sep, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        sep, name, password = "", "", ""
    if not sep or not users.check(name, password):
        log.warning("authentication refused", user=name[:64], client=_client(request))
        raise ApiError(401, "wrong user name or password", headers=challenge)
    request.state.user = name
    return name


def _negotiate(request: Request, kerberos: Acceptor) -> str:
    """SPNEGO: the client's principal; the mutual-authentication token goes out on the response
    (through Guard: routes may return their own Response objects)."""
    challenge = {"WWW-Authenticate": NEGOTIATE}
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != NEGOTIATE.lower():
        raise ApiError(401, "authentication required (Kerberos SPNEGO: curl --negotiate -u :)", headers=challenge)
    try:
        accepted = kerberos.accept(token)
    except Refused as exc:
        log.warning(f"kerberos authentication refused: {exc}", client=_client(request))
        raise ApiError(401, "Kerberos authentication failed", headers=challenge) from None
    if accepted.token:
        request.state.auth_response_headers = {
            "WWW-Authenticate": f"{NEGOTIATE} {base64.b64encode(accepted.token).decode()}"}
    request.state.user = accepted.user  # the request's user, for whatever a route wants to record
    log.info("kerberos authenticated", user=accepted.user, method=request.method,
             route=getattr(request.scope.get("route"), "path", ""), client=_client(request))
    return accepted.user


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


probes = APIRouter(tags=["probes"])
openapi_router = APIRouter(include_in_schema=False)


@openapi_router.get("/openapi.json")
def openapi(request: Request) -> JSONResponse:
    """The OpenAPI description, behind the authentication as the routes it lists."""
    return JSONResponse(request.app.openapi())


@probes.get("/healthz", summary="The server answers")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@probes.get("/readyz", summary="Solr answers navd's queries", responses={503: {"description": "Solr unreachable"}})
def readyz(request: Request) -> Response:
    index: SolrIndex = request.app.state.index
    try:
        index.count("elements")
    except NavdError as exc:
        return error_response(503, f"not ready: Solr: {first_line(exc)}")
    return JSONResponse({"status": "ready"})


class Guard:
    """Outermost navd middleware (pure ASGI): times every request for /metrics, puts
    request_checks.RESPONSE_HEADERS on every answer, and turns an unexpected exception into a
    logged error and a JSON 500 that shows nothing of the internals."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: dict[str, Any] = {"code": 500, "sent": False}

        async def record(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                status["sent"] = True
                headers = [*message.get("headers", [])]
                present = {name.lower() for name, _ in headers}
                headers += [header for header in RESPONSE_HEADERS if header[0] not in present]
                # what the authentication adds to whatever the route answers (SPNEGO's
                # mutual-authentication token): request.state lives in scope["state"]
                extra = scope.get("state", {}).get("auth_response_headers")
                if extra:
                    headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, record)
        except Exception as exc:
            log.exception(f"request failed with an unexpected error: {first_line(exc)}",
                          path=scope.get("path", ""))
            status["code"] = 500
            if not status["sent"]:
                await error_response(500, "internal server error (logged)")(scope, receive, record)
        finally:
            route = scope.get("route")
            # The route's template, not the path: entity names would make unbounded label sets.
            self.metrics.observe(scope["method"], getattr(route, "path", "unmatched"), status["code"],
                                 time.perf_counter() - started)
