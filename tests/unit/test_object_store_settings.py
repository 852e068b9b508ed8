"""Spark's S3A settings as the AWS environment pyhudi's own I/O reads (storage/object_store.py)."""

from pyhudi.storage.object_store import environment_from_spark_conf


def test_s3a_settings_become_the_aws_environment():
    conf = {"spark.hadoop.fs.s3a.endpoint": "minio:9000", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": "id", "spark.hadoop.fs.s3a.secret.key": "secret",
            "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1", "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.sql.shuffle.partitions": "4"}
    assert environment_from_spark_conf(conf) == {
        "AWS_ENDPOINT_URL": "http://minio:9000", "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "eu-west-1", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}


def test_an_endpoint_without_scheme_is_https_and_no_settings_no_environment():
    assert environment_from_spark_conf({"spark.hadoop.fs.s3a.endpoint": "s3.eu-west-1.amazonaws.com"}) == {
        "AWS_ENDPOINT_URL": "https://s3.eu-west-1.amazonaws.com", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "true"}
    assert environment_from_spark_conf({"spark.hadoop.fs.s3a.endpoint": "http://h:1"})["AWS_ALLOW_HTTP"] == "true"
    assert environment_from_spark_conf({"spark.master": "local[2]"}) == {}


def test_an_abfs_uri_without_container_is_refused_naming_it_and_the_form():
    import pytest

    from pyhudi.errors import ConfigError
    from pyhudi.storage.object_store import filesystem

    with pytest.raises(ConfigError, match=r"'abfss://account\.dfs\.core\.windows\.net/t'.*<container>@<account>"):
        filesystem("abfss://account.dfs.core.windows.net/t")


def test_s3a_path_style_and_anonymous_access_become_the_aws_environment():
    """fs.s3a.path.style.access (Hadoop's default false: virtual-hosted addressing) and the anonymous credentials
    provider mean the same for pyhudi's own I/O as for Spark's scan."""
    minio = {"spark.hadoop.fs.s3a.endpoint": "http://minio:9000", "spark.hadoop.fs.s3a.path.style.access": "true"}
    assert environment_from_spark_conf(minio)["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] == "false"
    oss = {"spark.hadoop.fs.s3a.endpoint": "https://oss-eu-central-1.aliyuncs.com"}    # S3A's default: virtual
    assert environment_from_spark_conf(oss)["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] == "true"
    assert "AWS_VIRTUAL_HOSTED_STYLE_REQUEST" not in environment_from_spark_conf({"spark.master": "local[2]"})
    public = {"spark.hadoop.fs.s3a.aws.credentials.provider":
              "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}
    assert environment_from_spark_conf(public) == {"AWS_SKIP_SIGNATURE": "true"}
    chain = {"spark.hadoop.fs.s3a.aws.credentials.provider":
             "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider,com.amazonaws.auth.EnvironmentVariableCredentialsProvider"}
    assert environment_from_spark_conf(chain) == {}


def test_anonymous_and_virtual_hosted_s3_filesystems(monkeypatch):
    """What a URI cannot say is given to pyarrow's S3FileSystem from the same environment obstore reads."""
    from pyhudi.storage import object_store

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://minio:9000")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_SKIP_SIGNATURE", "true")
    monkeypatch.setenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true")
    object_store._root.cache_clear()
    try:
        fs, root = object_store.filesystem("s3a://public-bucket/t")
        settings = fs.__reduce__()[1][0]
        assert (settings["anonymous"], settings["force_virtual_addressing"]) == (True, True)
        assert (settings["endpoint_override"], settings["scheme"], settings["region"]) == ("minio:9000", "http",
                                                                                         "eu-west-1")
        assert root == "public-bucket/t"
    finally:
        object_store._root.cache_clear()
