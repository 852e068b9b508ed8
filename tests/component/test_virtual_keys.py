"""Virtual keys (hoodie.populate.meta.fields=false) as Hudi 0.14/0.15 writes them: base files whose meta columns
are null except _hoodie_file_name (as in the Java-written fixture cow_v6_simplekeygen_hivestyle_no_metafields),
no bloom filter or key range in the footer, and upserts/deletes that find stored records by keys computed from
the data. Checked against a plain-Spark reference and against hudi-rs."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.errors import ConfigError, PyHudiError
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs, fixture_table, hudi_rs_read, rows

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
DATA = ["id", "v", "ts", "p"]
SCHEMA = "id int, v string, ts int, p string"


def _options(**extra) -> dict:
    return {"hoodie.table.name": "vk", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.populate.meta.fields": "false", **extra}


def _reference_upsert(ref, batch, keys):
    """Plain Spark: the batch's rows replace the reference rows of the same key (the batch is deduplicated by
    the greatest ts first, as Hudi's precombine)."""
    from pyspark.sql.window import Window
    latest = (batch.withColumn("_r", F.row_number().over(Window.partitionBy(*keys).orderBy(F.col("ts").desc())))
              .filter("_r = 1").drop("_r"))
    return ref.join(latest.select(*keys), on=keys, how="left_anti").unionByName(latest)


def _base_files(path) -> list:
    return sorted(p for p in path.rglob("*.parquet") if ".hoodie" not in p.parts)


def _assert_virtual_files(path) -> None:
    """Every base file: meta columns null except _hoodie_file_name (its own name); no bloom filter or key range
    in the footer (as the Java-written fixture's files)."""
    files = _base_files(path)
    assert files
    for file in files:
        parquet = pq.ParquetFile(file)
        table = parquet.read()
        assert table.column_names[:5] == META
        for name in META[:4]:
            assert table[name].null_count == table.num_rows, (file.name, name)
        assert set(table["_hoodie_file_name"].to_pylist()) == ({file.name} if table.num_rows else set())
        footer = {k.decode() for k in (parquet.metadata.metadata or {})}
        assert not any(k.startswith("hoodie_") or k.startswith("org.apache.hudi.bloomfilter") for k in footer), footer


@pytest.mark.parametrize("index,keys", [("SIMPLE", ["id"]), ("GLOBAL_SIMPLE", ["id"]), ("SIMPLE", ["id", "v"])])
def test_datasource_upsert_delete_match_spark_and_hudi_rs(spark, tmp_path, index, keys):
    path = tmp_path / "t"
    opts = _options(**{"hoodie.index.type": index, "hoodie.datasource.write.recordkey.field": ",".join(keys)})
    first = spark.createDataFrame([(1, "a", 1, "x"), (2, "b", 1, "y"), (3, "c", 1, "x"), (4, "d", 1, "y")], SCHEMA)
    # the first write: bulk_insert (the sorted-file writer) for the global index, insert otherwise
    operation = "bulk_insert" if index == "GLOBAL_SIMPLE" else "insert"
    pyhudi.write(first, str(path), {**opts, "hoodie.datasource.write.operation": operation}, mode="overwrite")
    ref = first
    props = HudiTable.load(str(path)).properties
    assert props.get("hoodie.populate.meta.fields") == "false"
    # updates (one with two versions in the batch), an insert
    second = spark.createDataFrame([(1, "a", 5, "x"), (1, "a", 3, "x"), (3, "c", 2, "x"), (5, "e", 1, "y")],
                                   SCHEMA) if keys != ["id"] else \
        spark.createDataFrame([(1, "A", 5, "x"), (1, "B", 3, "x"), (3, "C", 2, "x"), (5, "e", 1, "y")], SCHEMA)
    pyhudi.write(second, str(path), {**opts, "hoodie.datasource.write.operation": "upsert"})
    ref = _reference_upsert(ref, second, keys)
    assert rows(pyhudi.read(spark, str(path)), DATA) == rows(ref, DATA)
    gone = spark.createDataFrame([(2, "b", 9, "y")], SCHEMA)
    pyhudi.write(gone, str(path), {**opts, "hoodie.datasource.write.operation": "delete"})
    ref = ref.join(gone.select(*keys), on=keys, how="left_anti")
    assert rows(pyhudi.read(spark, str(path)), DATA) == rows(ref, DATA)
    assert rows(hudi_rs_read(path), DATA) == rows(ref, DATA)
    assert_same_rows_as_hudi_rs(spark, path, 4)   # also at every instant (time travel)
    _assert_virtual_files(path)


