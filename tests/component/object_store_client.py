"""A pyhudi process for test_object_storage.py: the engine scenario (engine_scenario.py) on a table at an
object-store URI (an S3 server started by the test). It runs in a process of its own because the endpoint and
credentials come from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID...), which Spark's Python workers take
from the process that starts Spark. Prints one JSON object: the rows read at each step, and the instants.

    python object_store_client.py <table uri or path> <table type> <table version> [env|spark-conf]

With `spark-conf`, the endpoint and credentials are taken out of the environment and given to the session as
Spark's S3A settings (spark.hadoop.fs.s3a.*) instead, as a cluster's configuration gives them. `s3a-connector` does
the same and puts Hadoop's S3A connector on Spark's classpath (the jars in $PYHUDI_S3A_JARS), so that Spark's own
parquet scan reads the base files at s3a://, as on a cluster. `s3a-bucket` gives the endpoint and keys as S3A's
per-bucket settings of the table's bucket (spark.hadoop.fs.s3a.bucket.<bucket>.*), with shared ones that point
nowhere: only the bucket's own settings reach the server.
"""

from __future__ import annotations

import json
import os
import sys

from pathlib import Path

from engine_scenario import scenario

# hadoop-aws 3.3.1 (the S3A connector PyPI carries) beside pyspark's Hadoop 3.5 client: numbers where Hadoop 3.5's
# defaults say "60s" (3.3 parses them as long), and the SDK v1 credentials provider (3.5's default names SDK v2's)
S3A_CONNECTOR = {"spark.hadoop.fs.s3a.threads.keepalivetime": "60",
                 "spark.hadoop.fs.s3a.connection.establish.timeout": "30000",
                 "spark.hadoop.fs.s3a.connection.timeout": "200000",
                 "spark.hadoop.fs.s3a.multipart.purge.age": "86400",
                 "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}


def main() -> None:
    import pyhudi

    conf = {}
    mode = sys.argv[4] if len(sys.argv) > 4 else "env"
    if mode in ("spark-conf", "s3a-connector", "s3a-bucket"):
        conf = {"spark.hadoop.fs.s3a.endpoint": os.environ.pop("AWS_ENDPOINT_URL").split("://", 1)[1],
                "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                # a local server is addressed path-style, as MinIO is: S3A's default (false) is virtual-hosted
                "spark.hadoop.fs.s3a.path.style.access": "true",
                "spark.hadoop.fs.s3a.access.key": os.environ.pop("AWS_ACCESS_KEY_ID"),
                "spark.hadoop.fs.s3a.secret.key": os.environ.pop("AWS_SECRET_ACCESS_KEY"),
                "spark.hadoop.fs.s3a.endpoint.region": os.environ.pop("AWS_REGION")}
        os.environ.pop("AWS_ALLOW_HTTP", None)
    if mode == "s3a-bucket":   # the bucket's own endpoint and keys; the shared ones lead nowhere
        bucket = sys.argv[1].split("://", 1)[1].split("/", 1)[0]
        for option in ("endpoint", "access.key", "secret.key"):
            conf[f"spark.hadoop.fs.s3a.bucket.{bucket}.{option}"] = conf[f"spark.hadoop.fs.s3a.{option}"]
        conf.update({"spark.hadoop.fs.s3a.endpoint": "127.0.0.1:9", "spark.hadoop.fs.s3a.access.key": "nobody",
                     "spark.hadoop.fs.s3a.secret.key": "nothing"})
    if mode == "s3a-connector":
        conf.update(S3A_CONNECTOR)
        conf["spark.jars"] = ",".join(str(jar) for jar in sorted(Path(os.environ["PYHUDI_S3A_JARS"]).glob("*.jar")))
    spark = pyhudi.session(master="local[2]", hive=False, **conf)
    if mode == "s3a-connector":   # Spark's own scan reads the table, not pyhudi's fallback in tasks
        from pyhudi.spark.jvm import hadoop_serves
        assert hadoop_serves(spark, sys.argv[1]), "Spark's S3A connector is not serving " + sys.argv[1]
    if conf:   # the executors get them too, through Spark's executor environment
        assert spark.conf.get("spark.executorEnv.AWS_ENDPOINT_URL").startswith("http://"), "no executor env"
    if mode == "s3a-bucket":
        assert bucket in spark.conf.get("spark.executorEnv.PYHUDI_S3A_BUCKET_SETTINGS"), "no bucket settings"
    out = scenario(spark, sys.argv[1], sys.argv[2], sys.argv[3])
    spark.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
