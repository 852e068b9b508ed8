"""Tests of pyhudi.keygen: Hudi's key generators over Arrow batches.

Expected strings come from Apache Hudi's own tests (cited per test; paths are in apache/hudi under
hudi-spark-datasource/hudi-spark/src/test/java/org/apache/hudi/keygen/) and from Java-written fixture tables in
/work/shared/fixtures/hudi-tables.
"""

from __future__ import annotations

import datetime as dt
import pickle
import re
import zipfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.errors import ConfigError, PartitionPathError, PyHudiError, RecordKeyError
from pyhudi.keygen import (DEFAULT_PARTITION_PATH, KeyGenerator, auto_record_keys, build_key_generator,
                           escape_path_name, unescape_path_name)
from pyhudi.keygen.values import java_double_str, to_java_strings

RK = "hoodie.datasource.write.recordkey.field"
PP = "hoodie.datasource.write.partitionpath.field"
CLS = "hoodie.datasource.write.keygenerator.class"
TYPE = "hoodie.datasource.write.keygenerator.type"
HIVE = "hoodie.datasource.write.hive_style_partitioning"
ENC = "hoodie.datasource.write.partitionpath.urlencode"
TS = "hoodie.keygen.timebased."
OLD_TS = "hoodie.deltastreamer.keygen.timebased."
KG = "org.apache.hudi.keygen."

FIXTURES = Path("/work/shared/fixtures/hudi-tables")


def hudi_test_record(**overrides) -> pa.RecordBatch:
    """The record of Hudi's KeyGeneratorTestUtilities.getRecord(): _row_key=key1, pii_col=pi,
    timestamp=4357686 (long), ts_ms=2020-03-21, nested_col={prop1, prop2}."""
    nested_type = pa.struct([("prop1", pa.string()), ("prop2", pa.int64())])
    cols = {
        "timestamp": pa.array([4357686], pa.int64()),
        "_row_key": pa.array(["key1"]),
        "ts_ms": pa.array(["2020-03-21"]),
        "pii_col": pa.array(["pi"]),
        "nested_col": pa.array([{"prop1": "val1", "prop2": 10}], nested_type),
    }
    cols.update(overrides)
    return pa.record_batch(cols)


def keys(kg: KeyGenerator, batch) -> tuple[list, list]:
    return kg.record_keys(batch).to_pylist(), kg.partition_paths(batch).to_pylist()


# ============================================================================================ Simple


def test_simple_happy_flow():
    # TestSimpleKeyGenerator#testHappyFlow
    kg = build_key_generator({RK: "_row_key", PP: "timestamp", HIVE: "true"})
    assert kg.java_class == KG + "SimpleKeyGenerator"
    assert kg.record_key_fields == ["_row_key"] and kg.partition_path_fields == ["timestamp"]
    assert keys(kg, hudi_test_record()) == (["key1"], ["timestamp=4357686"])


