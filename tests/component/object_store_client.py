"""A pyhudi process for test_object_storage.py: the engine scenario (engine_scenario.py) on a table at an
object-store URI (an S3 server started by the test). It runs in a process of its own because the endpoint and
credentials come from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID...), which Spark's Python workers take
from the process that starts Spark. Prints one JSON object: the rows read at each step, and the instants.

    python object_store_client.py <table uri or path> <table type> <table version> [env|spark-conf]

With `spark-conf`, the endpoint and credentials are taken out of the environment and given to the session as
Spark's S3A settings (spark.hadoop.fs.s3a.*) instead, as a cluster's configuration gives them.
"""

from __future__ import annotations

import json
import os
import sys

from engine_scenario import scenario


def main() -> None:
    import pyhudi

    conf = {}
    if sys.argv[4:] == ["spark-conf"]:
        conf = {"spark.hadoop.fs.s3a.endpoint": os.environ.pop("AWS_ENDPOINT_URL").split("://", 1)[1],
                "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                # a local server is addressed path-style, as MinIO is: S3A's default (false) is virtual-hosted
                "spark.hadoop.fs.s3a.path.style.access": "true",
                "spark.hadoop.fs.s3a.access.key": os.environ.pop("AWS_ACCESS_KEY_ID"),
                "spark.hadoop.fs.s3a.secret.key": os.environ.pop("AWS_SECRET_ACCESS_KEY"),
                "spark.hadoop.fs.s3a.endpoint.region": os.environ.pop("AWS_REGION")}
        os.environ.pop("AWS_ALLOW_HTTP", None)
    spark = pyhudi.session(master="local[2]", hive=False, **conf)
    if conf:   # the executors get them too, through Spark's executor environment
        assert spark.conf.get("spark.executorEnv.AWS_ENDPOINT_URL").startswith("http://"), "no executor env"
    out = scenario(spark, sys.argv[1], sys.argv[2], sys.argv[3])
    spark.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
