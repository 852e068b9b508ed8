"""The LSM archived timeline ("timeline history") of Hudi 1.x tables (table versions 8 and 9, timeline layout 2),
in Java Hudi's on-disk format, so Java Hudi and pyhudi read and archive into the same folder.

Java's layout (LSMTimeline, LSMTimelineWriter, HoodieLSMTimelineManifest, ArchivedTimelineLoaderV2): parquet files
`<minInstant>_<maxInstant>_<layer>.parquet` of HoodieLSMTimelineInstant records; a snapshot is a manifest
`manifest_<version>` (Jackson JSON: the snapshot's files and lengths) and `_version_` names the latest. A write adds
a layer-0 file, then a manifest, then the version file; a layer holding hoodie.timeline.compaction.batch.size files
has its oldest merged into one file of the next layer; then manifests beyond the newest 3 + (compactions made) and
the data files no kept manifest names are deleted. Readers read the latest snapshot only.

Unlike Java, data files and manifests appear whole or not at all and `_version_` is replaced atomically (Java
deletes and recreates it; its readers, like these, then fall back to the newest manifest). The parquet files come
from pyarrow: parquet-mr's schema and key-value footer, pyarrow's message name and created_by.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.errors import CorruptFileError, TimelineError
from pyhudi.storage import Storage
from pyhudi.testing import crash_point

VERSION_FILE = "_version_"             # LSMTimeline.VERSION_FILE_NAME
MANIFEST_PREFIX = "manifest_"          # LSMTimeline.MANIFEST_FILE_PREFIX
DEFAULT_BATCH_SIZE = 10                # hoodie.timeline.compaction.batch.size (HoodieArchivalConfig)
VERSIONS_TO_KEEP = 3                   # LSMTimelineWriter.clean: 3 + the number of compactions just made
# LSMTimelineWriter's cap on the total size of the files merged into one (MAX_FILE_SIZE_IN_BYTES in Hudi 1.0).
COMPACTION_MAX_BYTES = 1024 * 1024 * 1000
LSM_INSTANT_VERSION = 1                # LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1, the records' `version`
DEFAULT_COMPRESSION = "gzip"           # hoodie.parquet.compression.codec's default (HoodieStorageConfig)

# LSMTimeline.ARCHIVE_FILE_PATTERN, matched against the whole name: one digit of layer (Java's own limit).
_DATA_FILE = re.compile(r"(\d+)_(\d+)_(\d)\.parquet")
_MANIFEST_FILE = re.compile(r"manifest_(\d+)")
_JAVA_INT = re.compile(r"[+-]?\d+")           # what Integer.parseInt accepts (no blanks, no newline)

# Hand-written for Java bit compatibility: HoodieLSMTimelineInstant.getClassSchema().toString(), the schema of the
# class avro-maven-plugin generates from HoodieLSMTimelineInstant.avsc with <stringType>String</stringType> (hence
# "avro.java.string" on every string), in Avro's compact key order. parquet-avro stores it in the footer.
AVRO_SCHEMA_JSON = (
    '{"type":"record","name":"HoodieLSMTimelineInstant","namespace":"org.apache.hudi.avro.model","fields":['
    '{"name":"instantTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"completionTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"action","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"metadata","type":["null","bytes"],"default":null},'
    '{"name":"plan","type":["null","bytes"],"default":null},'
    '{"name":"version","type":"int","default":1}]}'
)
# parquet-avro's AvroSchemaConverter: a ["null", T] union is an optional column, a string a BINARY annotated STRING,
# bytes a plain BINARY, a non-null int a required INT32. (It also names the message after the record, pyarrow names
# it "schema": readers take the record from the footer's parquet.avro.schema, so the name is left as pyarrow's.)
ARROW_SCHEMA = pa.schema([
    pa.field("instantTime", pa.string()),
    pa.field("completionTime", pa.string()),
    pa.field("action", pa.string()),
    pa.field("metadata", pa.binary()),
    pa.field("plan", pa.binary()),
    pa.field("version", pa.int32(), nullable=False),
])
# parquet-mr's footer: writer.model.name (ParquetWriter.OBJECT_MODEL_NAME_PROP, the write support's name) and
# parquet.avro.schema (AvroWriteSupport); Hudi adds no bloom filter entries (populateMetaFields is off).
FOOTER_METADATA = {"writer.model.name": "avro", "parquet.avro.schema": AVRO_SCHEMA_JSON}
_LISTING_COLUMNS = ["instantTime", "completionTime", "action"]


@dataclass(frozen=True)
class ArchivedInstant:
    """One archived instant, as MetadataConversionUtils.createLSMTimelineInstant builds it from the instant's
    files: `action` is the completed instant's (a compaction archives as "commit", a clustering as
    "replacecommit"); `metadata` the completed file's bytes (None when empty); `plan` the requested file's bytes for
    a clean, compaction or log compaction, the inflight file's (else the requested one's, when not empty) for a
    replacecommit or clustering, None for the other actions."""

    time: str                     # requested instant time
    completion_time: str | None
    action: str
    metadata: bytes | None
    plan: bytes | None


@dataclass(frozen=True)
class _Entry:
    """HoodieLSMTimelineManifest.LSMFileEntry."""

    file_name: str
    file_len: int


# --- names --------------------------------------------------------------------------------------------------------
def data_file_name(min_instant: str, max_instant: str, layer: int) -> str:
    """LSMTimelineWriter.newFileName."""
    return f"{min_instant}_{max_instant}_{layer}.parquet"


def file_layer(name: str) -> int:
    """LSMTimeline.getFileLayer: the layer of a data file; 0 for a name that does not parse (as Java)."""
    match = _DATA_FILE.fullmatch(name)
    return int(match.group(3)) if match else 0


def _instant_range(name: str, where: str) -> tuple[str, str]:
    match = _DATA_FILE.fullmatch(name)
    if match is None:
        raise CorruptFileError(f"{where} names {name!r}, which is not an LSM timeline file name "
                               "(<minInstant>_<maxInstant>_<layer>.parquet); restore the manifest from a backup")
    return match.group(1), match.group(2)


# --- manifests and the version file -------------------------------------------------------------------------------
def manifest_json(entries: Sequence[_Entry]) -> str:
    """Hand-written for Java bit compatibility: HoodieLSMTimelineManifest.toJsonString, i.e. Jackson's
    writerWithDefaultPrettyPrinter on its fields (JsonUtils: fields only, in declaration order): two-space object
    indents, " : " between name and value, arrays inline with "[ " ... " ]" and "}, {" between entries, "\\n" line
    ends (Java's line separator on Linux) and no final newline."""
    if not entries:
        return '{\n  "files" : [ ]\n}'
    items = ", ".join('{\n    "fileName" : ' + json.dumps(entry.file_name, ensure_ascii=False)
                      + ',\n    "fileLen" : ' + str(int(entry.file_len)) + "\n  }" for entry in entries)
    return '{\n  "files" : [ ' + items + " ]\n}"


def _parse_manifest(content: bytes, path: str) -> list[_Entry]:
    """HoodieLSMTimelineManifest.fromJsonString: an empty file is an empty manifest; unknown properties ignored."""
    if not content:
        return []
    try:
        parsed = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptFileError(f"LSM timeline manifest {path} is not JSON ({exc}); it may be truncated: restore it "
                               "from a backup (Java Hudi cannot read this timeline history either)") from exc
    files: Any = parsed.get("files", []) if isinstance(parsed, dict) else None
    if not isinstance(files, list) or not all(
            isinstance(item, dict) and isinstance(item.get("fileName"), str)
            and isinstance(item.get("fileLen", 0), int) for item in files):
        raise CorruptFileError(f"LSM timeline manifest {path} is not Hudi's manifest JSON "
                               '({"files": [{"fileName": ..., "fileLen": ...}]}); restore it from a backup')
    return [_Entry(item["fileName"], int(item.get("fileLen", 0))) for item in files]


def _manifest_path(folder: str, version: int) -> str:
    return f"{folder}/{MANIFEST_PREFIX}{version}"


def _all_versions(storage: Storage, folder: str) -> list[int]:
    """LSMTimeline.allSnapshotVersions: the versions of the manifest files present (names manifest_<digits>; Java
    skips names ending in .tmp, and pyhudi's temporary files start with a dot)."""
    versions = []
    for info in storage.list_files(folder):
        match = _MANIFEST_FILE.fullmatch(info.base_name)
        if match:
            versions.append(int(match.group(1)))
    return versions


def latest_version(storage: Storage, folder: str) -> int:
    """LSMTimeline.latestSnapshotVersion: the number in `_version_`; when that file is missing or not a number,
    the newest manifest's version; -1 when there is none."""
    try:
        text = storage.read_bytes(f"{folder}/{VERSION_FILE}").decode("utf-8", errors="replace")
    except FileNotFoundError:
        text = None
    if text is not None and _JAVA_INT.fullmatch(text) and -2 ** 31 <= int(text) < 2 ** 31:
        return int(text)
    return max(_all_versions(storage, folder), default=-1)


def _read_manifest(storage: Storage, folder: str, version: int) -> list[_Entry]:
    """LSMTimeline.latestSnapshotManifest(version): the files of one snapshot (none before the first)."""
    if version < 0:
        return []
    path = _manifest_path(folder, version)
    try:
        content = storage.read_bytes(path)
    except FileNotFoundError as exc:
        present = sorted(_all_versions(storage, folder))
        raise CorruptFileError(
            f"LSM timeline manifest {path} is missing but {folder}/{VERSION_FILE} names version {version}: restore "
            f"it from a backup, or write the newest manifest's version into {VERSION_FILE} (manifests present: "
            f"{present or 'none'})", path=path) from exc
    return _parse_manifest(content, path)


def _create_manifest(storage: Storage, folder: str, remove: Sequence[str], add: str) -> int:
    """LSMTimelineWriter.updateManifest up to the manifest file: the latest snapshot's files less `remove`, plus
    `add` with its length, written as manifest_<latest + 1> (a leftover of that name, from a write that failed
    before its version file, is deleted first). Returns the new version."""
    current = latest_version(storage, folder)
    removed = set(remove)
    kept = [entry for entry in _read_manifest(storage, folder, current) if entry.file_name not in removed]
    kept.append(_Entry(add, storage.file_size(f"{folder}/{add}")))
    version = 1 if current < 0 else current + 1
    path = _manifest_path(folder, version)
    storage.delete_file(path)
    if not storage.create_if_absent(path, manifest_json(kept).encode("utf-8")):
        raise TimelineError(f"LSM timeline manifest {path} appeared while pyhudi was writing it: another writer is "
                            "archiving this table at the same time; archive from one writer at a time (hold the "
                            "table's lock) and retry")
    return version


def _write_version_file(storage: Storage, folder: str, version: int) -> None:
    """LSMTimelineWriter.updateVersionFile: the decimal version, no newline (replaced atomically here)."""
    storage.replace(f"{folder}/{VERSION_FILE}", str(version).encode("utf-8"))


# --- data files ---------------------------------------------------------------------------------------------------
def _encode(table: pa.Table, compression: str) -> bytes:
    """A data file as Hudi's HoodieAvroParquetWriter writes it (parquet-avro, hoodie.parquet.compression.codec)."""
    codec = compression.lower() or "uncompressed"    # Hudi: an empty codec name is UNCOMPRESSED
    sink = pa.BufferOutputStream()
    options: dict[str, Any] = {"compression": "none" if codec == "uncompressed" else codec}
    if codec == "gzip":
        options["compression_level"] = 6             # zlib's default, which Hadoop's gzip codec uses
    # No ARROW:schema footer entry: parquet-mr writes none.
    with pq.ParquetWriter(sink, ARROW_SCHEMA, store_schema=False, **options) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(FOOTER_METADATA)
    return sink.getvalue().to_pybytes()


def _to_table(instants: Sequence[ArchivedInstant]) -> pa.Table:
    return pa.Table.from_pydict({
        "instantTime": [i.time for i in instants],
        "completionTime": [i.completion_time for i in instants],
        "action": [i.action for i in instants],
        "metadata": [i.metadata for i in instants],
        "plan": [i.plan for i in instants],
        "version": [LSM_INSTANT_VERSION] * len(instants),
    }, schema=ARROW_SCHEMA)


def _read_table(storage: Storage, path: str, columns: list[str]) -> pa.Table:
    try:
        content = storage.read_bytes(path)
    except FileNotFoundError as exc:
        raise CorruptFileError(f"LSM timeline file {path} is missing but the latest manifest names it: restore it "
                               "from a backup (Java Hudi cannot read this timeline history either)",
                               path=path) from exc
    try:
        parquet = pq.ParquetFile(pa.BufferReader(content))
        missing = [name for name in columns if name not in parquet.schema_arrow.names]
        if missing:
            raise CorruptFileError(f"LSM timeline file {path} has no column {missing[0]!r}: it is not a "
                                   "HoodieLSMTimelineInstant file; restore it from a backup", path=path)
        return parquet.read(columns=columns).select(columns)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptFileError(f"LSM timeline file {path} is not a readable parquet file ({exc}); it may be "
                               "truncated: restore it from a backup (Java Hudi cannot read this timeline history "
                               "either)", path=path) from exc


def _texts(table: pa.Table, name: str) -> list[str | None]:
    column = table.column(name)
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        return [None if v is None else v.decode("utf-8", errors="replace") for v in column.to_pylist()]
    return [None if v is None else str(v) for v in column.to_pylist()]


# --- reading ------------------------------------------------------------------------------------------------------
def read_history(storage: Storage, history_folder: str, with_payloads: bool = True) -> list[ArchivedInstant]:
    """The archived instants of the latest snapshot, sorted by (time, action); one per instant time, as Java's
    ArchivedTimelineV2 keeps (the first in manifest order). `with_payloads=False` reads only the instantTime,
    completionTime and action columns (metadata and plan come back None). No snapshot yet: []."""
    folder = history_folder.rstrip("/")
    version = latest_version(storage, folder)
    columns = [f.name for f in ARROW_SCHEMA] if with_payloads else _LISTING_COLUMNS
    found: dict[str, ArchivedInstant] = {}
    for entry in _read_manifest(storage, folder, version):
        path = f"{folder}/{entry.file_name}"
        table = _read_table(storage, path, columns)
        times, completions, actions = (_texts(table, name) for name in _LISTING_COLUMNS)
        metadata = table.column("metadata").to_pylist() if with_payloads else [None] * table.num_rows
        plans = table.column("plan").to_pylist() if with_payloads else [None] * table.num_rows
        for time, completion, action, meta, plan in zip(times, completions, actions, metadata, plans):
            if time is None or action is None:
                raise CorruptFileError(f"LSM timeline file {path} holds a record without instantTime or action; "
                                       "Java Hudi cannot read it either: restore the file from a backup", path=path)
            if time not in found:
                found[time] = ArchivedInstant(time, completion, action, meta, plan)
    return sorted(found.values(), key=lambda i: (i.time, i.action))


# --- writing ------------------------------------------------------------------------------------------------------
def write_history(storage: Storage, history_folder: str, instants: list[ArchivedInstant],
                  batch_size: int = DEFAULT_BATCH_SIZE, *, compression: str = DEFAULT_COMPRESSION) -> str:
    """Archive `instants` as Java's LSMTimelineWriter.write then compactAndClean does: a layer-0 file named after
    the first and last instant time (the instants are sorted by time first, as TimelineArchiverV2 sorts them), then
    manifest_<v+1>, then `_version_`; then compaction of every layer that holds `batch_size` files; then cleaning.
    A layer-0 file of that name that the latest manifest already names (an archiving that stopped after committing)
    is kept and not written again; one it does not name (a write that stopped before) is replaced. `compression` is
    the table's hoodie.parquet.compression.codec. A `batch_size` below 2 never compacts (as in Java). Returns the
    layer-0 file's name."""
    if not instants:
        raise ValueError("write_history needs at least one instant (Java: the instant actions to write should not "
                         "be empty)")
    for instant in instants:
        if not instant.time.isdigit() or not instant.action:
            raise ValueError(f"archived instant {instant.time!r} ({instant.action!r}) needs a numeric instant time "
                             "and an action: Java's LSM timeline names its files after instant times")
        if instant.completion_time is None:
            raise ValueError(f"archived instant {instant.time} ({instant.action}) has no completion time; Java's "
                             "ArchivedTimelineV2 cannot read such a record: pass the completed instant file's "
                             "modification time as an instant time, as Hudi's InstantGeneratorV2 does for a legacy "
                             "instant")
    ordered = sorted(instants, key=lambda i: i.time)
    folder = history_folder.rstrip("/")
    name = data_file_name(ordered[0].time, ordered[-1].time, 0)
    path = f"{folder}/{name}"
    if storage.exists(path):
        committed = name in {e.file_name for e in _read_manifest(storage, folder, latest_version(storage, folder))}
        if not committed:
            storage.delete_file(path)       # left by a write that stopped before its manifest
    else:
        committed = False
    if not committed:
        _publish_data_file(storage, path, _encode(_to_table(ordered), compression))
        crash_point("lsm_history.write.after_data_file")
        version = _create_manifest(storage, folder, (), name)
        crash_point("lsm_history.write.after_manifest")
        _write_version_file(storage, folder, version)
        crash_point("lsm_history.write.after_version")
    _compact_and_clean(storage, folder, batch_size, compression)
    return name


def _publish_data_file(storage: Storage, path: str, content: bytes) -> None:
    if not storage.create_if_absent(path, content):
        raise TimelineError(f"LSM timeline file {path} appeared while pyhudi was writing it: another writer is "
                            "archiving this table at the same time; archive from one writer at a time (hold the "
                            "table's lock) and retry")


def _compact_and_clean(storage: Storage, folder: str, batch_size: int, compression: str) -> None:
    """LSMTimelineWriter.compactAndClean: compact layer 0, and each next layer while the one below was compacted
    (the snapshot read once, each new file added to it); then clean, keeping 3 + (compactions made) versions."""
    snapshot = _read_manifest(storage, folder, latest_version(storage, folder))
    layer = 0
    compacted = _compact_layer(storage, folder, snapshot, layer, batch_size, compression)
    while compacted is not None:
        snapshot.append(_Entry(compacted, storage.file_size(f"{folder}/{compacted}")))
        layer += 1
        compacted = _compact_layer(storage, folder, snapshot, layer, batch_size, compression)
    _clean(storage, folder, layer)


def _candidates(files: list[_Entry], batch_size: int) -> list[str]:
    """LSMTimelineWriter.getCandidateFiles: the oldest consecutive files, at most `batch_size`, stopping once their
    total length passes COMPACTION_MAX_BYTES (a lone file past it is skipped)."""
    names: list[str] = []
    total = 0
    for entry in files:
        total += entry.file_len
        names.append(entry.file_name)
        if len(names) >= batch_size:
            break
        if total > COMPACTION_MAX_BYTES:
            if len(names) < 2:
                total = 0
                names.clear()
            else:
                break
    return names


def _compact_layer(storage: Storage, folder: str, snapshot: list[_Entry], layer: int, batch_size: int,
                   compression: str) -> str | None:
    """LSMTimelineWriter.doCompact: when `layer` holds `batch_size` files or more, merge the oldest (by file name)
    into one file of the next layer, named after their smallest min and largest max instant, then publish a
    snapshot that has it instead of them. Returns its name, or None when nothing was compacted."""
    files = sorted((e for e in snapshot if file_layer(e.file_name) == layer), key=lambda e: e.file_name)
    if len(files) < batch_size:
        return None
    candidates = _candidates(files, batch_size)
    if len(candidates) < 2:
        return None
    ranges = [_instant_range(name, f"LSM timeline manifest of {folder}") for name in candidates]
    name = data_file_name(min(r[0] for r in ranges), max(r[1] for r in ranges), file_layer(candidates[0]) + 1)
    path = f"{folder}/{name}"
    # compactFiles: the source files' records, file after file, copied as they are (every column, `version` too).
    tables = [_read_table(storage, f"{folder}/{source}", [f.name for f in ARROW_SCHEMA]) for source in candidates]
    merged = pa.concat_tables([table.cast(ARROW_SCHEMA) for table in tables])
    storage.delete_file(path)               # left by a compaction that stopped before its manifest
    _publish_data_file(storage, path, _encode(merged, compression))
    crash_point("lsm_history.compaction.after_data_file")
    version = _create_manifest(storage, folder, candidates, name)
    crash_point("lsm_history.compaction.after_manifest")
    _write_version_file(storage, folder, version)
    crash_point("lsm_history.compaction.after_version")
    return name


def _clean(storage: Storage, folder: str, compactions: int) -> None:
    """LSMTimelineWriter.clean: with more than 3 + `compactions` manifests, keep the newest that many; delete the
    other manifests first, then every *.parquet file of the folder that no kept manifest names."""
    versions = _all_versions(storage, folder)
    keep_count = VERSIONS_TO_KEEP + compactions
    if len(versions) <= keep_count:
        return
    keep = sorted(versions, reverse=True)[:keep_count]
    files_to_keep = {entry.file_name for version in keep for entry in _read_manifest(storage, folder, version)}
    for version in versions:
        if version not in keep:
            storage.delete_file(_manifest_path(folder, version))
    crash_point("lsm_history.clean.after_manifests")
    for info in storage.list_files(folder):
        if info.base_name.endswith(".parquet") and info.base_name not in files_to_keep:
            storage.delete_file(f"{folder}/{info.base_name}")