@pytest.mark.parametrize("nested, expected", [
    (None, "nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    ({"prop1": None, "prop2": 10}, "nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    ({"prop1": "", "prop2": 10}, "nested_col.prop1=__HIVE_DEFAULT_PARTITION__"),
    ({"prop1": "val1", "prop2": 10}, "nested_col.prop1=val1"),
])
def test_simple_nested_partition_field(nested, expected):
    # TestSimpleKeyGenerator#testNestedPartitionPathField (null record, null/empty/"val1" prop1)
    nested_type = pa.struct([("prop1", pa.string()), ("prop2", pa.int64())])
    batch = hudi_test_record(nested_col=pa.array([nested], nested_type))
    kg = build_key_generator({RK: "_row_key", PP: "nested_col.prop1", HIVE: "true"})
    assert keys(kg, batch) == (["key1"], [expected])


def test_nested_record_key_field():
    kg = build_key_generator({RK: "nested_col.prop2", PP: "pii_col"})
    assert keys(kg, hudi_test_record()) == (["10"], ["pi"])


def test_field_names_resolve_case_insensitively_like_spark():
    batch = pa.record_batch({"ID": [5], "Nested": pa.array([{"Inner": "x"}], pa.struct([("Inner", pa.string())]))})
    kg = build_key_generator({RK: "id", PP: "nested.inner", HIVE: "true"})
    assert keys(kg, batch) == (["5"], ["nested.inner=x"])


def test_simple_non_hive_and_default_partition():
    batch = pa.record_batch({"id": [1, 2, 3], "region": ["us", None, ""]})
    kg = build_key_generator({RK: "id", PP: "region"})
    assert keys(kg, batch) == (["1", "2", "3"], ["us", DEFAULT_PARTITION_PATH, DEFAULT_PARTITION_PATH])


def test_works_on_tables_with_chunks():
    table = pa.Table.from_batches([pa.record_batch({"id": [1, 2], "p": ["a", "b"]}),
                                   pa.record_batch({"id": [3], "p": ["c"]})])
    kg = build_key_generator({RK: "id", PP: "p", HIVE: "true"})
    assert keys(kg, table) == (["1", "2", "3"], ["p=a", "p=b", "p=c"])


def test_empty_batch():
    batch = pa.record_batch({"id": pa.array([], pa.int32()), "p": pa.array([], pa.string())})
    for opts in ({RK: "id", PP: "p"}, {RK: "id,p", PP: "p"}, {RK: "id"}):
        kg = build_key_generator(opts)
        assert keys(kg, batch) == ([], [])


# ============================================================================================ Complex


def test_complex_happy_flow():
    # TestComplexKeyGenerator#testHappyFlow (note the space in "_row_key, pii_col")
    kg = build_key_generator({RK: "_row_key, pii_col", PP: "timestamp,ts_ms", HIVE: "true", CLS: KG + "ComplexKeyGenerator"})
    assert kg.record_key_fields == ["_row_key", "pii_col"]
    assert keys(kg, hudi_test_record()) == (["_row_key:key1,pii_col:pi"], ["timestamp=4357686/ts_ms=2020-03-21"])


def test_complex_multiple_fields_not_hive():
    # TestComplexKeyGenerator#testMultipleValueKeyGenerator: rider/driver joined by "/"
    batch = pa.record_batch({"_row_key": ["k"], "timestamp": [1.5], "rider": ["rider-1"], "driver": ["driver-2"]})
    kg = build_key_generator({RK: "_row_key,timestamp", PP: "rider,driver", CLS: KG + "ComplexKeyGenerator"})
    assert keys(kg, batch) == (["_row_key:k,timestamp:1.5"], ["rider-1/driver-2"])


def test_complex_non_partitioned():
    # TestComplexKeyGenerator#testMultipleValueKeyGeneratorNonPartitioned
    kg = build_key_generator({RK: "_row_key,timestamp", PP: "", CLS: KG + "ComplexKeyGenerator"})
    assert kg.partition_path_fields == []
    assert keys(kg, hudi_test_record()) == (["_row_key:key1,timestamp:4357686"], [""])
    assert kg.partition_values("") == {}


def test_complex_single_record_key_field_encoding():
    # Hudi 0.14.1 / 0.15.0 (HUDI-7001, apache/hudi#9936; apache/hudi#12008 confirms for 0.15): bare value.
    # Hudi <= 0.14.0 and >= 0.14.2/0.15.1/1.1 default (HUDI-9666): "field:value",
    # as TestComplexKeyGenerator#testSingleValueKeyGenerator asserts ("_row_key:" + rowKey).
    opts = {RK: "_row_key", PP: "timestamp", CLS: KG + "ComplexKeyGenerator"}
    assert keys(build_key_generator(opts), hudi_test_record()) == (["key1"], ["4357686"])
    for key in ("hoodie.write.complex.keygen.new.encoding", "hoodie.datasource.write.complex.keygen.new.encoding"):
        kg = build_key_generator({**opts, key: "false"})
        assert keys(kg, hudi_test_record()) == (["_row_key:key1"], ["4357686"])
        kg = build_key_generator({**opts, key: "true"})
        assert keys(kg, hudi_test_record()) == (["key1"], ["4357686"])


def test_complex_null_and_empty_parts():
    # BuiltinKeyGenerator / KeyGenUtils: null part -> __null__, empty part -> __empty__
    batch = pa.record_batch({"a": ["x", None, "", "y", None], "b": pa.array([1, 2, 3, None, None], pa.int64())})
    kg = build_key_generator({RK: "a,b", PP: ""})
    with pytest.raises(RecordKeyError, match=r"all record key fields \(a, b\) are null or empty in 1 of 5 rows "
                                             r"\(first at row 4\)"):
        kg.record_keys(batch)
    assert kg.record_keys(batch.slice(0, 4)).to_pylist() == ["a:x,b:1", "a:__null__,b:2", "a:__empty__,b:3",
                                                             "a:y,b:__null__"]


def test_complex_partition_default_values_hive_style():
    batch = pa.record_batch({"id": [1], "p1": [None], "p2": [""], "p3": ["x"]})
    kg = build_key_generator({RK: "id", PP: "p1,p2,p3", HIVE: "true"})
    assert kg.partition_paths(batch).to_pylist() == [
        "p1=__HIVE_DEFAULT_PARTITION__/p2=__HIVE_DEFAULT_PARTITION__/p3=x"]
    assert kg.partition_values("p1=__HIVE_DEFAULT_PARTITION__/p2=__HIVE_DEFAULT_PARTITION__/p3=x") == {
        "p1": None, "p2": None, "p3": "x"}


# ============================================================================================ Nonpartitioned / GlobalDelete


def test_nonpartitioned():
    # TestNonpartitionedKeyGenerator / TestCustomKeyGenerator#testNonPartitionedKeyGenerator: "key1", ""
    kg = build_key_generator({RK: "_row_key", PP: "timestamp", CLS: KG + "NonpartitionedKeyGenerator"})
    assert kg.partition_path_fields == []
    assert keys(kg, hudi_test_record()) == (["key1"], [""])
    kg2 = build_key_generator({RK: "_row_key,pii_col", CLS: KG + "NonpartitionedKeyGenerator"})
    assert keys(kg2, hudi_test_record()) == (["_row_key:key1,pii_col:pi"], [""])
    assert kg.partition_values("") == {}
    with pytest.raises(PartitionPathError, match="not partitioned"):
        kg.partition_values("a=1")


def test_global_delete_always_composite():
    kg = build_key_generator({RK: "_row_key", PP: "timestamp", CLS: KG + "GlobalDeleteKeyGenerator"})
    assert keys(kg, hudi_test_record()) == (["_row_key:key1"], [""])


# ============================================================================================ Custom


def _custom(pp: str, rk: str = "_row_key", **extra) -> KeyGenerator:
    opts = {RK: rk, PP: pp, HIVE: "true", CLS: KG + "CustomKeyGenerator",
            OLD_TS + "timestamp.type": "DATE_STRING", OLD_TS + "input.dateformat": "yyyy-MM-dd",
            OLD_TS + "output.dateformat": "yyyyMMdd"}
    opts.update(extra)
    return build_key_generator(opts)


def test_custom_simple():
    # TestCustomKeyGenerator#testSimpleKeyGenerator
    assert keys(_custom("timestamp:simple"), hudi_test_record()) == (["key1"], ["timestamp=4357686"])


def test_custom_timestamp():
    # TestCustomKeyGenerator#testTimestampBasedKeyGenerator
    assert keys(_custom("ts_ms:timestamp"), hudi_test_record()) == (["key1"], ["ts_ms=20200321"])


def test_custom_complex():
    # TestCustomKeyGenerator#testComplexRecordKeyWithSimplePartitionPath / ...WithComplexPartitionPath
    assert keys(_custom("timestamp:simple", rk="_row_key, pii_col"), hudi_test_record()) == (
        ["_row_key:key1,pii_col:pi"], ["timestamp=4357686"])
    kg = _custom("timestamp:simple,ts_ms:timestamp", rk="_row_key, pii_col")
    assert kg.partition_path_fields == ["timestamp", "ts_ms"]
    assert keys(kg, hudi_test_record()) == (["_row_key:key1,pii_col:pi"], ["timestamp=4357686/ts_ms=20200321"])
    assert kg.partition_values("timestamp=4357686/ts_ms=20200321") == {"timestamp": "4357686", "ts_ms": "20200321"}


def test_custom_non_partitioned_and_inference():
    assert keys(_custom(""), hudi_test_record()) == (["key1"], [""])
    kg = build_key_generator({RK: "id", PP: "region:simple,ts:timestamp", TS + "timestamp.type": "EPOCHMILLISECONDS",
                              TS + "output.dateformat": "yyyy/MM/dd", TS + "timezone": "UTC"})
    assert kg.java_class == KG + "CustomKeyGenerator"
    batch = pa.record_batch({"id": [7], "region": ["us"], "ts": pa.array([1_700_000_000_000], pa.int64())})
    assert keys(kg, batch) == (["7"], ["us/2023/11/14"])
    # the timestamp part spans three path segments
    assert kg.partition_values("us/2023/11/14") == {"region": "us", "ts": "2023/11/14"}
    with pytest.raises(PartitionPathError, match="has 2 segments"):
        kg.partition_values("us/2023")


def test_custom_bad_partition_specs():
    # TestCustomKeyGenerator#testPartitionFieldsInImproperFormat / #testInvalidPartitionKeyType
    with pytest.raises(ConfigError, match="field:type"):
        _custom("timestamp")
    with pytest.raises(ConfigError, match="DUMMY"):
        _custom("timestamp:dummy")


# ============================================================================================ TimestampBased


def _ts(field: str, ts_type: str, out: str, tz: str | None = None, unit: str | None = None, **extra) -> KeyGenerator:
    opts = {RK: "field1", PP: field, HIVE: "false", CLS: KG + "TimestampBasedKeyGenerator",
            TS + "timestamp.type": ts_type, TS + "output.dateformat": out}
    if tz is not None:
        opts[TS + "timezone"] = tz
    if unit is not None:
        opts[OLD_TS + "timestamp.scalar.time.unit"] = unit
    opts.update(extra)
    return build_key_generator(opts)


def _one(kg: KeyGenerator, value, typ=None) -> str:
    field = kg.partition_path_fields[0]
    batch = pa.record_batch({"field1": ["f1"], field: pa.array([value], typ)})
    return kg.partition_paths(batch).to_pylist()[0]


def test_timestamp_epoch_millis_and_zones():
    # TestTimestampBasedKeyGenerator#testTimestampBasedKeyGenerator
    kg = _ts("createTime", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT+8:00")
    assert kg.java_class == KG + "TimestampBasedKeyGenerator"
    assert _one(kg, 1578283932000, pa.int64()) == "2020-01-06 12"
    assert _one(_ts("createTime", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT"), 1578283932000, pa.int64()) \
        == "2020-01-06 04"
    # createTime is a decimal(20, 4): BigDecimal.longValue() drops the fraction
    assert _one(_ts("createTimeDecimal", "EPOCHMILLISECONDS", "yyyy-MM-dd hh", "GMT+8:00"),
                Decimal("1578283932000.0001"), pa.decimal128(20, 4)) == "2020-01-06 12"
    # null -> 1L -> 1 ms after the epoch
    assert _one(kg, None, pa.int64()) == "1970-01-01 08"


def test_timestamp_date_string():
    # TestTimestampBasedKeyGenerator#testTimestampBasedKeyGenerator (DATE_STRING cases)
    extra = {OLD_TS + "input.dateformat": "yyyy-MM-dd hh:mm:ss"}
    assert _one(_ts("createTimeString", "DATE_STRING", "yyyy-MM-dd hh", "GMT+8:00", **extra),
                "2020-01-06 12:12:12") == "2020-01-06 12"
    assert _one(_ts("createTimeString", "DATE_STRING", "yyyy-MM-dd hh", "GMT", **extra),
                "2020-01-06 12:12:12") == "2020-01-06 12"
    # null DATE_STRING: 1 ms after the epoch, printed with the first input format and parsed back
    assert _one(_ts("createTime", "DATE_STRING", "yyyy-MM-dd hh:mm:ss", "GMT", **extra), None, pa.string()) \
        == "1970-01-01 12:00:00"


def test_timestamp_epoch_micros():
    # TestTimestampBasedKeyGenerator#testTimestampBasedKeyGenerator (EPOCHMICROSECONDS, long and decimal)
    kg = _ts("createTime", "EPOCHMICROSECONDS", "yyyy-MM-dd hh", "GMT+8:00")
    assert _one(kg, 1578283932123456, pa.int64()) == "2020-01-06 12"
    assert _one(_ts("createTimeDecimal", "EPOCHMICROSECONDS", "yyyy-MM-dd hh", "GMT+8:00"),
                Decimal("1578283932123456.0001"), pa.decimal128(20, 4)) == "2020-01-06 12"


def test_timestamp_scalar():
    # TestTimestampBasedKeyGenerator#testScalar ("days" is accepted in any case)
    kg = _ts("createTime", "SCALAR", "yyyy-MM-dd hh", "GMT", "days")
    assert _one(kg, 20000, pa.int64()) == "2024-10-04 12"
    assert _one(kg, None, pa.int64()) == "1970-01-02 12"
    assert _one(_ts("createTime", "SCALAR", "yyyy-MM-dd", "GMT", "DAYS"), 18736, pa.int64()) == "2021-04-19"


def test_timestamp_scalar_with_logical_type():
    # TestTimestampBasedKeyGenerator#testScalarWithLogicalType: timestamp-micros column, consistent timestamps on
    kg = _ts("createTime", "SCALAR", "yyyy/MM/dd", "GMT", "MICROSECONDS",
             **{"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"})
    typ = pa.timestamp("us", tz="UTC")
    assert _one(kg, 1638513806000000, typ) == "2021/12/03"
    assert _one(kg, None, typ) == "1970/01/01"
    # without the flag the Avro value is the long of microseconds, converted with the unit
    kg2 = _ts("createTime", "EPOCHMICROSECONDS", "yyyy/MM/dd", "GMT")
    assert _one(kg2, 1638513806000000, typ) == "2021/12/03"


ISO = "yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd'T'HH:mm:ss.SSSZ"


@pytest.mark.parametrize("value, formats, in_tz, out_tz, out, expected", [
    # TestTimestampBasedKeyGenerator#test_ExpectsMatch_* cases
    ("2020-04-01T13:01:33.428Z", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "", "GMT", "yyyyMMddHH", "2020040113"),
    ("2020-04-01T13:01:33.428Z", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "", "", "yyyyMMddHH", "2020040113"),
    ("2020-04-01T13:01:33.428Z", ISO, "", "UTC", "yyyyMMddHH", "2020040113"),
    ("2020-04-01T13:01:33Z", ISO, "", "UTC", "yyyyMMddHH", "2020040113"),
    ("2020-04-01T13:01:33-05:00", ISO, "", "UTC", "yyyyMMddHH", "2020040118"),
    ("2020-04-01T13:01:33.123-05:00", ISO, "", "UTC", "yyyyMMddHH", "2020040118"),
    ("2020-04-01T13:01:33.123Z", ISO, "", "EST", "yyyyMMddHH", "2020040109"),  # Joda: EST -> America/New_York
    ("20200401", ISO + ",yyyyMMdd", "UTC", "UTC", "MM/dd/yyyy", "04/01/2020"),
    # no output zone: keep the parsed offset
    ("2020-04-01T23:30:00+05:30", ISO, "", "", "yyyy-MM-dd HH:mm ZZ", "2020-04-01 23:30 +05:30"),
])
def test_timestamp_input_formats(value, formats, in_tz, out_tz, out, expected):
    kg = build_key_generator({RK: "field1", PP: "createTimeString", CLS: KG + "TimestampBasedKeyGenerator",
                              TS + "timestamp.type": "DATE_STRING", TS + "input.dateformat": formats,
                              TS + "input.timezone": in_tz, TS + "output.dateformat": out,
                              TS + "output.timezone": out_tz})
    assert _one(kg, value) == expected


@pytest.mark.parametrize("value, fmt, in_tz, expected", [
    ("01 jan 2020 01:05 pm", "dd MMM yyyy hh:mm a", "", "2020-01-01 13:05 +00:00"),   # text month, AM/PM
    ("3 SEPTEMBER 2021 12:00 AM", "d MMMM yyyy hh:mm a", "", "2021-09-03 00:00 +00:00"),
    ("20-04-01", "yy-MM-dd", "", "2020-04-01 00:00 +00:00"),                          # two-digit year pivot
    ("2020-04-01", "yy-MM-dd", "", "2020-04-01 00:00 +00:00"),                        # Joda's lenient 'yy'
    ("200401", "yyMMdd", "", "2020-04-01 00:00 +00:00"),
    ("2020-04-01 10:00:00.5+0530", "yyyy-MM-dd HH:mm:ss.SSSZ", "", "2020-04-01 10:00 +05:30"),
    ("2020-04-01T10:00", "yyyy-MM-dd'T'HH:mm", "Asia/Shanghai", "2020-04-01 10:00 +08:00"),
    ("2020-04-01t10:00z", "yyyy-MM-dd'T'HH:mmZ", "Asia/Shanghai", "2020-04-01 18:00 +08:00"),  # literals ignore case
    ("2021-11-07 01:30", "yyyy-MM-dd HH:mm", "America/New_York", "2021-11-07 01:30 -04:00"),  # overlap: earlier
])
def test_timestamp_parsing_details(value, fmt, in_tz, expected):
    kg = build_key_generator({RK: "id", PP: "s", CLS: KG + "TimestampBasedKeyGenerator",
                              TS + "timestamp.type": "MIXED", TS + "input.dateformat": fmt,
                              TS + "input.timezone": in_tz, TS + "output.dateformat": "yyyy-MM-dd HH:mm ZZ"})
    assert _one(kg, value) == expected


def test_timestamp_dst_gap_and_input_delimiter():
    kg = build_key_generator({RK: "id", PP: "s", CLS: KG + "TimestampBasedKeyGenerator",
                              TS + "timestamp.type": "DATE_STRING", TS + "input.dateformat": "yyyy-MM-dd HH:mm",
                              TS + "input.timezone": "America/New_York", TS + "output.dateformat": "yyyy"})
    with pytest.raises(PartitionPathError, match="does not exist"):
        _one(kg, "2021-03-14 02:30")
    kg2 = build_key_generator({RK: "id", PP: "s", CLS: KG + "TimestampBasedKeyGenerator",
                               TS + "timestamp.type": "DATE_STRING", TS + "input.dateformat": "yyyy/MM/dd;dd.MM.yyyy",
                               TS + "input.dateformat.list.delimiter.regex": ";",
                               TS + "output.dateformat": "yyyy-MM-dd"})
    batch = pa.record_batch({"id": [1, 2], "s": ["2024/02/29", "01.03.2024"]})
    assert kg2.partition_paths(batch).to_pylist() == ["2024-02-29", "2024-03-01"]


def test_timestamp_input_not_matching():
    # TestTimestampBasedKeyGenerator#test_Throws_MultipleInputFormats_InputDateNotMatchingFormats
    kg = build_key_generator({RK: "field1", PP: "s", CLS: KG + "TimestampBasedKeyGenerator",
                              TS + "timestamp.type": "DATE_STRING", TS + "input.dateformat": ISO,
                              TS + "output.dateformat": "yyyyMMddHH", TS + "output.timezone": "UTC"}, "trips")
    with pytest.raises(PartitionPathError, match=r"table 'trips'.*'s'.*2020-04-01 13:01:33.123-05:00"):
        _one(kg, "2020-04-01 13:01:33.123-05:00")
    with pytest.raises(PartitionPathError, match="out of range"):
        _one(kg, "2020-02-30T10:00:00Z")


def test_timestamp_output_patterns_and_named_zones():
    millis = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z, a Tuesday
    cases = {
        "yyyy/MM/dd": "2023/11/15",
        "yyyyMMddHH": "2023111507",
        "yyyy-MM-dd HH:mm:ss.SSS": "2023-11-15 07:13:20.123",
        "yy-M-d h:m a": "23-11-15 7:13 AM",
        "MMM dd, yyyy EEE": "Nov 15, 2023 Wed",
        "MMMM EEEE D": "November Wednesday 319",
        "xxxx-'W'ww-e": "2023-W46-3",
        "'year='yyyy'/month='MM": "year=2023/month=11",
        "HH:mm Z": "07:13 +0900",
        "ZZZ": "Asia/Tokyo",
        "kk KK": "07 07",
        "G C z": "AD 20 JST",
        "S SS SSSS": "1 12 1230",
    }
    for pattern, expected in cases.items():
        kg = _ts("t", "EPOCHMILLISECONDS", pattern, "Asia/Tokyo")
        assert _one(kg, millis, pa.int64()) == expected, pattern
    # daylight saving time: New York is -04:00 in July, -05:00 in January
    kg = _ts("t", "UNIX_TIMESTAMP", "yyyy-MM-dd HH ZZ", "America/New_York")
    batch = pa.record_batch({"field1": ["a", "b"], "t": pa.array([1_689_000_000, 1_705_000_000], pa.int64())})
    assert kg.partition_paths(batch).to_pylist() == ["2023-07-10 10 -04:00", "2024-01-11 14 -05:00"]


def test_timestamp_value_types():
    kg = _ts("t", "UNIX_TIMESTAMP", "yyyy-MM-dd", "UTC")
    assert _one(kg, 1_700_000_000.9, pa.float64()) == "2023-11-14"
    assert _one(kg, 1_700_000_000, pa.int32()) == "2023-11-14"
    # a date is its epoch day, converted with the unit (Hudi's behaviour): use SCALAR + DAYS for dates
    assert _one(_ts("t", "SCALAR", "yyyy-MM-dd", "UTC", "DAYS"), dt.date(2024, 2, 29), pa.date32()) == "2024-02-29"
    with pytest.raises(PartitionPathError, match="DATE_STRING"):
        _one(kg, "2024-01-01")
    with pytest.raises(PartitionPathError, match="SCALAR with scalar.time.unit DAYS"):
        _one(_ts("t", "DATE_STRING", "yyyy", "UTC", **{TS + "input.dateformat": "yyyy"}), dt.date(2024, 1, 1),
             pa.date32())


def test_timestamp_hive_style_and_encoding():
    kg = build_key_generator({RK: "id", PP: "ts", CLS: KG + "TimestampBasedKeyGenerator", HIVE: "true", ENC: "true",
                              TS + "timestamp.type": "EPOCHMILLISECONDS", TS + "output.dateformat": "yyyy/MM/dd HH:mm",
                              TS + "timezone": "UTC"})
    batch = pa.record_batch({"id": [1], "ts": pa.array([1_700_000_000_000], pa.int64())})
    assert kg.partition_paths(batch).to_pylist() == ["ts=2023%2F11%2F14 22%3A13"]
    assert kg.partition_values("ts=2023%2F11%2F14 22%3A13") == {"ts": "2023/11/14 22:13"}


@pytest.mark.parametrize("opts, match", [
    ({}, "timestamp.type"),
    ({TS + "timestamp.type": "WEEKLY"}, "not one of"),
    ({TS + "timestamp.type": "EPOCHMILLISECONDS"}, "output.dateformat"),
    ({TS + "timestamp.type": "DATE_STRING", TS + "output.dateformat": "yyyy"}, "input.dateformat"),
    ({TS + "timestamp.type": "SCALAR", TS + "timestamp.scalar.time.unit": "fortnights",
      TS + "output.dateformat": "yyyy"}, "TimeUnit"),
    ({TS + "timestamp.type": "EPOCHMILLISECONDS", TS + "output.dateformat": "yyyy-qq"}, "illegal pattern"),
    ({TS + "timestamp.type": "EPOCHMILLISECONDS", TS + "output.dateformat": "yyyy", TS + "timezone": "Mars/Olympus"},
     "not a time zone"),
])
def test_timestamp_config_errors(opts, match):
    with pytest.raises(ConfigError, match=match):
        build_key_generator({RK: "id", PP: "ts", CLS: KG + "TimestampBasedKeyGenerator", **opts}, "t")


def test_spark_sql_timestamp_partitions():
    # SqlKeyGenerator.convertPartitionPathToSqlType: a TIMESTAMP partition column of a Spark SQL write becomes
    # "yyyy-MM-dd HH:mm:ss", escaped, instead of the epoch-microsecond string of a datasource write
    ts = pa.array([dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.timezone.utc), None], pa.timestamp("us", tz="UTC"))
    batch = pa.record_batch({"id": [1, 2], "region": ["us", "eu"], "ts": ts})
    opts = {RK: "id", PP: "region,ts", CLS: "org.apache.spark.sql.hudi.command.SqlKeyGenerator",
            "hoodie.sql.origin.keygen.class": KG + "ComplexKeyGenerator",
            "hoodie.sql.partition.schema": "region STRING,`ts` TIMESTAMP"}
    kg = build_key_generator(opts)
    assert kg.java_class == KG + "ComplexKeyGenerator"
    assert kg.partition_paths(batch).to_pylist() == ["us/2023-04-01 12%3A01%3A00", "eu/__HIVE_DEFAULT_PARTITION__"]
    kg = build_key_generator({**opts, HIVE: "true"})
    assert kg.partition_paths(batch).to_pylist()[0] == "region=us/ts=2023-04-01 12%3A01%3A00"
    # a datasource write of the same data keeps Hudi's Avro rendering (epoch microseconds)
    kg = build_key_generator({RK: "id", PP: "region,ts"})
    assert kg.partition_paths(batch).to_pylist()[0] == "us/1680350460000000"


# ============================================================================================ value rendering


@pytest.mark.parametrize("values, typ, expected", [
    ([1, -7, None], pa.int8(), ["1", "-7", None]),
    ([300], pa.int16(), ["300"]),
    ([9876543210], pa.int64(), ["9876543210"]),
    ([True, False], pa.bool_(), ["true", "false"]),
    ([3.14159, 1.0, 100.0, 1e7, 1.0e-3, 1.0e-4, 123456789.0, 0.1 + 0.2, -0.0, float("nan"), float("inf"), 2.5e-300],
     pa.float64(),
     ["3.14159", "1.0", "100.0", "1.0E7", "0.001", "1.0E-4", "1.23456789E8", "0.30000000000000004", "-0.0", "NaN",
      "Infinity", "2.5E-300"]),
    ([1.0, 3.14, 0.1, 1e10], pa.float32(), ["1.0", "3.14", "0.1", "1.0E10"]),
    ([Decimal("12345.67890"), Decimal("-0.50000")], pa.decimal128(10, 5), ["12345.67890", "-0.50000"]),
    ([Decimal("0E-10"), Decimal("1E-10"), Decimal("0.0000001234"), Decimal("1.5")], pa.decimal128(20, 10),
     ["0E-10", "1E-10", "1.234E-7", "1.5000000000"]),
    ([dt.date(2023, 4, 1)], pa.date32(), ["2023-04-01"]),
    ([dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.timezone.utc)], pa.timestamp("us", tz="UTC"), ["1680350460000000"]),
    ([dt.datetime(2023, 4, 1, 12, 1)], pa.timestamp("ms"), ["1680350460000000"]),
    (["a", None, ""], pa.large_string(), ["a", None, ""]),
])
def test_java_string_rendering(values, typ, expected):
    # Java toString() of the Avro value: Integer/Long, Boolean, Double/Float, BigDecimal, LocalDate, Long micros
    assert to_java_strings(pa.array(values, typ)).to_pylist() == expected


def test_consistent_logical_timestamp_rendering():
    arr = pa.array([dt.datetime(2023, 4, 1, 12, 1, 0, 120000, tzinfo=dt.timezone.utc),
                    dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.timezone.utc)], pa.timestamp("us", tz="UTC"))
    assert to_java_strings(arr, consistent_logical_timestamp=True).to_pylist() == [
        "2023-04-01 12:01:00.12", "2023-04-01 12:01:00.0"]
    kg = build_key_generator({RK: "ts", PP: "",
                              "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"})
    assert kg.record_keys(pa.record_batch({"ts": arr})).to_pylist() == ["2023-04-01 12:01:00.12",
                                                                        "2023-04-01 12:01:00.0"]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_str_round_trips(x):
    text = java_double_str(x)
    assert float(text) == x
    assert re.fullmatch(r"-?\d+\.\d+(E-?\d+)?", text)


# ============================================================================================ url-encoding


def test_url_encoding_matches_hive_escaping():
    # PartitionPathEncodeUtils.escapePathName: Hive's set, %XX upper-case, space and non-ASCII kept
    assert escape_path_name("a/b c:d%e=f?g#h*i'j\"k\\l{m[n]o^p\x01\x7f+ü") == \
        "a%2Fb c%3Ad%25e%3Df%3Fg%23h%2Ai%27j%22k%5Cl%7Bm%5Bn%5Do%5Ep%01%7F+ü"
    assert unescape_path_name("a%2Fb c%3Ad%25e") == "a/b c:d%e"
    assert unescape_path_name("100%") == "100%" and unescape_path_name("%zz") == "%zz"
    batch = pa.record_batch({"id": [1, 2, 3], "p": ["2024/01/02", None, "x=y"]})
    kg = build_key_generator({RK: "id", PP: "p", HIVE: "true", ENC: "true"})
    assert kg.partition_paths(batch).to_pylist() == ["p=2024%2F01%2F02", "p=__HIVE_DEFAULT_PARTITION__", "p=x%3Dy"]
    assert kg.partition_values("p=2024%2F01%2F02") == {"p": "2024/01/02"}
    # without encoding Hudi writes the raw value (a "/" makes sub-directories)
    kg2 = build_key_generator({RK: "id", PP: "p", HIVE: "true"})
    assert kg2.partition_paths(batch).to_pylist()[0] == "p=2024/01/02"
    assert kg2.partition_values("p=2024/01/02") == {"p": "2024/01/02"}


@given(st.text())
def test_url_encode_round_trip(text):
    encoded = escape_path_name(text)
    assert "/" not in encoded
    assert unescape_path_name(encoded) == (text or DEFAULT_PARTITION_PATH)


# ============================================================================================ properties

_values = st.one_of(st.none(), st.text(max_size=12))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(_values, _values), min_size=1, max_size=8), hive=st.booleans())
def test_partition_values_round_trip_url_encoded(rows, hive):
    batch = pa.record_batch({"id": list(range(len(rows))), "p1": [r[0] for r in rows], "p2": [r[1] for r in rows]})
    kg = build_key_generator({RK: "id", PP: "p1,p2", HIVE: str(hive).lower(), ENC: "true"})
    try:
        paths = kg.partition_paths(batch).to_pylist()
    except PartitionPathError:  # '.' or '..' values
        assert any(v in (".", "..") for r in rows for v in r)
        return
    for (p1, p2), path in zip(rows, paths):
        expected = {"p1": p1 or None, "p2": p2 or None}
        if expected["p1"] == DEFAULT_PARTITION_PATH:
            expected["p1"] = None
        if expected["p2"] == DEFAULT_PARTITION_PATH:
            expected["p2"] = None
        assert kg.partition_values(path) == expected


