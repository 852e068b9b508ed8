"""Tables on an object store (issue 38): the engine on an S3-compatible server (moto's server mode, started here)
and on Azure Blob Storage's emulator (Azurite, from the npm registry; .ci/run installs it), the atomic publication
that conditional writes give there, and the errors for URIs nothing serves.

The engine runs in a process of its own (object_store_client.py) because the endpoint and credentials come from
the environment, which Spark's Python workers take from the process that starts Spark. Spark's own parquet scan
cannot read s3a:// here (the hadoop-aws jar is not on PyPI's pyspark), so these runs also prove the fallback that
scans base files in Python tasks (storage/scan.py); a cluster with the connector uses Spark's scan instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from support import hudi_rs_read, rows

HERE = Path(__file__).parent
AZURITE = HERE.parents[1] / ".venv" / "azurite" / "node_modules" / ".bin" / "azurite-blob"
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}

pytest.importorskip("moto.server", reason="the object-store tests need moto[server] (the test extra)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_server(mode: str):
    port = _free_port()
    return _serving([sys.executable, str(HERE / "s3_server.py"), str(port), mode], port, "the S3 server (moto)")


def _serving(command: list[str], port: int, what: str):
    """The server process `command` starts, once it accepts connections on `port`, and its URL."""
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"http://127.0.0.1:{port}"
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, f"{what} did not start"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def s3_endpoint(request):
    """An S3 server for the module (s3_server.py), atomic unless a test parametrizes the mode indirectly."""
    server, endpoint = _start_server(getattr(request, "param", "atomic"))
    yield endpoint
    server.terminate()
    server.wait(30)


@pytest.fixture
def s3_env(s3_endpoint, monkeypatch):
    """This process's environment pointed at the server; a new bucket for the test."""
    import boto3

    # AWS_ALLOW_HTTP: hudi-rs (the object_store crate) refuses a plain-HTTP endpoint without it
    for key, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": s3_endpoint, "AWS_ALLOW_HTTP": "true"}.items():
        monkeypatch.setenv(key, value)
    bucket = f"tables-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    return bucket


@pytest.fixture(scope="module")
def azurite_endpoint(tmp_path_factory):
    """Azurite's blob service for the module (Microsoft's Azure Storage emulator, from the npm registry)."""
    binary = str(AZURITE) if AZURITE.exists() else shutil.which("azurite-blob")
    if binary is None:
        pytest.skip("the Azure tests need Azurite: npm install --prefix .venv/azurite azurite@3 (.ci/run does)")
    port = _free_port()
    server, endpoint = _serving(
        [binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
         str(tmp_path_factory.mktemp("azurite")), "--skipApiVersionCheck", "--disableTelemetry", "--silent"],
        port, "Azurite")
    yield endpoint
    server.terminate()
    server.wait(30)


@pytest.fixture
def azure_env(azurite_endpoint, monkeypatch):
    """This process's environment pointed at Azurite (as obstore, pyarrow and hudi-rs read it); a new container
    for the test. Returns the container's abfs:// root."""
    from pyhudi.storage.object_store import filesystem

    monkeypatch.setenv("AZURE_STORAGE_USE_EMULATOR", "true")
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", azurite_endpoint)
    container = f"tables-{uuid.uuid4().hex[:12]}"
    root = f"abfs://{container}@devstoreaccount1.dfs.core.windows.net"
    fs, _ = filesystem(f"{root}/")
    fs.create_dir(container)
    return root


@pytest.fixture(params=["s3", "azure"])
def store_root(request):
    """The root URI of a new bucket (container) on each object store the tests serve."""
    if request.param == "s3":
        return f"s3://{request.getfixturevalue('s3_env')}"
    return request.getfixturevalue("azure_env")


