"""hoodie.properties: java.util.Properties text (Hudi writes it with Java's Properties.store), its typed view
and the checked read every table load starts with."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Mapping

from pyhudi import config as C
from pyhudi.errors import CorruptFileError, UnsupportedTableVersionError
from pyhudi.storage import Storage
from pyhudi.testing import crash_point
from pyhudi.timeline import METAFOLDER

PROPERTIES_FILE = f"{METAFOLDER}/hoodie.properties"
PROPERTIES_BACKUP = f"{METAFOLDER}/hoodie.properties.backup"
READABLE_TABLE_VERSIONS = ("5", "6", "8", "9")   # 8 and 9 (Hudi 1.x) have timeline layout 2
WRITABLE_TABLE_VERSIONS = ("5", "6")
HUDI_1X_TABLE_VERSIONS = ("8", "9")

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"


# --- java.util.Properties text format ---------------------------------------------------------------------
def _escape(text: str, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char in "\\:=#!" or (char == " " and (is_key or index == 0)):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) > 0xFFFF:  # Java strings are UTF-16: escape both surrogates
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        elif ord(char) > 126 or ord(char) < 32:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def dump_properties(props: Mapping[str, str], comment: str | None = None) -> bytes:
    now = datetime.now(timezone.utc)
    lines = [f"#{comment}" if comment else "#Properties saved on " + now.isoformat().replace("+00:00", "Z"),
             "#" + now.strftime("%a %b %d %H:%M:%S UTC %Y")]
    lines += [f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in sorted(props.items())]
    return ("\n".join(lines) + "\n").encode("latin-1", errors="backslashreplace")


def load_properties(text: str) -> dict[str, str]:
    """Parse java.util.Properties text (comments, continuations, escapes, `=`/`:` separators)."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    props = {}
    for line in logical:
        key, value = _split_property(line)
        props[key] = value
    return props


def _split_property(line: str) -> tuple[str, str]:
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=: \t":
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(" \t")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t")
    return _unescape(key), _unescape(rest)


def _unescape(text: str) -> str:
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            nxt = text[index + 1]
            if nxt == "u":
                digits = text[index + 2:index + 6]
                if len(digits) < 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                    raise ValueError(f"malformed \\uxxxx escape {text[index:index + 6]!r}")
                out.append(chr(int(digits, 16)))
                index += 6
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "f": "\f"}.get(nxt, nxt))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def table_checksum(database: str | None, table: str) -> int:
    """Hudi's hoodie.table.checksum: CRC32 of "<database>.<table>" (just the table when no database)."""
    name = f"{database}.{table}" if database else table
    return zlib.crc32(name.encode("utf-8"))


