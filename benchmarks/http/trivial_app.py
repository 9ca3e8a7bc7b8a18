"""The framework's ceiling: Falcon under the same gunicorn settings, answering fixed bytes.

Routes ``/fixed/1``, ``/fixed/5`` and ``/fixed/10`` (and ``/fixed/postcode``,
``/fixed/reverse-5``, ... of run.py ``--endpoints``) return a JSON body of as many bytes as
``TRIVIAL_BODY_BYTES`` says for that workload (``"1:480,5:2300,10:4600,postcode:700"``,
written by run.py: the mean response size of the real service there). No key, no
parameters, no engine.
"""

from __future__ import annotations

import os

import falcon
import falcon.asgi


def _bodies() -> dict[str, bytes]:
    sizes = dict(item.split(":") for item in os.environ.get("TRIVIAL_BODY_BYTES", "5:2000").split(","))
    bodies = {}
    for load, size in sizes.items():
        head = b'{"hits":[],"limit":' + load.encode() + b',"pad":"' if load.isdigit() else b'{"hits":[],"pad":"'
        bodies[load] = head + b"x" * max(0, int(size) - len(head) - 2) + b'"}'
    return bodies


class Fixed:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.data = self.body


class AsyncFixed(Fixed):
    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.data = self.body


def _make(asgi: bool) -> falcon.App:
    app = falcon.asgi.App() if asgi else falcon.App()
    for load, body in _bodies().items():
        app.add_route(f"/fixed/{load}", (AsyncFixed if asgi else Fixed)(body))
    return app


wsgi_app = _make(asgi=False)
asgi_app = _make(asgi=True)
