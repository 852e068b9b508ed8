"""Spark on a terminal: only errors and the progress bar, not the JVM's start-up noise.

Spark logs its banners and its loopback / native-hadoop warnings before Python could lower the log level, so the
JVM must start with a log4j2 configuration that logs errors only; and the JVM itself prints a module warning
(`WARNING: Using incubator modules`) on its stderr, which only a filter on that stream can keep off the screen.
"""

from __future__ import annotations

import os
import tempfile
import threading

# The root level stays WARN, the level Spark's shell mode expects (else it prints "Setting default log level to
# ..."); the console appender's threshold filter lets only errors through.
_QUIET_LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
"""

_JVM_NOISE = (b"WARNING: Using incubator modules",)


def quiet_log_config() -> str:
    """Path of a log4j2 configuration logging errors only (pass it with -Dlog4j2.configurationFile)."""
    path = os.path.join(tempfile.gettempdir(), "pyhudi-log4j2-quiet.properties")
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != _QUIET_LOG4J2:
        with open(path, "w", encoding="utf-8") as out:
            out.write(_QUIET_LOG4J2)
    return path


def start_filtered(start):
    """Run `start()` (which launches the JVM) with stderr going through a filter that drops the JVM's start-up
    warnings and passes everything else, the progress bar included. A JVM already running is left as it is."""
    from pyspark import SparkContext
    if SparkContext._active_spark_context is not None:
        return start()
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        result = start()
    finally:
        os.dup2(saved, 2)   # this process writes to the terminal again; the JVM keeps the pipe
    threading.Thread(target=_pump, args=(read_end, saved), name="pyhudi-jvm-stderr", daemon=True).start()
    return result


def _pump(source: int, target: int) -> None:
    pending = b""
    while True:
        chunk = os.read(source, 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        out = b"".join(line + b"\n" for line in lines if not line.startswith(_JVM_NOISE))
        if b"\r" in pending:   # the progress bar redraws its line with \r: show it now
            out, pending = out + pending, b""
        if out:
            os.write(target, out)
    if pending:
        os.write(target, pending)
