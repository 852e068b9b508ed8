"""Tables on object stores (S3, GCS, Azure): which filesystem serves a URI, and the conditional create that makes
publishing a timeline file atomic there.

Reads, writes, listings and deletes go through pyarrow's own filesystems (S3FileSystem, GcsFileSystem,
AzureFileSystem: native, already a dependency, each with its cloud's usual credential chain). pyarrow has no
conditional write, so `create_if_absent` goes through obstore (``put(mode="create")``: ``If-None-Match: *`` on S3
and Azure, ``ifGenerationMatch=0`` on GCS), one small wheel that speaks all three. docs/object-storage.md has
the measurements behind that choice and the mapping of URI schemes.

Both libraries read the endpoint and credentials from the process environment (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``..., ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``...) or from the
machine's role; on a cluster the executors need the same environment (``spark.executorEnv.*``).
`environment_from_spark_conf` turns Spark's ``spark.hadoop.fs.s3a.*`` settings into that environment.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from functools import lru_cache
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow.fs as pafs

from pyhudi.errors import ConfigError, PyHudiError

if TYPE_CHECKING:
    from obstore.store import ObjectStore

# URI scheme -> the scheme pyarrow and obstore know it by. Spark gets the URI as the user wrote it: s3a:// for
# Hadoop's S3A connector, s3:// on EMR (EMRFS), gs:// for Google's connector, abfs(s)://container@account... for ABFS.
SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "abfs": "abfs", "abfss": "abfs"}


# Hadoop's S3A options (Spark: spark.hadoop.fs.s3a.<option>) -> the environment variable the AWS SDKs (pyarrow,
# obstore) read.
S3A = "spark.hadoop.fs.s3a."
S3A_ENVIRONMENT = {"endpoint": "AWS_ENDPOINT_URL", "access.key": "AWS_ACCESS_KEY_ID",
                   "secret.key": "AWS_SECRET_ACCESS_KEY", "session.token": "AWS_SESSION_TOKEN",
                   "endpoint.region": "AWS_REGION"}
PATH_STYLE = "path.style.access"
SSL = "connection.ssl.enabled"
CREDENTIALS_PROVIDER = "aws.credentials.provider"
ANONYMOUS_PROVIDER = "AnonymousAWSCredentialsProvider"   # org.apache.hadoop.fs.s3a's
S3A_OPTIONS = (*S3A_ENVIRONMENT, PATH_STYLE, SSL, CREDENTIALS_PROVIDER)
# S3A's per-bucket options (fs.s3a.bucket.<bucket>.<option>, which override fs.s3a.<option> for that bucket) travel
# to the executors as JSON in this variable, with the options they override: {"<bucket>.<option>" or "<option>": value}
BUCKET_SETTINGS = "PYHUDI_S3A_BUCKET_SETTINGS"


def environment_from_spark_conf(conf: Mapping[str, str]) -> dict[str, str]:
    """The AWS environment that gives pyhudi's own I/O the S3 endpoint and credentials a session's
    ``spark.hadoop.fs.s3a.*`` settings give Spark's scan (see `_s3a_environment`). Per-bucket settings
    (``fs.s3a.bucket.<bucket>.*``) go into BUCKET_SETTINGS, read when that bucket's clients are built."""
    env = _s3a_environment(lambda option: conf.get(S3A + option))
    per_bucket = {key[len(S3A + "bucket."):]: str(value) for key, value in conf.items()
                  if key.startswith(S3A + "bucket.") and value is not None}
    if per_bucket:
        shared = {option: str(conf[S3A + option]) for option in S3A_OPTIONS if conf.get(S3A + option)}
        env[BUCKET_SETTINGS] = json.dumps({**shared, **per_bucket}, sort_keys=True)
    return env