def _run_client(path: str, table_type: str, version: str, settings: str) -> dict:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    result = subprocess.run([sys.executable, str(HERE / "object_store_client.py"), path, table_type, version,
                             settings],
                            capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _same_as_on_disk(spark, tmp_path, uri: str, hudi_rs_uri: str, table_type: str, version: str, settings: str):
    """The engine scenario at `uri` (in a client process) gives the results it gives on a local path, and hudi-rs
    reads the table (at `hudi_rs_uri`, its name for the same place) with the same rows."""
    from engine_scenario import scenario

    on_store = _run_client(uri, table_type, version, settings)
    on_disk = json.loads(json.dumps(scenario(spark, str(tmp_path / "trips"), table_type, version)))
    on_store.pop("instants"), on_disk.pop("instants")
    assert on_store == on_disk
    assert rows(hudi_rs_read(hudi_rs_uri), ["id", "name", "ts", "part"], key="id") == \
        sorted(tuple(r) for r in on_store["after rollback"])


_LONG_ONLY = [] if LONG else [pytest.mark.skip(reason="PYHUDI_LONG_TESTS=1 (CI: merge-on-read, version 8)")]


# settings: where the client takes the endpoint and credentials from (the AWS environment, Spark's S3A settings, or
# S3A's per-bucket settings of the table's bucket beside shared ones that lead nowhere)
@pytest.mark.parametrize("table_type,version,settings", [
    ("MERGE_ON_READ", "8", "s3a-bucket"), pytest.param("COPY_ON_WRITE", "9", "spark-conf", marks=_LONG_ONLY),
    pytest.param("COPY_ON_WRITE", "8", "env", marks=_LONG_ONLY),
    pytest.param("MERGE_ON_READ", "6", "env", marks=_LONG_ONLY)])
def test_engine_on_s3_gives_the_rows_it_gives_on_a_local_disk(spark, s3_env, tmp_path, table_type, version,
                                                               settings):
    """Writes, a delete, snapshot, the data source, time travel, incremental, compaction, clustering, clean and
    a rollback on s3a://: the same results as the same scenario on a local path; hudi-rs reads the S3 table."""
    _same_as_on_disk(spark, tmp_path, f"s3a://{s3_env}/trips", f"s3://{s3_env}/trips", table_type, version,
                     settings)


S3A_JARS = HERE.parents[1] / ".venv" / "s3a-jars"


@pytest.mark.parametrize("table_type,version", [
    ("COPY_ON_WRITE", "8"), pytest.param("MERGE_ON_READ", "6", marks=_LONG_ONLY)])
def test_sparks_own_s3a_scan_gives_the_rows_pyhudi_gives_on_a_local_disk(spark, s3_env, tmp_path, monkeypatch,
                                                                        table_type, version):
    """With Hadoop's S3A connector on Spark's classpath, as on a cluster, Spark's own parquet scan reads the base
    files at s3a:// (not pyhudi's scan in tasks): the engine scenario gives the same rows as on a local disk, and
    hudi-rs reads the table. The connector is hadoop-aws 3.3.1 from PyPI's sagemaker-pyspark (.ci/run fetches it),
    beside pyspark's newer Hadoop client."""
    if not (S3A_JARS / "hadoop-aws-3.3.1.jar").exists():
        pytest.skip(f"the S3A connector jars are not in {S3A_JARS} (.ci/run fetches them from PyPI)")
    monkeypatch.setenv("PYHUDI_S3A_JARS", str(S3A_JARS))
    _same_as_on_disk(spark, tmp_path, f"s3a://{s3_env}/trips", f"s3://{s3_env}/trips", table_type, version,
                     "s3a-connector")


@pytest.mark.parametrize("table_type,version", [
    ("MERGE_ON_READ", "9"), pytest.param("COPY_ON_WRITE", "6", marks=_LONG_ONLY)])
def test_engine_on_azure_gives_the_rows_it_gives_on_a_local_disk(spark, azure_env, tmp_path, table_type, version):
    """The same scenario on abfs:// (Azurite): the same results as on a local path; hudi-rs reads the table."""
    _same_as_on_disk(spark, tmp_path, f"{azure_env}/trips", f"{azure_env}/trips", table_type, version, "env")


def test_two_writers_never_both_publish_one_instant(store_root):
    """Writers racing to publish the same timeline file: exactly one wins each time, and the file holds the
    winner's content (a check-then-write, as before conditional writes, lets several win)."""
    from pyhudi.storage import Storage

    storage = Storage(f"{store_root}/race")
    for round_ in range(10):
        name = f".hoodie/timeline/2026112912{round_:05d}_2026112912{round_:05d}.commit"
        won = _at_once([lambda w=w, name=name: storage.create_if_absent(name, f"writer {w}".encode())
                        for w in range(6)])
        assert len(won) == 1, f"round {round_}: {len(won)} writers published {name}"
        assert storage.read_text(name) == f"writer {won[0]}"


def test_two_writers_never_both_create_one_log_file(store_root):
    """Log files are created whole on object stores: of writers creating one name at once (v6 names can repeat
    across writers: same base instant, version and write token), one succeeds and the others get
    LogFileExistsError; the file holds the winner's blocks (a check-then-write let the last one overwrite it)."""
    from pyhudi.file_group.log_file import LogFileExistsError, read_log_file, rollback_command_block, write_log_file
    from pyhudi.storage import Storage

    storage = Storage(f"{store_root}/logs")

    def create(writer: int, relative: str) -> bool:
        try:
            block = rollback_command_block(f"2026112900000{writer}000", "20261129000000000")
            write_log_file(storage.fs, storage.full(relative), [block])
            return True
        except LogFileExistsError:
            return False

    for round_ in range(5):
        relative = f"p1/.f{round_}-0000_20261129000000000.log.1_0-1-0"
        won = _at_once([lambda w=w, relative=relative: create(w, relative) for w in range(4)])
        assert len(won) == 1, (round_, won)
        (block,) = read_log_file(storage.fs, storage.full(relative), decode=False)
        assert block.instant_time == f"2026112900000{won[0]}000"


def _at_once(calls) -> list[int]:
    """The indexes of the `calls` that returned true, each called by its own thread at the same moment."""
    barrier, succeeded = threading.Barrier(len(calls)), []

    def run(index: int) -> None:
        barrier.wait()
        if calls[index]():
            succeeded.append(index)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return succeeded


def _take_at_once(locks) -> list:
    """The locks whose try_lock succeeded, each tried by its own thread at the same moment."""
    return [locks[i] for i in _at_once([lock.try_lock for lock in locks])]


def test_table_lock_is_held_by_one_writer_on_an_object_store(store_root):
    """OCC's table lock on an object store: of writers trying at once, one holds it until it releases."""
    from pyhudi.storage import Storage
    from pyhudi.transaction.lock import FileSystemLock

    storage = Storage(f"{store_root}/occ")
    locks = [FileSystemLock(storage) for _ in range(4)]
    held = _take_at_once(locks)
    assert len(held) == 1
    held[0].release()
    assert next(lock for lock in locks if lock is not held[0]).try_lock()


def test_expired_lock_is_taken_over_by_one_writer_on_an_object_store(store_root):
    """The lock of a writer that died, once expired: of writers taking it over at once, exactly one holds it
    (the takeover is conditional on the ETag seen expired), and it keeps it while it refreshes."""
    from pyhudi.storage import Storage
    from pyhudi.transaction.lock import FileSystemLock

    storage = Storage(f"{store_root}/occ-expired")
    assert FileSystemLock(storage).try_lock()        # its writer dies holding it: no refresh, no release
    locks = [FileSystemLock(storage) for _ in range(4)]
    for lock in locks:
        lock.expire_ms = 3000                        # Last-Modified has whole seconds
    time.sleep(4.5)
    held = _take_at_once(locks)
    try:
        assert len(held) == 1
        assert not any(lock.try_lock() for lock in locks if lock is not held[0])
        held[0].check_held()
    finally:
        for lock in held:
            lock.release()


def test_release_never_removes_the_lock_of_the_writer_that_took_it_over(store_root, monkeypatch):
    """A writer releasing a lock that expired while it stalled, at the moment another writer takes it over: the
    release never deletes the new owner's lock file (a check-then-delete did, between its check and its delete)."""
    from pyhudi.storage import Storage
    from pyhudi.transaction.lock import FileSystemLock

    storage = Storage(f"{store_root}/occ-release")
    stalled, rival = FileSystemLock(storage), FileSystemLock(storage)
    stalled.expire_ms = rival.expire_ms = 3000   # Last-Modified has whole seconds
    assert stalled.try_lock()
    stalled._stop.set()                          # it stalls: no more refreshes
    stalled._refresher.join()
    time.sleep(4.5)
    delete = Storage.delete_file

    def rival_strikes_first(self, relative):     # the rival's takeover, just before the release's delete
        rival.try_lock()
        return delete(self, relative)

    monkeypatch.setattr(Storage, "delete_file", rival_strikes_first)
    stalled.release()
    monkeypatch.setattr(Storage, "delete_file", delete)
    if rival.held:                               # it took the lock over: the file is still its own
        rival.check_held()
        rival.release()
    else:                                        # the release's refresh came first: freed for everyone
        assert FileSystemLock(storage).try_lock()


# Publication's crash points (test_crash_recovery.py's chain, on S3): the steps of a write around its completed
# instant, a compaction's commit and a rollback that has deleted the rolled-back instant.
S3_CRASHES = ["write.after_requested", "write.before_complete", "write.after_complete", "compaction.before_commit",
              "rollback.after_instant_deleted"]


@pytest.mark.skipif(not LONG, reason="PYHUDI_LONG_TESTS=1 (a writer process per crash point)")
def test_crash_points_of_publication_recover_on_s3(s3_env):
    """A writer killed at each point of publication on S3: the last completed snapshot reads intact in hudi-rs,
    the next writer rolls the leftovers back, and at the end no row is lost and no data file of an undone instant
    is left in the bucket."""
    import boto3

    from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
    from pyhudi.table import HudiTable
    from test_crash_recovery import STEPS, Model, _run_worker

    path = f"s3a://{s3_env}/crash"
    options = {"hoodie.table.name": "crash", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    base = {str(i): "v0" for i in range(10)}
    model = Model(base)
    env = {"PYSPARK_PYTHON": sys.executable}

    def check(where: str) -> None:
        if HudiTable.load(path).timeline().pending(["compaction"]):
            return   # hudi-rs 0.5 skips the log files of slices under a pending compaction: checked at the end
        read = hudi_rs_read(f"s3://{s3_env}/crash")
        assert rows(read, ["id", "name"]) == sorted(model.state().items(), key=repr), where

    assert _run_worker(path, options, [["write", base]], "none", env=env).returncode == 0
    for crash in S3_CRASHES:
        actions = STEPS[crash]
        result = _run_worker(path, options, actions, crash, env=env)
        assert result.returncode == 137, (crash, result.returncode, result.stderr[-3000:])
        for index, action in enumerate(actions):
            model.apply(action, crash if index == len(actions) - 1 else None)
        check(f"after a crash at {crash}")
    result = _run_worker(path, options, [["write", {"99": "final"}], ["compact"]], "none", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    model.writes.append({"99": "final"})
    check("after recovery")
    timeline = HudiTable.load(path).timeline()
    assert not timeline.pending(["commit", "deltacommit", "rollback", "compaction"]), timeline.pending()
    completed = {i.time for i in timeline.completed_writes()}
    logged = {s["path"] for i in timeline.completed_writes()
              for stats in (timeline.read_metadata(i).get("partitionToWriteStats") or {}).values() for s in stats}
    keys = [o["Key"].split("/", 1)[1] for page in boto3.client("s3").get_paginator("list_objects_v2").paginate(
        Bucket=s3_env, Prefix="crash/") for o in page.get("Contents", []) if "/.hoodie/" not in o["Key"]]
    undone = [k for k in keys if (parse_base_file_name(k.rsplit("/", 1)[-1]) or ("", "", ""))[2]
              not in completed | {""} or (parse_log_file_name(k.rsplit("/", 1)[-1]) and k not in logged)]
    assert undone == []


def test_uri_nothing_serves_is_refused_naming_it(spark):
    """A URI scheme no filesystem serves: a PyHudiError naming the URI and what pyhudi reads."""
    import pyhudi
    from pyhudi.errors import PyHudiError

    df = spark.createDataFrame([(1, "a")], "id long, name string")
    with pytest.raises(PyHudiError, match=r"no filesystem serves the table URI 'nosuch://bucket/t'.*s3://"):
        pyhudi.write(df, "nosuch://bucket/t", {"hoodie.table.name": "t",
                                               "hoodie.datasource.write.recordkey.field": "id"})


def test_missing_bucket_is_refused_and_nothing_is_written(store_root):
    """Publishing into a bucket (container) that does not exist: an error naming the URI, not a silent success."""
    from pyhudi.errors import PyHudiError
    from pyhudi.storage import Storage

    missing = store_root.replace("tables-", "missing-", 1)
    storage = Storage(f"{missing}/t")
    with pytest.raises(PyHudiError, match=re.escape(f"{missing}/t/.hoodie/x")):
        storage.create_if_absent(".hoodie/x", b"1")


@pytest.mark.parametrize("s3_endpoint", ["ignore", "refuse"], indirect=True)
def test_store_without_conditional_writes_is_refused_and_nothing_is_written(s3_env):
    """A store that ignores If-None-Match (it overwrites) or refuses it: creating a table there raises an error
    naming the URI and the fix, and the bucket stays empty; no timeline file is published either."""
    import boto3

    from pyhudi.errors import PyHudiError
    from pyhudi.storage import Storage
    from pyhudi.table import HudiTable

    props = {"hoodie.table.name": "t", "hoodie.table.recordkey.fields": "id"}
    with pytest.raises(PyHudiError, match=rf"s3://{s3_env}/t/\.hoodie/hoodie\.properties.*Amazon S3"):
        HudiTable.create(f"s3://{s3_env}/t", props)
    with pytest.raises(PyHudiError, match=rf"s3://{s3_env}/u/\.hoodie/x"):
        Storage(f"s3://{s3_env}/u").create_if_absent(".hoodie/x", b"1")
    assert boto3.client("s3").list_objects_v2(Bucket=s3_env).get("KeyCount") == 0


def test_scan_in_python_tasks_gives_spark_scans_rows(spark, tmp_path):
    """Where Spark has no filesystem for a table's URI, base files are scanned in Python tasks: the same rows and
    `_metadata.file_name` as Spark's parquet scan, a column one file lacks read as null."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from pyhudi.storage.scan import _scan_in_tasks, scan_parquet

    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}), tmp_path / "f1_0.parquet")
    pq.write_table(pa.table({"id": pa.array([3], pa.int64())}), tmp_path / "f2 [x]_0.parquet")
    uris = [f"file://{tmp_path}/f1_0.parquet", f"file://{tmp_path}/f2 [x]_0.parquet"]
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("name", T.StringType())])

    def collected(df):
        return sorted(df.select("id", "name", F.col("_metadata.file_name").alias("file")).collect(), key=repr)

    assert collected(_scan_in_tasks(spark, schema, uris)) == collected(scan_parquet(spark, schema, uris))
    assert len(collected(_scan_in_tasks(spark, schema, uris))) == 3


def test_a_public_bucket_is_read_without_credentials(s3_env, monkeypatch):
    """S3A's AnonymousAWSCredentialsProvider reaches pyhudi's own I/O as AWS_SKIP_SIGNATURE: a table's files in a
    public bucket are listed and read with unsigned requests on both clients pyhudi uses (pyarrow lists and reads,
    obstore reads what the commit protocol reads back), with no credentials in the environment."""
    import boto3

    from pyhudi.storage.object_store import environment_from_spark_conf
    from pyhudi.storage import Storage, object_store

    storage = Storage(f"s3://{s3_env}/t")
    properties = b"hoodie.table.name=t\n"
    assert storage.create_if_absent(".hoodie/hoodie.properties", properties)
    storage.write_bytes("p/f1.parquet", b"PAR1")
    s3 = boto3.client("s3")
    s3.put_bucket_acl(Bucket=s3_env, ACL="public-read")
    for key in ("t/.hoodie/hoodie.properties", "t/p/f1.parquet"):
        s3.put_object_acl(Bucket=s3_env, Key=key, ACL="public-read")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key)
    conf = {"spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}
    for key, value in environment_from_spark_conf(conf).items():
        monkeypatch.setenv(key, value)
    object_store._root.cache_clear()
    object_store._bucket_store.cache_clear()
    try:
        public = Storage(f"s3a://{s3_env}/t")
        assert public.read_bytes(".hoodie/hoodie.properties") == properties
        assert [info.base_name for info in public.list_files("p")] == ["f1.parquet"]
        read = object_store.read_versioned(public.uri(".hoodie/hoodie.properties"))
        assert read is not None and read[0] == properties
    finally:
        object_store._root.cache_clear()
        object_store._bucket_store.cache_clear()