_plain = st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1, max_size=10) \
    .filter(lambda s: s not in (".", "..", DEFAULT_PARTITION_PATH))


@given(region=_plain, day=_plain)
def test_hive_style_round_trip(region, day):
    kg = build_key_generator({RK: "id", PP: "region,day", HIVE: "true"})
    path = kg.partition_paths(pa.record_batch({"id": [1], "region": [region], "day": [day]}))[0].as_py()
    assert path == f"region={region}/day={day}"
    assert kg.partition_values(path) == {"region": region, "day": day}


@given(st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.integers(-10**12, 10**12))),
                min_size=1, max_size=10))
def test_complex_keys_of_random_values(rows):
    batch = pa.record_batch({"name": [r[0] for r in rows], "n": pa.array([r[1] for r in rows], pa.int64())})
    kg = build_key_generator({RK: "name,n", PP: ""})

    def part(v):
        return "__null__" if v is None else ("__empty__" if v == "" else str(v))

    if any(r[0] == "" and r[1] is None for r in rows):
        with pytest.raises(RecordKeyError):
            kg.record_keys(batch)
    else:
        assert kg.record_keys(batch).to_pylist() == [f"name:{part(a)},n:{part(b)}" for a, b in rows]


@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=20))
def test_simple_keys_of_random_longs(values):
    kg = build_key_generator({RK: "id", PP: ""})
    assert kg.record_keys(pa.record_batch({"id": pa.array(values, pa.int64())})).to_pylist() == [str(v) for v in values]