def _s3a_environment(option: Callable[[str], Any], complete: bool = False) -> dict[str, str]:
    """The AWS environment of S3A's options (`option(name)`: its value or None). An endpoint without a scheme is
    https, or http when ``fs.s3a.connection.ssl.enabled`` is false (then AWS_ALLOW_HTTP too, which Rust clients
    such as hudi-rs need). Buckets are addressed as S3A addresses them at that endpoint: path-style when
    ``fs.s3a.path.style.access`` is true, else virtual-hosted (S3A's default). S3A's
    AnonymousAWSCredentialsProvider is unsigned requests (AWS_SKIP_SIGNATURE); its other providers are the AWS
    default chain, which both clients already follow. `complete`: also say false where the options say nothing (a
    bucket's environment replaces the process's)."""
    env = {name: str(option(key)) for key, name in S3A_ENVIRONMENT.items() if option(key)}
    endpoint = env.get("AWS_ENDPOINT_URL")
    if endpoint and "://" not in endpoint:
        ssl = str(option(SSL) or "true").lower() != "false"
        endpoint = env["AWS_ENDPOINT_URL"] = f"{'https' if ssl else 'http'}://{endpoint}"
    if endpoint and endpoint.startswith("http://"):
        env["AWS_ALLOW_HTTP"] = "true"
    if endpoint or option(PATH_STYLE) or complete:
        path_style = str(option(PATH_STYLE) or "false").strip().lower() == "true"
        env["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = "false" if path_style else "true"
    anonymous = ANONYMOUS_PROVIDER in str(option(CREDENTIALS_PROVIDER) or "")
    if anonymous or complete:
        env["AWS_SKIP_SIGNATURE"] = "true" if anonymous else "false"
    return env


def bucket_environment(bucket: str) -> Mapping[str, str]:
    """The AWS environment pyhudi's clients of `bucket` use: the process's, or, when S3A settings name the bucket
    (fs.s3a.bucket.<bucket>.<option>), the environment of its options over the shared ones."""
    settings = json.loads(os.environ.get(BUCKET_SETTINGS) or "{}")
    own = {key[len(bucket) + 1:]: value for key, value in settings.items() if key.startswith(bucket + ".")
           and key[len(bucket) + 1:] in S3A_OPTIONS}
    if not own:
        return os.environ
    return {**os.environ, **_s3a_environment(lambda option: own.get(option) or settings.get(option), complete=True)}


class ConditionalWriteError(PyHudiError):
    """The object store refused or failed a conditional create (If-None-Match)."""


def scheme_of(uri: str) -> str:
    return uri.split("://", 1)[0].lower() if "://" in uri else "file"


def is_object_store(uri: str) -> bool:
    return scheme_of(uri) in SCHEMES


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem serving `uri` and the path inside it. ConfigError naming the URI when no filesystem
    serves its scheme. Only the scheme and authority are parsed as a URI (once per bucket): the path is taken
    literally, as Hudi's paths are (a partition value may hold a space or brackets)."""
    scheme = scheme_of(uri)
    authority, _, rest = uri[len(scheme) + 3:].partition("/")
    try:
        fs, root = _root(SCHEMES.get(scheme, scheme), authority)
    except (ValueError, OSError) as error:   # ArrowInvalid is a ValueError
        raise ConfigError(
            f"no filesystem serves the table URI {uri!r} ({error}); pyhudi reads and writes local paths, file://, "
            "s3:// (also s3a://, s3n://), gs:// and abfs(s):// URIs: fix the path, or set the endpoint, region "
            "and credentials in the environment (docs/object-storage.md)") from error
    return fs, f"{root.rstrip('/')}/{rest}".rstrip("/")


@lru_cache(maxsize=32)
def _root(scheme: str, authority: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem of one bucket (container, host) and its root path, built once per process."""
    if scheme == "abfs":
        return _azure_root(authority)
    if scheme == "s3":
        env = bucket_environment(authority)
        if env is not os.environ or _env_true("AWS_SKIP_SIGNATURE") or _env_true("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"):
            return _s3_root(authority, env)
    return pafs.FileSystem.from_uri(f"{scheme}://{authority}/")


def _s3_root(bucket: str, env: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
    """pyarrow's S3FileSystem built from `env` for what an s3:// URI cannot tell it and obstore reads from the
    environment: unsigned requests (AWS_SKIP_SIGNATURE), virtual-hosted addressing at a custom endpoint
    (AWS_VIRTUAL_HOSTED_STYLE_REQUEST; pyarrow addresses buckets path-style there otherwise), and a bucket's own
    endpoint and keys (`bucket_environment`)."""
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or ""
    web, _, host = endpoint.partition("://") if "://" in endpoint else ("https", "", endpoint)
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or (
        "us-east-1" if host else pafs.resolve_s3_region(bucket))
    anonymous = _true(env.get("AWS_SKIP_SIGNATURE"))
    keys = {} if anonymous or not env.get("AWS_ACCESS_KEY_ID") else {
        "access_key": env.get("AWS_ACCESS_KEY_ID"), "secret_key": env.get("AWS_SECRET_ACCESS_KEY"),
        "session_token": env.get("AWS_SESSION_TOKEN")}
    virtual = _true(env.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"))
    fs = pafs.S3FileSystem(anonymous=anonymous, force_virtual_addressing=virtual, region=region,
                           endpoint_override=host.rstrip("/") or None, scheme=web, **keys)
    return fs, f"{bucket}/"


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "1")


def _env_true(name: str) -> bool:
    return _true(os.environ.get(name))


# The Azure environment obstore reads (object_store's AzureConfigKey names), given to pyarrow's AzureFileSystem
# too, so that both clients reach the same account the same way. Azurite's account and key are public constants.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _azure_root(authority: str) -> tuple[pafs.FileSystem, str]:
    """``container@account.dfs.core.windows.net`` (or ``.blob.``): pyarrow's AzureFileSystem over the account, with
    the account key, SAS token or service principal from the environment when it gives one (else Azure's
    default credential chain), and Azurite's endpoint when ``AZURE_STORAGE_USE_EMULATOR`` is true."""
    container, _, host = authority.rpartition("@")
    if not container:
        raise ValueError("an abfs(s):// URI names its container and account: "
                         "abfss://<container>@<account>.dfs.core.windows.net/<path>")
    env = os.environ
    emulator = _azure_emulator()
    account = host.split(".", 1)[0] or env.get("AZURE_STORAGE_ACCOUNT_NAME") or (AZURITE_ACCOUNT if emulator else "")
    options: dict[str, Any] = {"account_key": _first_env("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY",
                                                         "AZURE_STORAGE_MASTER_KEY"),
                               "sas_token": _first_env("AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY"),
                               "client_id": env.get("AZURE_CLIENT_ID"), "client_secret": env.get("AZURE_CLIENT_SECRET"),
                               "tenant_id": env.get("AZURE_TENANT_ID")}
    if emulator:
        url = env.get("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:10000")
        web, _, authority_of_url = url.partition("://")
        options.update(blob_storage_authority=authority_of_url.rstrip("/"), blob_storage_scheme=web,
                       dfs_storage_authority=authority_of_url.rstrip("/"), dfs_storage_scheme=web)
        options["account_key"] = options["account_key"] or AZURITE_KEY
    fs = pafs.AzureFileSystem(account, **{name: value for name, value in options.items() if value})
    return fs, f"{container}/"


def _azure_emulator() -> bool:
    """Whether the environment points Azure at Azurite (object_store's AZURE_STORAGE_USE_EMULATOR)."""
    return _env_true("AZURE_STORAGE_USE_EMULATOR")


def _first_env(*names: str) -> str | None:
    return next((os.environ[name] for name in names if os.environ.get(name)), None)


def uri_of(fs: pafs.FileSystem, path: str) -> str | None:
    """The object-store URI of `path` inside `fs` (a filesystem `filesystem` returned); None for any other
    filesystem. Lets code that holds a filesystem and a path (log writers) create objects conditionally."""
    kind = fs.type_name
    if kind == "s3":
        return f"s3://{path}"
    if kind == "gcs":
        return f"gs://{path}"
    if kind == "abfs":
        container, _, key = path.partition("/")
        account = fs.__reduce__()[1][0]["account_name"]   # pyarrow pickles an AzureFileSystem by its options
        return f"abfs://{container}@{account}.dfs.core.windows.net/{key}"
    return None


def create_object(uri: str, data: bytes) -> bool:
    """Create the object at `uri` holding `data` only if no object of that name exists; False when one did.

    A create whose first attempt reached the store but whose answer was lost is retried by the client and then
    finds its own object: an existing object with exactly `data` (not empty) counts as created by this call."""
    store, key = _store(uri)   # first: without obstore, the ConfigError that says how to install it
    check_conditional_writes(uri)

    import obstore
    from obstore.exceptions import AlreadyExistsError, PreconditionError

    try:
        obstore.put(store, key, data, mode="create")
        return True
    except (AlreadyExistsError, PreconditionError):
        if data and _read_or_none(store, key) == data:
            return True
        return False
    except Exception as error:   # noqa: BLE001 - every store error is re-raised with the URI and the fix
        raise _conditional_write_error(uri, error) from error


def read_versioned(uri: str) -> tuple[bytes, dict[str, Any], int] | None:
    """The object at `uri`: its bytes, its version (ETag and version id, for `replace_if_unchanged`) and its
    last-modified time in ns; None when there is none."""
    import obstore
    from obstore.exceptions import NotFoundError

    store, key = _store(uri)
    try:
        result = obstore.get(store, key)
    except NotFoundError:
        return None
    meta = result.meta
    version = {name: value for name, value in (("e_tag", meta["e_tag"]), ("version", meta["version"]))
               if value is not None}
    return (bytes(result.bytes()), version,
            int(meta["last_modified"].timestamp() * 1e9))


def replace_if_unchanged(uri: str, data: bytes, version: dict[str, Any]) -> bool:
    """Overwrite the object at `uri` only if it is still `version` (If-Match on its ETag); False when another
    writer changed or deleted it first."""
    import obstore
    from obstore.exceptions import NotFoundError, PreconditionError

    store, key = _store(uri)
    try:
        obstore.put(store, key, data, mode=version)   # type: ignore[arg-type]  # an UpdateVersion TypedDict
        return True
    except (PreconditionError, NotFoundError):
        return False
    except Exception as error:   # noqa: BLE001 - named with the URI and the fix
        raise _conditional_write_error(uri, error, "replace", "If-Match on its ETag") from error


def check_conditional_writes(uri: str) -> None:
    """Once per bucket and process, before the first create there: a second create of one name must fail.

    Some S3-compatible stores ignore ``If-None-Match`` and overwrite, which would let two writers both publish one
    instant; others refuse the header. Either way nothing of the table is written: a ConditionalWriteError names
    the URI. The probe is a dot-file next to `uri` (timelines ignore dot-files), deleted at once."""
    scheme = SCHEMES.get(scheme_of(uri))
    authority = uri.split("://", 1)[1].partition("/")[0]
    with _CHECK_LOCK:
        if (scheme, authority) in _CHECKED:
            return
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        store, key = _store(uri)
        probe = f"{key.rpartition('/')[0]}/.pyhudi-conditional-write-probe-{uuid.uuid4().hex}".lstrip("/")
        try:
            obstore.put(store, probe, b"first", mode="create")
            try:
                obstore.put(store, probe, b"second", mode="create")
                ignored = True
            except (AlreadyExistsError, PreconditionError):
                ignored = False
            obstore.delete(store, probe)
        except Exception as error:   # noqa: BLE001 - refused, or another store error: named with the URI
            raise _conditional_write_error(uri, error) from error
        if ignored:
            raise ConditionalWriteError(
                f"the object store of {uri} ignores conditional writes: a second create of one object with "
                "If-None-Match: * overwrote the first, so two writers could both publish one instant and lose "
                f"commits. Nothing was written to the table. {_STORES_THAT_DO}")
        _CHECKED.add((scheme, authority))


_CHECKED: set[tuple[str | None, str]] = set()   # buckets whose store has passed check_conditional_writes
_CHECK_LOCK = threading.Lock()
_STORES_THAT_DO = ("Use a bucket whose store supports conditional writes (Amazon S3, Google Cloud Storage, Azure "
                   "Blob Storage and MinIO do) and check the endpoint and credentials (docs/object-storage.md).")


def _conditional_write_error(uri: str, error: Exception, action: str = "create",
                             condition: str = "If-None-Match: *") -> ConditionalWriteError:
    reason = str(error).split("\n\nDebug source:", 1)[0].strip()   # obstore appends its Rust error's debug dump
    return ConditionalWriteError(
        f"could not {action} {uri} with a conditional write ({condition}): {reason}. On object stores pyhudi "
        f"publishes the timeline only with conditional writes, so that two writers can never both publish one "
        f"instant. {_STORES_THAT_DO}")


def _read_or_none(store: ObjectStore, key: str) -> bytes | None:
    import obstore
    try:
        return bytes(obstore.get(store, key).bytes())
    except Exception:   # noqa: BLE001 - gone or unreadable: not ours to claim
        return None


def _store(uri: str) -> tuple[ObjectStore, str]:
    """The obstore store of `uri`'s bucket (container) and the object's key inside it."""
    scheme = SCHEMES.get(scheme_of(uri))
    if scheme is None:
        raise ConfigError(f"{uri!r} is not an object-store URI (s3://, s3a://, gs://, abfs(s)://)")
    authority, _, key = uri.split("://", 1)[1].partition("/")   # literal: a key may hold '#' or '?'
    return _bucket_store(scheme, authority), key


@lru_cache(maxsize=32)
def _bucket_store(scheme: str, authority: str) -> ObjectStore:
    try:
        from obstore.store import from_url
    except ImportError as error:
        raise ConfigError(
            "tables on object stores need obstore for their atomic commits: pip install 'dbt-pyhudi[object-store]' "
            "(on a cluster, on the executors too)") from error
    env = bucket_environment(authority) if scheme == "s3" else os.environ
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or ""
    emulator = scheme == "abfs" and _azure_emulator()
    options: Any = {"allow_http": True} if emulator or (scheme == "s3" and endpoint.startswith("http://")) else None
    # a bucket's own S3A settings; obstore reads the rest from os.environ
    config: Any = None if env is os.environ else {
        name: env[name] for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                     "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
                                     "AWS_SKIP_SIGNATURE") if env.get(name)}
    return from_url(f"{scheme}://{authority}", config=config, client_options=options)
