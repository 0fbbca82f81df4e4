"""The one error type of the development services, so none of them borrows another's."""

from __future__ import annotations

from navd.errors import NavdError


class DevServiceError(NavdError):
    """A development service could not be started or stopped.

    A NavdError, so the dev stack and the test fixtures report it like any other navd failure
    (`devstack: error: ...`, a failed fixture naming the service) instead of a traceback.
    """