# ============================================================================================ building / inference


@pytest.mark.parametrize("opts, cls", [
    ({RK: "id"}, "NonpartitionedKeyGenerator"),
    ({RK: "id", PP: ""}, "NonpartitionedKeyGenerator"),
    ({RK: "id", PP: "p"}, "SimpleKeyGenerator"),
    ({RK: "id,x", PP: "p"}, "ComplexKeyGenerator"),
    ({RK: "id", PP: "p,q"}, "ComplexKeyGenerator"),
    ({RK: "id,x", PP: ""}, "NonpartitionedKeyGenerator"),
    ({RK: "id", PP: "p:simple"}, "CustomKeyGenerator"),
    ({RK: "id", PP: "p", TYPE: "complex"}, "ComplexKeyGenerator"),
    ({RK: "id", PP: "", TYPE: "NON_PARTITION"}, "NonpartitionedKeyGenerator"),
    ({RK: "id", PP: "p", TYPE: "SIMPLE_AVRO"}, "SimpleAvroKeyGenerator"),
    ({RK: "id", PP: "p", CLS: KG + "ComplexAvroKeyGenerator"}, "ComplexAvroKeyGenerator"),
    ({RK: "id", PP: "p", CLS: "ComplexKeyGenerator", TYPE: "SIMPLE"}, "ComplexKeyGenerator"),  # class wins
    ({RK: "id", PP: "p", CLS: "org.apache.spark.sql.hudi.command.SqlKeyGenerator",
      "hoodie.sql.origin.keygen.class": KG + "ComplexKeyGenerator"}, "ComplexKeyGenerator"),
    # hoodie.properties keys (table version 6 stores the class, version 8 the type)
    ({"hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "p",
      "hoodie.table.keygenerator.class": KG + "SimpleKeyGenerator"}, "SimpleKeyGenerator"),
    ({"hoodie.table.recordkey.fields": "id", "hoodie.table.keygenerator.type": "NON_PARTITION"},
     "NonpartitionedKeyGenerator"),
])
def test_class_resolution(opts, cls):
    # KeyGenUtils.inferKeyGeneratorType and HoodieSparkKeyGeneratorFactory
    assert build_key_generator(opts).java_class.endswith("." + cls)