@dataclass
class TableProperties:
    """Typed view of hoodie.properties."""

    values: dict[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    @property
    def name(self) -> str:
        return self.values.get(C.TABLE_NAME.key, "")

    @property
    def table_type(self) -> str:
        return self.values.get(C.TABLE_PROP_TYPE.key, COPY_ON_WRITE)

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def version(self) -> str:
        return self.values.get(C.TABLE_VERSION.key, "")

    @property
    def record_key_fields(self) -> list[str]:
        return _split_fields(self.values.get(C.TABLE_RECORDKEY_FIELDS.key))

    @property
    def partition_fields(self) -> list[str]:
        return _split_fields(self.values.get(C.TABLE_PARTITION_FIELDS.key))

    @property
    def precombine_field(self) -> str | None:
        """The ordering field: hoodie.table.precombine.field, or table version 9's hoodie.table.ordering.fields."""
        value = self.values.get(C.TABLE_PRECOMBINE_FIELD.key) or self.values.get(C.TABLE_ORDERING_FIELDS.key)
        return value.strip() or None if value else None

    @property
    def payload_class(self) -> str:
        """The payload that merges log records with base records (hoodie.compaction.payload.class), Hudi's
        default when the table does not name one. A version 8/9 table without a payload class merges by its
        hoodie.record.merge.mode (Hudi 1.x's mapping of the modes to the payloads of earlier versions)."""
        named = self.values.get(C.COMPACTION_PAYLOAD_CLASS.key)
        if named:
            return named
        mode = (self.values.get(C.RECORD_MERGE_MODE.key) or "").strip().upper()
        if mode in _MERGE_MODE_PAYLOADS:
            return _MERGE_MODE_PAYLOADS[mode]
        return C.PAYLOAD_CLASS.default

    @property
    def timeline_layout_version(self) -> str:
        return (self.values.get(C.TIMELINE_LAYOUT_VERSION.key) or "1").strip()

    @property
    def keygen_class(self) -> str | None:
        return self.values.get(C.TABLE_KEYGEN_CLASS.key) or None

    @property
    def hive_style(self) -> bool:
        return self.values.get(C.HIVE_STYLE.key, "false").lower() == "true"

    @property
    def url_encode(self) -> bool:
        return self.values.get(C.URL_ENCODE.key, "false").lower() == "true"

    @property
    def populate_meta_fields(self) -> bool:
        return self.values.get(C.POPULATE_META_FIELDS.key, "true").lower() == "true"

    @property
    def drop_partition_columns(self) -> bool:
        return self.values.get(C.DROP_PARTITION_COLUMNS.key, "false").lower() == "true"

    def write_options(self) -> dict[str, str]:
        """The table's identity expressed as datasource write options (what every writer must agree on)."""
        options = {
            C.TABLE_NAME.key: self.name,
            C.TABLE_TYPE.key: self.table_type,
            C.RECORD_KEY.key: ",".join(self.record_key_fields),
            C.PARTITION_PATH.key: ",".join(self.partition_fields),
            C.HIVE_STYLE.key: str(self.hive_style).lower(),
            C.URL_ENCODE.key: str(self.url_encode).lower(),
        }
        if self.precombine_field:
            options[C.PRECOMBINE.key] = self.precombine_field
        if self.keygen_class:
            options[C.KEYGEN_CLASS.key] = self.keygen_class
        options.update({k: v for k, v in self.values.items() if k.startswith("hoodie.keygen.")})
        # A BUCKET table's index settings (pyhudi.index.BUCKET_TABLE_KEYS): writers must hash keys alike.
        options.update({k: v for k, v in self.values.items()
                        if k in (C.INDEX_TYPE.key, C.BUCKET_ENGINE.key, C.BUCKET_NUM_BUCKETS.key,
                                 C.BUCKET_HASH_FIELD.key)})
        return options


def check_writable_version(values: Mapping[str, str], where: str, action: str = "write to") -> None:
    """Refuse to change a table of a version pyhudi reads but does not write, before anything is written."""
    version = values.get(C.TABLE_VERSION.key, "")
    if not version or version in WRITABLE_TABLE_VERSIONS + HUDI_1X_TABLE_VERSIONS:
        return
    raise UnsupportedTableVersionError(
        f"cannot {action} table {values.get(C.TABLE_NAME.key) or ''} ({where}): it has hoodie.table.version="
        f"{version}, which pyhudi reads but does not write (it writes versions "
        f"{', '.join(WRITABLE_TABLE_VERSIONS + HUDI_1X_TABLE_VERSIONS)}). Upgrade the table with Hudi's `upgrade` "
        "CLI command, or write it with the Hudi release that made it.")


_MERGE_MODE_PAYLOADS = {
    "EVENT_TIME_ORDERING": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "COMMIT_TIME_ORDERING": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
}


# hoodie.record.merge.strategy.id of Hudi 1.x's built-in mergers (HoodieRecordMerger), by merge mode
_MERGE_STRATEGY_IDS = {"EVENT_TIME_ORDERING": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
                       "COMMIT_TIME_ORDERING": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
                       "CUSTOM": "00000000-0000-0000-0000-000000000000"}   # payload-based
# the mode a payload stands for: the inverse of _MERGE_MODE_PAYLOADS, and EventTimeAvroPayload orders by event time
_PAYLOAD_MERGE_MODES = {**{payload: mode for mode, payload in _MERGE_MODE_PAYLOADS.items()},
                        "org.apache.hudi.common.model.EventTimeAvroPayload": "EVENT_TIME_ORDERING"}


def at_table_version(props: Mapping[str, str], version: str, payload_class: str) -> dict[str, str]:
    """A new table's hoodie.properties at `version` (hoodie.write.table.version). 8 and 9 (Hudi 1.x) keep their
    timeline in layout 2, record their initial version, and name how records merge by the mode and merge strategy
    the writer's payload stands for (a payload Hudi has no mode for: CUSTOM, merged by that payload); 9 names the
    ordering field hoodie.table.ordering.fields instead of hoodie.table.precombine.field."""
    out = dict(props)
    out[C.TABLE_VERSION.key] = version
    if version not in HUDI_1X_TABLE_VERSIONS:
        return out
    mode = _PAYLOAD_MERGE_MODES.get(payload_class, "CUSTOM")
    out.update({C.TIMELINE_LAYOUT_VERSION.key: "2", C.TIMELINE_PATH.key: C.TIMELINE_PATH.default,
                C.TIMELINE_HISTORY_PATH.key: C.TIMELINE_HISTORY_PATH.default, "hoodie.table.initial.version": version,
                C.RECORD_MERGE_MODE.key: mode, "hoodie.record.merge.strategy.id": _MERGE_STRATEGY_IDS[mode]})
    if mode == "CUSTOM":
        out[C.COMPACTION_PAYLOAD_CLASS.key] = payload_class
    ordering = out.get(C.TABLE_PRECOMBINE_FIELD.key)
    if version == "9" and ordering:
        del out[C.TABLE_PRECOMBINE_FIELD.key]
        out[C.TABLE_ORDERING_FIELDS.key] = ordering
    return out


def _split_fields(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def update_table_properties(storage: Storage, changes: Mapping[str, str], remove: Iterable[str] = ()) -> TableProperties:
    """Change hoodie.properties (set `changes`, drop the keys `remove`) by Hudi's fail-safe protocol
    (HoodieTableConfig.modify): recover an interrupted update, write the backup, write the new file, delete the
    backup. Hudi deletes the file before writing it
    anew (readers then read the backup); pyhudi replaces it in one step instead (Storage.replace), so readers that
    know no backup (hudi-rs) never find it missing. A crash at any step leaves the old or the new properties."""
    _recover_properties(storage)
    values = read_table_properties(storage).values
    storage.write_bytes(PROPERTIES_BACKUP, dump_properties(values))
    crash_point("properties.update.after_backup")
    updated = {k: v for k, v in {**values, **changes}.items() if k not in set(remove)}
    updated[C.TABLE_CHECKSUM.key] = str(table_checksum(updated.get(C.DATABASE_NAME.key), updated[C.TABLE_NAME.key]))
    storage.replace(PROPERTIES_FILE, dump_properties(updated))
    storage.delete_file(PROPERTIES_BACKUP)
    return TableProperties(updated)


def _recover_properties(storage: Storage) -> None:
    """HoodieTableConfig.recoverIfNeeded: an update that stopped after deleting hoodie.properties left the backup;
    it becomes the file again."""
    if not storage.exists(PROPERTIES_FILE) and storage.exists(PROPERTIES_BACKUP):
        storage.write_bytes(PROPERTIES_FILE, storage.read_bytes(PROPERTIES_BACKUP))
    storage.delete_file(PROPERTIES_BACKUP)


def read_table_properties(storage: Storage) -> TableProperties:
    """hoodie.properties, checked: decodable text, well-formed escapes, the keys every Hudi table has. While an
    update is under way (the file deleted, its backup written) the backup is read, as Hudi's fetchConfigs."""
    where = f"{storage.base_uri}/{PROPERTIES_FILE}"
    fix = "restore it from a backup (Hudi keeps .hoodie/hoodie.properties.backup while it updates the file)"
    try:
        data = storage.read_bytes(PROPERTIES_FILE)
    except FileNotFoundError:
        if not storage.exists(PROPERTIES_BACKUP):
            raise
        data = storage.read_bytes(PROPERTIES_BACKUP)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(
            f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); Hudi writes it as "
            f"ASCII with \\uXXXX escapes. Fix that value or {fix}.") from None
    try:
        values = load_properties(text)
    except ValueError as exc:
        raise CorruptFileError(f"{where} cannot be parsed as java.util.Properties ({exc}); fix the line or "
                               f"{fix}.") from None
    missing = [k for k in (C.TABLE_NAME.key, C.TABLE_VERSION.key) if not values.get(k)]
    if missing:
        raise CorruptFileError(f"{where} is incomplete or damaged: {', '.join(missing)} missing; {fix}.")
    table_type = values.get(C.TABLE_PROP_TYPE.key, COPY_ON_WRITE)
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise CorruptFileError(f"{where} has hoodie.table.type={table_type!r}, which is neither {COPY_ON_WRITE} nor "
                               f"{MERGE_ON_READ}; fix the value or {fix}.")
    return TableProperties(values)


