"""A pyhudi process for test_object_storage.py: the engine scenario (engine_scenario.py) on a table at an
object-store URI (an S3 server started by the test). It runs in a process of its own because the endpoint and
credentials come from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID...), which Spark's Python workers take
from the process that starts Spark. Prints one JSON object: the rows read at each step, and the instants.

    python object_store_client.py <table uri or path> <table type> <table version>
"""

from __future__ import annotations

import json
import sys

from engine_scenario import scenario


def main() -> None:
    import pyhudi

    spark = pyhudi.session(master="local[2]", hive=False)
    out = scenario(spark, sys.argv[1], sys.argv[2], sys.argv[3])
    spark.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