@pytest.mark.parametrize("opts, match", [
    ({RK: "id", PP: "p", CLS: "org.example.MyKeyGen"}, "not supported"),
    ({RK: "id", PP: "p", TYPE: "FANCY"}, "not one of"),
    ({RK: "a,b", PP: "p", CLS: KG + "SimpleKeyGenerator"}, "one record key field"),
    ({RK: "a", PP: "p,q", CLS: KG + "SimpleKeyGenerator"}, "exactly one partition field"),
    ({RK: "a", PP: "", CLS: KG + "SimpleKeyGenerator"}, "NonpartitionedKeyGenerator"),
    ({RK: "a", PP: "p:simple", CLS: KG + "SimpleKeyGenerator"}, "CustomKeyGenerator"),
    ({RK: "a", PP: "p,q:simple", CLS: KG + "ComplexKeyGenerator"}, "CustomKeyGenerator"),
    ({RK: "a", PP: "p", HIVE: "yes"}, "not a boolean"),
])
def test_config_errors(opts, match):
    with pytest.raises(ConfigError, match=match) as info:
        build_key_generator(opts, "orders")
    assert "table 'orders'" in str(info.value)
    assert isinstance(info.value, PyHudiError)


def test_pickles_and_repr():
    kg = _custom("timestamp:simple,ts_ms:timestamp", rk="_row_key, pii_col")
    clone = pickle.loads(pickle.dumps(kg))
    assert keys(clone, hudi_test_record()) == keys(kg, hudi_test_record())
    assert "CustomKeyGenerator" in repr(clone)