def test_sql_create_insert_update_delete_merge(spark, tmp_path):
    name = "vk_sql"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    location = tmp_path / "sql"
    try:
        pyhudi.sql(spark, f"""CREATE TABLE {name} (id INT, v STRING, ts INT, p STRING) USING hudi
            TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'ts',
                           'hoodie.populate.meta.fields' = 'false')
            PARTITIONED BY (p) LOCATION '{location}'""")
        assert HudiTable.load(str(location)).properties.get("hoodie.populate.meta.fields") == "false"
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y'), (3, 'c', 1, 'x')")
        pyhudi.sql(spark, f"UPDATE {name} SET v = 'A', ts = 2 WHERE id = 1")
        pyhudi.sql(spark, f"DELETE FROM {name} WHERE id = 2")
        pyhudi.sql(spark, f"""MERGE INTO {name} t USING (SELECT 3 AS id, 'C' AS v, 5 AS ts, 'x' AS p
                                UNION ALL SELECT 4, 'd', 1, 'y') s ON t.id = s.id
                              WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        expected = [(1, "A", 2, "x"), (3, "C", 5, "x"), (4, "d", 1, "y")]
        assert rows(pyhudi.sql(spark, f"SELECT * FROM {name}"), DATA) == expected
        assert rows(spark.sql(f"SELECT * FROM {name}"), DATA) == expected
        assert rows(hudi_rs_read(location), DATA) == expected
        _assert_virtual_files(location)
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


def test_reads_meta_columns_as_stored_and_refuses_incremental(spark, tmp_path):
    """Hudi reads a virtual-key table's meta columns as stored (null, except the file name) and refuses
    incremental queries ("not supported when meta fields are disabled"); time travel works."""
    path = tmp_path / "t"
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x")], SCHEMA), str(path), _options(), mode="overwrite")
    first = HudiTable.load(str(path)).timeline().completed_writes()[-1].time
    pyhudi.write(spark.createDataFrame([(2, "b", 1, "x")], SCHEMA), str(path), _options())
    got = pyhudi.read(spark, str(path)).toArrow()
    assert got["_hoodie_record_key"].null_count == got.num_rows == 2
    assert got["_hoodie_commit_time"].null_count == 2
    assert got["_hoodie_file_name"].null_count == 0
    assert [r.id for r in pyhudi.read(spark, str(path), {"as.of.instant": first}).collect()] == [1]
    with pytest.raises(ConfigError, match="hoodie.populate.meta.fields=false"):
        pyhudi.read(spark, str(path), {"hoodie.datasource.query.type": "incremental",
                                       "hoodie.datasource.read.begin.instanttime": "000"}).collect()


@pytest.mark.parametrize("extra,match", [
    ({"hoodie.datasource.write.table.type": "MERGE_ON_READ"}, "COPY_ON_WRITE"),
    ({"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
      "hoodie.datasource.write.partitionpath.field": "p:simple"}, "SimpleKeyGenerator, ComplexKeyGenerator"),
    ({"hoodie.index.type": "BLOOM"}, "hoodie.index.type=BLOOM"),
    ({"hoodie.index.type": "BUCKET"}, "hoodie.index.type=BUCKET"),
])
def test_bad_combinations_refused_before_anything_is_written(spark, tmp_path, extra, match):
    path = tmp_path / "t"
    with pytest.raises(ConfigError, match=match) as info:
        pyhudi.write(spark.createDataFrame([(1, "a", 1, "x")], SCHEMA), str(path), _options(**extra))
    assert "hoodie.populate.meta.fields" in str(info.value)
    assert not path.exists() or not any(path.iterdir())


def test_bad_index_on_existing_table_leaves_it_unchanged(spark, tmp_path):
    path = tmp_path / "t"
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x")], SCHEMA), str(path), _options(), mode="overwrite")
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(PyHudiError, match="hoodie.index.type=GLOBAL_BLOOM"):
        pyhudi.write(spark.createDataFrame([(1, "b", 2, "x")], SCHEMA), str(path),
                     _options(**{"hoodie.index.type": "GLOBAL_BLOOM"}))
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before
    assert rows(pyhudi.read(spark, str(path)), DATA) == [(1, "a", 1, "x")]


@pytest.mark.parametrize("version", ["6", "8"])
def test_clustering_keeps_the_rows_and_the_virtual_key_layout(spark, tmp_path, version):
    """Clustering a virtual-key table (Hudi's strategy reads the slices with keys computed from the data) rewrites
    its small files into one sorted file per partition whose meta columns stay null and whose footer has no bloom
    filter; the rows equal plain Spark's and hudi-rs's, and an upsert afterwards still finds its stored record."""
    path = tmp_path / "t"
    opts = _options(**{"hoodie.write.table.version": version})
    batches = [[(1, "a", 1, "x"), (2, "b", 1, "y")], [(3, "c", 1, "x"), (4, "d", 1, "y")], [(5, "e", 1, "x")]]
    ref = None
    for batch in batches:   # each insert a new small file group (no small-file bin packing across writes)
        df = spark.createDataFrame(batch, SCHEMA)
        pyhudi.write(df, str(path), {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
        ref = df if ref is None else ref.unionByName(df)
    files_before = _base_files(path)
    cluster_options = {**opts, "hoodie.clustering.plan.strategy.sort.columns": "v"}
    (clustering,) = pyhudi.Table(spark, str(path)).maintenance.cluster(options=cluster_options)
    table = HudiTable.load(str(path))
    assert table.properties.version == version
    view = table.view()
    latest = [s.base_file.path for s in view.latest_slices()]
    assert len(latest) == 2 and all(clustering.time in name for name in latest)    # one file per partition
    for file in latest:
        values = pq.read_table(path / file)["v"].to_pylist()
        assert values == sorted(values)
    _assert_virtual_files(path)   # the clustered files and the replaced ones
    assert rows(pyhudi.read(spark, str(path)), DATA) == rows(ref, DATA)
    assert_same_rows_as_hudi_rs(spark, path, len(DATA))
    assert len(files_before) == 5
    # the index (keys computed from the data) finds records in the clustered files
    pyhudi.write(spark.createDataFrame([(3, "c2", 2, "x")], SCHEMA), str(path), opts)
    ref = _reference_upsert(ref, spark.createDataFrame([(3, "c2", 2, "x")], SCHEMA), ["id"])
    assert rows(pyhudi.read(spark, str(path)), DATA) == rows(ref, DATA)
    assert_same_rows_as_hudi_rs(spark, path, len(DATA))


def test_sql_mor_with_virtual_keys_refused_at_create(spark, tmp_path):
    name = "vk_mor"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    location = tmp_path / "mor"
    with pytest.raises(PyHudiError, match="hoodie.populate.meta.fields"):
        pyhudi.sql(spark, f"""CREATE TABLE {name} (id INT, v STRING, ts INT) USING hudi
            TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts',
                           'hoodie.populate.meta.fields' = 'false') LOCATION '{location}'""")
    assert not spark.catalog.tableExists(name)
    assert not (location / ".hoodie").exists()


def test_upsert_into_java_written_virtual_key_table(spark, tmp_path_factory):
    """pyhudi updates the Java-written fixture (SimpleKeyGenerator, hive-style partitions, no meta fields): the
    update finds the stored record by the key computed from `id`, hudi-rs reads the result."""
    base = fixture_table("cow_v6_simplekeygen_hivestyle_no_metafields", tmp_path_factory)
    before = pyhudi.read(spark, str(base))
    changed = before.filter("id = 3").drop(*META).withColumn("name", F.lit("Caroline")) \
        .withColumn("longField", F.col("longField") + 1)
    pyhudi.write(changed, str(base), {"hoodie.datasource.write.operation": "upsert"})
    theirs = hudi_rs_read(base)
    assert sorted(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == \
        [(1, "Alice"), (2, "Bob"), (3, "Caroline"), (4, "Diana")]
    assert rows(pyhudi.read(spark, str(base)), ["id", "name"]) == [(1, "Alice"), (2, "Bob"), (3, "Caroline"),
                                                                   (4, "Diana")]
    _assert_virtual_files(base)
