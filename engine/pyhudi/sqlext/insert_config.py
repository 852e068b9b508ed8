"""Which write an INSERT INTO makes, as Hudi decides it (ProvidesHoodieConfig.buildHoodieInsertConfig).

Two flows, the newer one first:
- ``hoodie.spark.sql.insert.into.operation`` (default ``insert``): upsert instead when the table has a precombine
  field, keys of its own and the option is not set; the duplicate policy ``hoodie.datasource.insert.dup.policy``
  (``none``/``drop``/``fail``) says what an insert does with keys already stored. Hudi 1.1 looks for the precombine
  field under ``hoodie.table.precombine.field``, which a version 9 table names ``hoodie.table.ordering.fields``: on
  version 9 an INSERT INTO is an insert and keeps a key twice (the Java-written v9 fixtures hold such keys; v8
  fixtures, written by Hudi 1.0, were upserted).
- the legacy ``hoodie.sql.insert.mode`` (``upsert``/``strict``/``non-strict``), honoured only when it is set and
  the operation option is not; strict refuses stored keys on copy-on-write tables.

An explicit ``hoodie.datasource.write.operation`` wins over both. The result is the operation plus the options
that carry the policy to the writer: the payload (ValidateDuplicateKeyPayload fails on a stored key),
``hoodie.datasource.write.insert.drop.duplicates`` and ``hoodie.merge.allow.duplicate.on.inserts``.
"""

from __future__ import annotations

from pyhudi import config as C
from pyhudi.errors import SqlError
from pyhudi.merge.payloads import DEFAULT_PAYLOAD, VALIDATE_DUPLICATE_KEY

INSERT_INTO_OPERATION = "hoodie.spark.sql.insert.into.operation"
INSERT_MODE = "hoodie.sql.insert.mode"
BULK_INSERT_ENABLE = "hoodie.sql.bulk.insert.enable"
DUP_POLICY = "hoodie.datasource.insert.dup.policy"
DUP_POLICIES = ("none", "drop", "fail")
INSERT_MODES = ("upsert", "strict", "non-strict")


def _flag(options: dict, key: str) -> bool:
    return str(options.get(key, "false")).strip().lower() == "true"


def insert_into_settings(options: dict, table_name: str, table_version: str = "6") -> tuple[str, dict[str, str]]:
    """(operation, extra write options) of an INSERT INTO (not OVERWRITE) with the statement's options, into a
    table of `table_version`."""
    auto_keys = not (options.get(C.RECORD_KEY.key) or "").strip()
    precombine = (options.get(C.PRECOMBINE.key) or "").strip()
    upsert_on_precombine = precombine if table_version != "9" else ""
    is_cow = str(options.get(C.TABLE_TYPE.key, "COPY_ON_WRITE")).upper() == "COPY_ON_WRITE"
    mode = str(options.get(INSERT_MODE, "upsert")).strip().lower()
    if mode not in INSERT_MODES:
        raise SqlError(f"{INSERT_MODE}={options[INSERT_MODE]} is not an insert mode; use one of "
                       f"{', '.join(INSERT_MODES)}")
    policy = str(options.get(DUP_POLICY, "none")).strip().lower()
    if policy not in DUP_POLICIES:
        raise SqlError(f"{DUP_POLICY}={options[DUP_POLICY]} is not a duplicate policy; use one of "
                       f"{', '.join(DUP_POLICIES)}")
    legacy_mode = INSERT_MODE in options and INSERT_INTO_OPERATION not in options
    operation = (options.get(C.OPERATION.key) or "").strip().lower()
    if not operation:
        operation = _legacy_operation(options, mode, auto_keys, precombine, table_name) if legacy_mode else \
            _insert_into_operation(options, auto_keys, upsert_on_precombine)
    extra: dict[str, str] = {}
    if legacy_mode and DUP_POLICY not in options:
        strict_validates = mode == "strict" and is_cow and operation in ("upsert", "insert")
        payload = VALIDATE_DUPLICATE_KEY if strict_validates else DEFAULT_PAYLOAD
    else:
        payload = VALIDATE_DUPLICATE_KEY if policy == "fail" else DEFAULT_PAYLOAD
        extra[C.INSERT_DROP_DUPLICATES.key] = str(policy == "drop").lower()
        if operation == "insert" and policy != "fail":   # HoodieSparkSqlWriter: inserts keep duplicates
            extra[C.MERGE_ALLOW_DUPLICATE_ON_INSERTS.key] = "true"
    extra.setdefault(C.PAYLOAD_CLASS.key, options.get(C.PAYLOAD_CLASS.key) or payload)
    return operation, extra


def _insert_into_operation(options: dict, auto_keys: bool, precombine: str) -> str:
    if INSERT_INTO_OPERATION not in options and not auto_keys and precombine:
        return "upsert"
    return str(options.get(INSERT_INTO_OPERATION, "insert")).strip().lower()


def _legacy_operation(options: dict, mode: str, auto_keys: bool, precombine: str, table_name: str) -> str:
    bulk = _flag(options, BULK_INSERT_ENABLE)
    drop_duplicates = _flag(options, C.INSERT_DROP_DUPLICATES.key)
    if bulk and mode != "non-strict":
        raise SqlError(f"Table with primaryKey can not use bulk insert in {mode} mode.\nTable {table_name}: "
                       f"SET {INSERT_MODE} = non-strict to bulk insert, or {BULK_INSERT_ENABLE} = false.")
    if bulk and drop_duplicates:
        raise SqlError(f"Bulk insert cannot support drop duplication. Please disable "
                       f"{C.INSERT_DROP_DUPLICATES.key} and try again.\nTable {table_name}.")
    if not bulk and not drop_duplicates and mode != "non-strict" and precombine and not auto_keys:
        return "upsert"
    if bulk or auto_keys:
        return "bulk_insert"
    return "insert"