def test_auto_record_keys():
    # HoodieRecord.generateSequenceId: instantTime + "_" + partitionId + "_" + rowId
    assert auto_record_keys("20240101000000000", 3, 10, 2).to_pylist() == [
        "20240101000000000_3_10", "20240101000000000_3_11"]


# ============================================================================================ errors


def test_null_or_empty_simple_key_names_table_and_field():
    kg = build_key_generator({RK: "id", PP: "p"}, "orders")
    batch = pa.record_batch({"id": ["a", None, "", "b"], "p": ["x"] * 4})
    with pytest.raises(RecordKeyError, match=r"table 'orders'.*'id'.*2 of 4 rows \(first at row 1\)") as info:
        kg.record_keys(batch)
    assert RK in str(info.value)
    # single-field complex keys (0.15 encoding) are simple keys
    kg2 = build_key_generator({RK: "id", PP: "p", CLS: KG + "ComplexKeyGenerator"}, "orders")
    with pytest.raises(RecordKeyError, match="null or empty"):
        kg2.record_keys(batch)


def test_missing_fields_list_available_columns():
    batch = pa.record_batch({"id": [1], "region": ["us"], "s": pa.array([{"x": 1}], pa.struct([("x", pa.int64())]))})
    kg = build_key_generator({RK: "uuid", PP: "city"}, "trips")
    with pytest.raises(RecordKeyError, match=r"table 'trips'.*'uuid'.*Available columns: id, region, s, s.x"):
        kg.record_keys(batch)
    with pytest.raises(PartitionPathError, match=r"table 'trips'.*'city'.*Available columns: id, region"):
        kg.partition_paths(batch)
    with pytest.raises(RecordKeyError, match="'s.y'"):
        build_key_generator({RK: "s.y"}).record_keys(batch)
    with pytest.raises(RecordKeyError, match="'id.x'"):
        build_key_generator({RK: "id.x"}).record_keys(batch)
    ts = build_key_generator({RK: "id", PP: "ts", CLS: KG + "TimestampBasedKeyGenerator",
                              TS + "timestamp.type": "EPOCHMILLISECONDS", TS + "output.dateformat": "yyyy"})
    with pytest.raises(PartitionPathError, match="'ts' is not in the data"):
        ts.partition_paths(batch)


