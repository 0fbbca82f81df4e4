"""`POST /api/v1/lineage`: the OpenLineage intake at Marquez's path (docs/sources/openlineage.md),
served when `[openlineage] enabled`. The route only reads the body (capped, gunzipped), checks it
against the spec's schema and hands it to navd.openlineage.intake: 201 written, 202 spooled."""

from __future__ import annotations

import zlib

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from navd.errors import first_line
from navd.logs import get_logger
from navd.names import InvalidName
from navd.openlineage.intake import WRITTEN, Intake
from navd.openlineage.schema import InvalidEvent, validate
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
                        413: {"model": ErrorBody, "description": "larger than [openlineage] max_body_bytes"},
                        503: {"model": ErrorBody, "description": "Solr unreachable and the spool cannot store "
                                                                 "the event"}})
async def post_lineage(request: Request) -> JSONResponse:
    intake: Intake = request.app.state.intake
    cap = request.app.state.config.openlineage.max_body_bytes
    body = await _read_capped(request, cap)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding == "gzip":
        body = _gunzip(body, cap)
    elif encoding not in ("", "identity"):
        raise ApiError(415, f"Content-Encoding {encoding!r}: only gzip is taken", "Content-Encoding")
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"body: not JSON ({exc})", BODY) from None
    try:
        kind = validate(event)
    except InvalidEvent as exc:
        raise ApiError(400, str(exc), exc.path) from None
    try:
        status = await run_in_threadpool(intake.accept, event, kind, body)
    except InvalidName as exc:
        raise ApiError(400, f"body: {exc}", BODY) from None
    except OSError as exc:  # Solr down and the spool full or unwritable: the client must retry
        log.error("OpenLineage event neither written nor spooled", reason=first_line(exc))
        raise ApiError(503, "Solr unreachable and the spool cannot store the event (logged): retry later") from None
    return JSONResponse({"status": "written" if status == WRITTEN else "spooled"}, status_code=status)
