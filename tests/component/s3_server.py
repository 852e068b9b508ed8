"""moto's S3 server with S3's conditional-write guarantee: run as `python s3_server.py PORT [MODE]`.

moto checks `If-None-Match: *` / `If-Match` and then stores the object as two steps, so two racing conditional
PUTs can both succeed there (seen in CI: two holders of one lock; 5 of 200 eight-writer races under load). Amazon S3
decides them atomically. MODE `atomic` (the default) serialises the requests that carry a condition, which gives
moto that guarantee; every other request runs as moto runs it, threaded. Two modes play stores without it:
`ignore` drops the condition headers (the store overwrites, as some S3-compatible stores do), `refuse` answers
501 NotImplemented to them."""

from __future__ import annotations

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

CONDITIONS = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MATCH")
NOT_IMPLEMENTED = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you '
                   b'provided implies functionality that is not implemented</Message></Error>')


def with_conditions(app, mode: str):
    """WSGI middleware: the conditional requests as MODE says, the rest as moto serves them."""
    lock = threading.Lock()

    def serve(environ, start_response):
        if not any(name in environ for name in CONDITIONS):
            return app(environ, start_response)
        if mode == "ignore":
            for name in CONDITIONS:
                environ.pop(name, None)
            return app(environ, start_response)
        if mode == "refuse":
            start_response("501 Not Implemented", [("Content-Type", "application/xml"),
                                                   ("Content-Length", str(len(NOT_IMPLEMENTED)))])
            return [NOT_IMPLEMENTED]
        with lock:
            return list(app(environ, start_response))   # the whole body under the lock: the write happens here

    return serve


if __name__ == "__main__":
    port, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "atomic")
    os.environ.setdefault("MOTO_PORT", port)   # as moto's own server sets it
    run_simple("127.0.0.1", int(port), with_conditions(DomainDispatcherApplication(create_backend_app), mode),
               threaded=True, request_handler=MotoRequestHandler)