def test_unsupported_key_types():
    batch = pa.record_batch({"b": pa.array([b"x"], pa.binary()), "l": pa.array([[1]], pa.list_(pa.int64()))})
    with pytest.raises(RecordKeyError, match="'b' has type binary"):
        build_key_generator({RK: "b"}).record_keys(batch)
    with pytest.raises(PartitionPathError, match="'l' has type list"):
        build_key_generator({RK: "b", PP: "l"}).partition_paths(batch)


def test_no_record_key_field():
    kg = build_key_generator({PP: "p"})
    assert kg.record_key_fields == []
    with pytest.raises(ConfigError, match="no record key field"):
        kg.record_keys(pa.record_batch({"p": ["x"]}))


def test_path_traversal_is_refused():
    kg = build_key_generator({RK: "id", PP: "p"}, "t")
    with pytest.raises(PartitionPathError, match=r"'\.\.'"):
        kg.partition_paths(pa.record_batch({"id": [1, 2], "p": ["ok", ".."]}))
    with pytest.raises(PartitionPathError):
        kg.partition_paths(pa.record_batch({"id": [1], "p": ["a/../b"]}))
    assert kg.partition_paths(pa.record_batch({"id": [1], "p": ["2024.01.01"]})).to_pylist() == ["2024.01.01"]


