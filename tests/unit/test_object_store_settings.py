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


def test_per_bucket_s3a_settings_override_the_shared_ones_for_that_bucket_only(monkeypatch):
    """S3A's fs.s3a.bucket.<bucket>.<option> overrides fs.s3a.<option> for that bucket (a bucket name may hold
    dots); options the bucket does not set are the shared ones. Both of pyhudi's clients of the bucket get them."""
    from pyhudi.storage import object_store

    conf = {"spark.hadoop.fs.s3a.endpoint": "http://shared:9000", "spark.hadoop.fs.s3a.access.key": "shared",
            "spark.hadoop.fs.s3a.secret.key": "shared-secret", "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.bucket.logs.eu.endpoint": "minio-eu:9000",
            "spark.hadoop.fs.s3a.bucket.logs.eu.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.bucket.logs.eu.access.key": "eu", "spark.hadoop.fs.s3a.bucket.logs.eu.secret.key": "s",
            "spark.hadoop.fs.s3a.bucket.public.aws.credentials.provider":
                "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"}
    env = object_store.environment_from_spark_conf(conf)
    assert env["AWS_ENDPOINT_URL"] == "http://shared:9000" and env["AWS_ACCESS_KEY_ID"] == "shared"
    for key in list(object_store.S3A_ENVIRONMENT.values()) + ["AWS_SKIP_SIGNATURE", "AWS_ENDPOINT_URL_S3"]:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    eu = object_store.bucket_environment("logs.eu")
    assert (eu["AWS_ENDPOINT_URL"], eu["AWS_ACCESS_KEY_ID"], eu["AWS_SECRET_ACCESS_KEY"]) == \
        ("http://minio-eu:9000", "eu", "s")
    assert eu["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] == "false" and eu["AWS_SKIP_SIGNATURE"] == "false"  # shared style
    public = object_store.bucket_environment("public")
    assert public["AWS_SKIP_SIGNATURE"] == "true" and public["AWS_ENDPOINT_URL"] == "http://shared:9000"
    assert object_store.bucket_environment("logs") is object_store.os.environ   # not a prefix match of logs.eu
    object_store._root.cache_clear()
    object_store._bucket_store.cache_clear()
    try:
        fs, _ = object_store.filesystem("s3a://logs.eu/t")
        settings = fs.__reduce__()[1][0]
        assert (settings["endpoint_override"], settings["scheme"], settings["access_key"]) == \
            ("minio-eu:9000", "http", "eu")
        store, _ = object_store._store("s3a://logs.eu/t/.hoodie/x")
        assert (store.config["endpoint"], store.config["access_key_id"]) == ("http://minio-eu:9000", "eu")
        shared, _ = object_store._store("s3a://other/t/.hoodie/x")
        assert "endpoint" not in shared.config     # obstore reads the shared ones from the environment
    finally:
        object_store._root.cache_clear()
        object_store._bucket_store.cache_clear()
