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

import time
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from navd import __version__
from navd.config import NavdConfig, is_loopback_host
from navd.errors import NavdError, first_line
from navd.catalog.navigator import SourceCache
from navd.index.client import SolrIndex
from navd.lineage.hub_cache import HubCache
from navd.logs import get_logger
from navd.openlineage.intake import Intake
from navd.server.auth import Authenticator, authenticate
from navd.server.errors import ERROR_RESPONSES, error_response, install_handlers
from navd.server.metrics import IntakeCollector, Metrics
from navd.server.parameters import refuse_unknown_query_parameters
from navd.server.request_checks import RESPONSE_HEADERS, RequestChecks, machine_names, server_names
from navd.server.threads import OwnThreads

log = get_logger("navd.server")


def create_app(config: NavdConfig, index: SolrIndex, intake: Intake | None = None) -> FastAPI:
    """The server's app over `index` (a read-only client: navd-reader on the embedded Solr);
    with `intake` (`[openlineage] enabled`, its own write-capable client) the OpenLineage intake
    at POST /api/v1/lineage."""
    from navd.server import annotation_routes, api, atlas_routes, page, sensitivity_routes, taint_routes
    from navd.server.navigator_routes import navigator_router, navigator_version_router

    app = FastAPI(title="navd", version=__version__, docs_url=None, redoc_url=None, openapi_url=None,
                  description="navd's metadata and lineage API: the JSON `navd ... --json` prints.")
    app.state.config = config
    app.state.index = index
    # one hub cache for every request of this server (navd/lineage/hub_cache.py)
    app.state.hubs = HubCache(config.lineage)
    # the Navigator API's SOURCE entities of the current index generation (navd/catalog/navigator.py)
    app.state.navigator_sources = SourceCache()
    # who a request is and what its role may do (navd/server/auth.py): checked once per request
    app.state.auth = Authenticator(config)
    # the readiness probe's own thread: it answers while the request threads are all busy
    app.state.probe_threads = OwnThreads(1)
    app.state.metrics = Metrics(index)
    install_handlers(app)
    # added first, so inside Guard: its refusals are timed and carry Guard's headers
    names = server_names(config.server, () if is_loopback_host(config.server.host) else machine_names())
    app.add_middleware(RequestChecks, names=names)
    app.add_middleware(Guard, metrics=app.state.metrics)
    app.include_router(probes, dependencies=[Depends(refuse_unknown_query_parameters)])
    mount(app, openapi_router)
    mount(app, api.router)
    mount(app, taint_routes.router)  # /api/taints, /api/reprocess (navd/server/taint_routes.py)
    mount(app, app.state.metrics.router)
    mount(app, sensitivity_routes.router)
    mount(app, annotation_routes.router)  # /api/annotations, Navigator's PUT entities/{identity}
    mount(app, atlas_routes.router)  # Atlas' v2 API under /api/atlas/v2 (docs/atlas-api.md)
    if intake is not None:
        from navd.server.openlineage_routes import router as openlineage_router

        app.state.intake = intake
        app.state.metrics.registry.register(IntakeCollector(intake))
        # before Navigator's routes: /api/v1 is no Navigator version, but keep Marquez's path first
        mount(app, openlineage_router)
    else:
        from navd.server.openlineage_routes import intake_off_router

        mount(app, intake_off_router)  # 404 naming [openlineage] enabled, before Marquez's GET of the path
    from navd.server.marquez_routes import router as marquez_router

    mount(app, marquez_router)  # Marquez's reads, before Navigator's /api/v{N} as the intake
    from navd.server.usage_routes import router as usage_router

    mount(app, usage_router)  # usage, unused, deps, impact
    mount(app, navigator_router(api.index_of))  # Navigator's /api/v9..v19 (docs/navigator-api.md)
    mount(app, navigator_version_router())  # Navigator's GET /api/version
    mount(app, page.router)  # the lineage page at / and its files (navd/server/page.py)
    return app


def mount(app: FastAPI, router: APIRouter, prefix: str = "") -> None:
    """Serve `router`'s routes behind the configured authentication; a query parameter a route
    does not declare is refused (navd/server/parameters.py), after authentication."""
    checks = [Depends(authenticate), Depends(refuse_unknown_query_parameters)]
    app.include_router(router, prefix=prefix, dependencies=checks, responses=ERROR_RESPONSES)


probes = APIRouter(tags=["probes"])
openapi_router = APIRouter(include_in_schema=False)


@openapi_router.get("/openapi.json")
def openapi(request: Request) -> JSONResponse:
    """The OpenAPI description, behind the authentication as the routes it lists."""
    return JSONResponse(request.app.openapi())


# The probes touch neither the request threads nor the hashing ones (a flood of logins or slow
# Solr queries must not make the server look down): /healthz runs in the event loop itself,
# /readyz asks Solr on a thread of its own.
@probes.get("/healthz", summary="The server answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


# Atlas' own probe, which Hue's Atlas catalogue asks first, without credentials, of each server
# in its `api_url` list, and then talks to the first that says ACTIVE under `<server>/api/atlas`
# (a server that does not answer it breaks Hue's catalogue). It tells only "up", as /healthz.
@probes.get("/api/atlas/admin/status", summary="Atlas: the server's state, for Hue's choice of server")
async def atlas_status() -> dict[str, str]:
    return {"Status": "ACTIVE"}


@probes.get("/readyz", summary="Solr answers navd's queries", responses={503: {"description": "Solr unreachable"}})
async def readyz(request: Request) -> Response:
    index: SolrIndex = request.app.state.index
    threads: OwnThreads = request.app.state.probe_threads
    try:
        await threads.run(index.count, "elements")
    except NavdError as exc:
        return error_response(503, f"not ready: Solr: {first_line(exc)}")
    return JSONResponse({"status": "ready"})


def server_timing(seconds: float) -> bytes:
    """The Server-Timing header's value for `seconds` spent in navd: `app;dur=<milliseconds>`."""
    return f"app;dur={seconds * 1000:.1f}".encode("ascii")


class Guard:
    """Outermost navd middleware (pure ASGI): times every request for /metrics and in the answer's
    Server-Timing header, puts request_checks.RESPONSE_HEADERS on every answer, and turns an
    unexpected exception into a logged error and a JSON 500 that shows nothing of the internals."""

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
                # navd's own time until the answer's headers: a browser shows it in the request's
                # resource timing (serverTiming), which splits navd's time from the network's and
                # the browser's own (tests/bench/bench_page.py reads it)
                headers.append((b"server-timing", server_timing(time.perf_counter() - started)))
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