def test_partition_values_errors():
    kg = build_key_generator({RK: "id", PP: "a,b", HIVE: "true"}, "t")
    with pytest.raises(PartitionPathError, match="hive-style"):
        kg.partition_values("x=1/b=2")
    with pytest.raises(PartitionPathError, match="segments"):
        kg.partition_values("a=1")


# ============================================================================================ Java-written tables


def _java_properties(text: str) -> dict[str, str]:
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, _, value = line.partition("=")
        props[key.strip()] = re.sub(r"\\(.)", r"\1", value.strip())
    return props


def _fixture_zips() -> list[Path]:
    return sorted(FIXTURES.glob("*.zip")) if FIXTURES.is_dir() else []


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hudi_fixtures")
    for z in _fixture_zips():
        with zipfile.ZipFile(z) as archive:
            members = [m for m in archive.namelist() if not m.startswith("__MACOSX")]
            archive.extractall(root / z.stem, members)
    return root


META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


@pytest.mark.parametrize("zip_path", [pytest.param(z, id=z.stem) for z in _fixture_zips()])
def test_java_written_tables(fixture_root, zip_path):
    """Recompute _hoodie_record_key / _hoodie_partition_path of every base file from its data columns with the
    key generator configured from .hoodie/hoodie.properties and compare with what Java Hudi stored."""
    [props_file] = list((fixture_root / zip_path.stem).glob("*/.hoodie/hoodie.properties"))
    table_dir = props_file.parent.parent
    props = _java_properties(props_file.read_text())
    kg = build_key_generator(props, props.get("hoodie.table.name"))
    files = [f for f in table_dir.rglob("*.parquet") if ".hoodie" not in f.relative_to(table_dir).parts]
    assert files
    checked = 0
    for f in files:
        table = pq.read_table(f)
        data = table.drop_columns([c for c in META if c in table.column_names])
        expected_dir = f.parent.relative_to(table_dir).as_posix()
        expected_dir = "" if expected_dir == "." else expected_dir
        record_keys = kg.record_keys(data).to_pylist()
        paths = kg.partition_paths(data).to_pylist()
        assert set(paths) == {expected_dir}, f
        stored_keys = table.column("_hoodie_record_key").to_pylist()
        stored_paths = table.column("_hoodie_partition_path").to_pylist()
        if props.get("hoodie.populate.meta.fields", "true") == "true":
            assert record_keys == stored_keys, f
            assert paths == stored_paths, f
            checked += len(record_keys)
        else:
            assert set(stored_keys) == {None}  # virtual keys: nothing stored
        values = kg.partition_values(expected_dir)
        for field, value in values.items():
            assert {value} == set(to_java_strings(data.column(field).combine_chunks()).to_pylist())
    if props.get("hoodie.populate.meta.fields", "true") == "true":
        assert checked > 0
