"""Spark's S3A settings as the AWS environment pyhudi's own I/O reads (storage/object_store.py)."""

from pyhudi.storage.object_store import environment_from_spark_conf


def test_s3a_settings_become_the_aws_environment():
    conf = {"spark.hadoop.fs.s3a.endpoint": "minio:9000", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": "id", "spark.hadoop.fs.s3a.secret.key": "secret",
            "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1", "spark.sql.shuffle.partitions": "4"}
    assert environment_from_spark_conf(conf) == {
        "AWS_ENDPOINT_URL": "http://minio:9000", "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "eu-west-1"}


def test_an_endpoint_without_scheme_is_https_and_no_settings_no_environment():
    assert environment_from_spark_conf({"spark.hadoop.fs.s3a.endpoint": "s3.eu-west-1.amazonaws.com"}) == {
        "AWS_ENDPOINT_URL": "https://s3.eu-west-1.amazonaws.com"}
    assert environment_from_spark_conf({"spark.hadoop.fs.s3a.endpoint": "http://h:1"})["AWS_ALLOW_HTTP"] == "true"
    assert environment_from_spark_conf({"spark.master": "local[2]"}) == {}


def test_an_abfs_uri_without_container_is_refused_naming_it_and_the_form():
    import pytest

    from pyhudi.errors import ConfigError
    from pyhudi.storage.object_store import filesystem

    with pytest.raises(ConfigError, match=r"'abfss://account\.dfs\.core\.windows\.net/t'.*<container>@<account>"):
        filesystem("abfss://account.dfs.core.windows.net/t")
