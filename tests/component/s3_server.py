"""moto's S3 server with S3's conditional-write guarantee: run as `python s3_server.py PORT`.

moto checks `If-None-Match: *` / `If-Match` and then stores the object as two steps, so two racing conditional
PUTs can both succeed there (seen in CI: two holders of one lock). Amazon S3 decides them atomically. This server
serialises the requests that carry a condition, which gives moto the guarantee the tests rely on; every other
request runs as moto runs it, threaded."""

from __future__ import annotations

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

CONDITIONS = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MATCH")


def atomic_conditions(app):
    """WSGI middleware: one conditional request at a time, its check and its write together."""
    lock = threading.Lock()

    def serve(environ, start_response):
        if not any(name in environ for name in CONDITIONS):
            return app(environ, start_response)
        with lock:
            return list(app(environ, start_response))   # the whole body under the lock: the write happens here

    return serve


if __name__ == "__main__":
    os.environ.setdefault("MOTO_PORT", sys.argv[1])   # as moto's own server sets it
    run_simple("127.0.0.1", int(sys.argv[1]), atomic_conditions(DomainDispatcherApplication(create_backend_app)),
               threaded=True, request_handler=MotoRequestHandler)
