"""`POST /api/v1/lineage`: the OpenLineage intake at Marquez's path (docs/sources/openlineage.md),
served when `[openlineage] enabled`. The route only reads the body (capped, gunzipped), checks it
(its size against the `[openlineage]` caps, the spec's schema, names against Solr's term limit)
and hands it to navd.openlineage.intake: 201 written, 202 spooled. Everything after reading the
body runs in the thread pool: parsing and validating a large event is CPU work that would
otherwise stop the event loop, and every other request with it."""

from __future__ import annotations

import zlib

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from navd.config import OpenLineageConfig
from navd.errors import SolrError, first_line
from navd.logs import get_logger
from navd.names import InvalidName
from navd.openlineage.intake import WRITTEN, Intake, IntakeStopping, UnindexableEvent
from navd.openlineage.limits import EventLimits, EventTooLarge, check_names, check_size
from navd.openlineage.schema import InvalidEvent, check_event
from navd.server.errors import ApiError, ErrorBody

router = APIRouter(tags=["openlineage"])
log = get_logger("navd.openlineage")
BODY = "body"


def _too_large(cap: int, what: str) -> ApiError:
    return ApiError(413, f"body: {what} is larger than [openlineage] max_body_bytes ({cap} bytes)", BODY)


async def _read_capped(request: Request, cap: int) -> bytes:
    """The body as sent, 413 past `cap` bytes (read no further: a client may send gigabytes)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap, "the event as sent")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise _too_large(cap, "the event as sent")
        chunks.append(chunk)
    return b"".join(chunks)


def _gunzip(data: bytes, cap: int) -> bytes:
    """A gzip body decompressed, at most `cap` bytes of it (a small bomb must not fill memory)."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, cap + 1)
    except zlib.error as exc:
        raise ApiError(400, f"body: not valid gzip data ({exc})", BODY) from None
    if len(out) > cap:
        raise _too_large(cap, "the event once gunzipped")
    if not inflater.eof:
        raise ApiError(400, "body: truncated gzip data (the stream ends before its end marker)", BODY)
    if inflater.unused_data:
        raise ApiError(400, "body: data after the end of the gzip stream (one gzip member is taken)", BODY)
    return out


@router.post("/api/v1/lineage", status_code=201, summary="Take one OpenLineage event (RunEvent, DatasetEvent, "
             "JobEvent of spec 2-0-x), as Marquez",
             responses={201: {"description": "written to Solr"},
                        202: {"description": "Solr unreachable: stored in the durable spool, written when it is back"},
                        400: {"model": ErrorBody, "description": "not an OpenLineage event: `parameter` is the JSON "
                                                                 "path of the first bad field, or `body`"},
                        413: {"model": ErrorBody, "description": "larger than [openlineage] max_body_bytes, or "
                                                                 "more datasets, fields or column edges than its "
                                                                 "max_datasets, max_fields, max_column_edges"},
                        502: {"model": ErrorBody, "description": "Solr refused the event's documents (the "
                                                                 "reason is logged)"},
                        503: {"model": ErrorBody, "description": "Solr unreachable and the spool cannot store "
                                                                 "the event, or the server is stopping"}})
async def post_lineage(request: Request) -> JSONResponse:
    intake: Intake = request.app.state.intake
    cap = request.app.state.config.openlineage.max_body_bytes
    body = await _read_capped(request, cap)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("gzip", "", "identity"):
        raise ApiError(415, f"Content-Encoding {encoding!r}: only gzip is taken", "Content-Encoding")
    status = await run_in_threadpool(take, intake, request.app.state.config.openlineage, body, encoding == "gzip")
    return JSONResponse({"status": "written" if status == WRITTEN else "spooled"}, status_code=status)


def take(intake: Intake, config: OpenLineageConfig, body: bytes, gzipped: bool) -> int:
    """The body checked and handed to the intake: its status, or the ApiError to answer."""
    if gzipped:
        body = _gunzip(body, config.max_body_bytes)
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"body: not JSON ({exc})", BODY) from None
    try:
        # counted before validation, which takes time in proportion
        size = check_size(event, EventLimits.of(config))
    except EventTooLarge as exc:
        raise ApiError(413, str(exc), BODY) from None
    try:
        # as Marquez: the core strictly; a facet that does not conform is left out, never refused
        checked = check_event(event)
        check_names(checked.mappable, len(body))
    except InvalidEvent as exc:
        raise ApiError(400, str(exc), exc.path) from None
    intake.note_nonconforming(checked)
    try:
        return intake.accept(checked.mappable, checked.kind, body, size)
    except (InvalidName, UnindexableEvent) as exc:
        message = str(exc)
        raise ApiError(400, message if message.startswith(f"{BODY}:") else f"{BODY}: {message}", BODY) from None
    except SolrError as exc:  # refused, not an outage (that spools): Solr's own words stay in the log
        log.error("OpenLineage event refused by Solr", reason=first_line(exc))
        raise ApiError(502, "Solr refused the event's documents (the reason is logged)") from None
    except IntakeStopping as exc:
        raise ApiError(503, str(exc)) from None
    except OSError as exc:  # Solr down and the spool full or unwritable: the client must retry
        log.error("OpenLineage event neither written nor spooled", reason=first_line(exc))
        raise ApiError(503, "Solr unreachable and the spool cannot store the event (logged): retry later") from None


#: served instead of the intake when `[openlineage] enabled` is off: a clear 404, not the 405 of
#: Marquez's read route at the same path
intake_off_router = APIRouter(tags=["openlineage"])


@intake_off_router.post("/api/v1/lineage", include_in_schema=False)
async def post_lineage_intake_off() -> JSONResponse:
    raise ApiError(404, "the OpenLineage intake is off on this server: set [openlineage] enabled = true to take "
                        "events at POST /api/v1/lineage")
