"""The lineage page: `/` serves page.html, `/static/...` its script, style and the vendored
JavaScript (navd/server/static/vendor, refreshed by `make vendor-js`). Everything comes from the
package: edge nodes are often air-gapped, and the page asks only navd's own API for data.

Every answer carries a strict Content-Security-Policy: scripts only from navd itself, no inline
script, no eval (elkjs' bundled build lays out on the main thread through a fake worker and needs
neither a worker nor eval), no request to another host, no framing. `X-Content-Type-Options:
nosniff` goes on every answer of the server, the API's too (request_checks.RESPONSE_HEADERS).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from navd.server.errors import ApiError

#: `default-src 'self'` covers connect/img/font/worker; style-src 'self' forbids inline <style>
#: and style attributes in markup (cytoscape draws on a canvas and styles only through the CSSOM).
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "no-referrer",
    # The page is small and changes with navd's version; the data is never cached by the browser.
    "Cache-Control": "no-cache",
}
_MEDIA_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".md": "text/plain; charset=utf-8",
                ".txt": "text/plain; charset=utf-8"}

router = APIRouter(tags=["page"], include_in_schema=False)


def static_dir() -> Path:
    """The page's files inside the installed package."""
    return Path(str(files("navd.server") / "static"))


def _file(path: Path) -> FileResponse:
    return FileResponse(path, media_type=_MEDIA_TYPES[path.suffix], headers=SECURITY_HEADERS)


@router.get("/")
def page() -> FileResponse:
    return _file(static_dir() / "page.html")


@router.get("/static/{name:path}")
def static(name: str) -> FileResponse:
    """A file of the page; nothing outside the static directory, no directory listing."""
    root = static_dir().resolve()
    path = (root / name).resolve()
    if not path.is_relative_to(root) or not path.is_file() or path.suffix not in _MEDIA_TYPES:
        raise ApiError(404, "Not Found")
    return _file(path)
