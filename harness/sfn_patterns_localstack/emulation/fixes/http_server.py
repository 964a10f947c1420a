"""The HTTP server under LocalStack's gateway does no per-request work nobody uses.

LocalStack serves its gateway through Twisted (``rolo.serving.twisted``). Profiled with
the GIL held (py-spy ``--gil``) on a run of conditional UpdateItems, about 58 % of
LocalStack's CPU was Twisted's reactor thread, and two items of it were pure waste:

* Twisted parses a POST's form body into ``request.args`` (``parsePOSTFormSubmission``,
  on by default), first parsing its Content-Type with the ``email`` package (a
  ``Message``, a header registry): 7.6 % of the reactor. LocalStack never reads
  ``request.args``; the gateway reads the body through WSGI, from the start.
* Twisted writes an access-log line per request (``HTTPFactory.log``), formatted and
  passed to Twisted's logging: 5.7 % of the reactor. Nobody reads it; LocalStack
  logs requests itself (and :mod:`.request_log` quiets that when no log is kept).

``apply()`` turns the form parsing off for every request of the gateway's request
class, and, when no log is kept (``SFNP_REQUEST_LOG=0``, as :mod:`.request_log`), the
access log too. Requests, responses and bodies are unchanged.
"""

from __future__ import annotations

import os

_APPLIED = "_sfnp_lean_http"


def apply() -> bool:
    """Patch rolo's Twisted request and site classes once; whether the form parsing is off."""
    from rolo.serving.twisted import TwistedGateway, TwistedRequestAdapter

    if not getattr(TwistedRequestAdapter, _APPLIED, False):
        original_init = TwistedRequestAdapter.__init__

        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            # Read by twisted.web.http.Request.requestReceived, set by its __init__.
            self._parsePOSTFormSubmission = False

        TwistedRequestAdapter.__init__ = __init__
        setattr(TwistedRequestAdapter, _APPLIED, True)
    if os.environ.get("SFNP_REQUEST_LOG", "1") == "0":
        TwistedGateway.log = _no_access_log
    return True


def _no_access_log(self, request) -> None:
    """``HTTPFactory.log`` for a server whose access log nobody keeps."""
