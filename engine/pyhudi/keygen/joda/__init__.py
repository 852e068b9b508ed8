"""Joda-Time date patterns and time zones, as Hudi's TimestampBasedKeyGenerator uses them.

Hudi formats partition paths with ``org.joda.time.format.DateTimeFormat.forPattern(...)`` and resolves zones with
``DateTimeZone.forTimeZone(TimeZone.getTimeZone(id))``. This module re-implements the parts of both that partition
paths need, vectorised over numpy/pyarrow:

* :func:`tokenize` splits a Joda pattern (``yyyy/MM/dd``, ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``, ``yyyyMMddHH``...).
* :func:`format_millis` prints epoch milliseconds with a pattern in a zone (one named zone, or a fixed offset
  per row), with Joda's field semantics (``hh`` is 1-12, ``kk`` 1-24, ``SSS`` the milliseconds, ``Z`` ``+0800``,
  ``ZZ`` ``+08:00``, ``ZZZ`` the zone id, ``MMM`` ``Jan``, ``EEEE`` ``Monday``...).
* :func:`parse_strings` parses strings against a list of input patterns (first full match wins, like Joda's
  multi-parser), honouring an offset in the text, else the input zone, else UTC.
* :func:`resolve_zone` turns a Java zone id into an Arrow zone: ``GMT+8:00`` style custom ids become fixed offsets,
  Joda's legacy three-letter ids are converted as Joda does (``EST`` -> ``America/New_York``), ``UTC``/``GMT`` -> UTC.

Where Java would fall back to the JVM's default zone, pyhudi uses UTC (Spark clusters normally run in UTC).

Modules, one concept each: ``zones``, ``patterns`` (tokenising), ``formatting``, ``parsing``. Import from
``pyhudi.keygen.joda``.
"""

from __future__ import annotations

from pyhudi.keygen.joda.formatting import format_millis
from pyhudi.keygen.joda.parsing import compile_input, parse_strings
from pyhudi.keygen.joda.patterns import Token, literal_slashes, tokenize
from pyhudi.keygen.joda.zones import MS_PER_DAY, ParseFailure, PatternError, ZoneError, resolve_zone

__all__ = ["format_millis", "compile_input", "parse_strings", "Token", "literal_slashes", "tokenize", "MS_PER_DAY",
           "ParseFailure", "PatternError", "ZoneError", "resolve_zone"]
