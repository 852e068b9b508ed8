"""Key generator config: the class or type, the timestamp family and the complex-key encoding switch
(Hudi's KeyGeneratorOptions / TimestampKeyGeneratorConfig). pyhudi.keygen reads these keys."""

from __future__ import annotations

from pyhudi.config.core import bool_value, declare, upper

KEYGEN_CLASS = declare("hoodie.datasource.write.keygenerator.class", None)
KEYGEN_TYPE = declare("hoodie.datasource.write.keygenerator.type", None, upper)
CONSISTENT_LOGICAL_TIMESTAMP = declare(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", False, bool_value,
    doc="true: timestamp-millis/micros fields are keyed as their logical value, like Spark's row writer.")
#: ``true``: a ComplexKeyGenerator with ONE record key field writes the bare value (Hudi 0.14.1, 0.15.0, 1.0.0-1.0.2);
#: ``false``: it writes ``field:value`` (Hudi <= 0.14.0, and the default again from 0.14.2 / 0.15.1 / 1.1.0).
#: pyhudi writes like Hudi 0.15.0 unless told otherwise.
COMPLEX_KEYGEN_NEW_ENCODING = declare("hoodie.write.complex.keygen.new.encoding", True, bool_value,
                                      doc="ComplexKeyGenerator with one key field: bare value (true) or field:value.")
COMPLEX_KEYGEN_NEW_ENCODING_LEGACY = declare("hoodie.datasource.write.complex.keygen.new.encoding", None, bool_value,
                                             doc="Older spelling of hoodie.write.complex.keygen.new.encoding.")

# --- keys the SQL layer stores in hoodie.properties ----------------------------------------------------
SQL_ORIGIN_KEYGEN_CLASS = declare("hoodie.sql.origin.keygen.class", None)
SQL_PARTITION_SCHEMA = declare("hoodie.sql.partition.schema", None)

# --- TimestampBasedKeyGenerator ------------------------------------------------------------------------
TIMESTAMP_PREFIXES = ("hoodie.keygen.timebased.", "hoodie.deltastreamer.keygen.timebased.")
_T = "hoodie.keygen.timebased."
TIMESTAMP_TYPE = declare(_T + "timestamp.type", None,
                         doc="UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR or DATE_STRING.")
TIMESTAMP_SCALAR_UNIT = declare(_T + "timestamp.scalar.time.unit", None)
TIMESTAMP_INPUT_FORMAT = declare(_T + "input.dateformat", None)
TIMESTAMP_INPUT_FORMAT_DELIMITER = declare(_T + "input.dateformat.list.delimiter.regex", None)
TIMESTAMP_TIMEZONE = declare(_T + "timezone", None)
TIMESTAMP_INPUT_TIMEZONE = declare(_T + "input.timezone", None)
TIMESTAMP_OUTPUT_FORMAT = declare(_T + "output.dateformat", None)
TIMESTAMP_OUTPUT_TIMEZONE = declare(_T + "output.timezone", None)
