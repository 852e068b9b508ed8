"""Where the Spark catalog (the Hive metastore) lives: the embedded Derby database in the warehouse folder, or a
PostgreSQL-backed Hive metastore that several processes share.

Derby allows one process per database. A second process on the same warehouse (a `pyhudi sql` shell beside
`dbt run`, two notebooks) would otherwise fail deep in Hive with "Unable to instantiate
SessionHiveMetaStoreClient"; `check_derby_free` says so before Spark starts. For concurrent use, pass
`metastore_url='postgresql://user:password@host:port/database'` (or set PYHUDI_METASTORE_URL, or the dbt profile's
`metastore_url`): Hive's schema is created in that database on first use (prepare_postgres_schema), and the
PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java, or the jar named by PYHUDI_JDBC_DRIVER_JAR) is put on the
driver's class path.
"""

from __future__ import annotations

import fcntl
import glob
import os
from urllib.parse import unquote, urlsplit

from pyhudi.errors import ConfigError, PyHudiError

METASTORE_URL_ENV = "PYHUDI_METASTORE_URL"
JDBC_JAR_ENV = "PYHUDI_JDBC_DRIVER_JAR"
_JAR_CANDIDATES = ("/usr/share/java/postgresql.jar", "/usr/share/java/postgresql-*.jar")


class MetastoreBusyError(PyHudiError):
    """The embedded Derby metastore of a warehouse is open in another process."""


def derby_settings(warehouse: str) -> dict[str, str]:
    return {"spark.driver.extraJavaOptions": f"-Dderby.system.home={warehouse}",
            "spark.hadoop.javax.jdo.option.ConnectionURL":
                f"jdbc:derby:;databaseName={warehouse}/metastore_db;create=true"}


def check_derby_free(warehouse: str) -> None:
    """Raise MetastoreBusyError when another process holds the warehouse's Derby database (Derby keeps an OS file
    lock on metastore_db/dbex.lck while the database is open). Call only before this process starts Spark: its
    own JVM would hold the lock too."""
    lock = os.path.join(warehouse, "metastore_db", "dbex.lck")
    if not os.path.exists(lock):
        return
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.lockf(fd, fcntl.LOCK_UN)
    except OSError:
        raise MetastoreBusyError(
            f"the Spark catalog of warehouse {warehouse} (an embedded Derby database, metastore_db) is open in another "
            "process, and Derby allows one process at a time. Stop the other process (a dbt run, a pyhudi shell, a "
            "notebook), use another warehouse folder, or share a PostgreSQL-backed Hive metastore between processes: "
            f"pyhudi.session(metastore_url='postgresql://user:password@host:5432/metastore'), the environment "
            f"variable {METASTORE_URL_ENV}, or `metastore_url:` in the dbt profile (README: 'A shared catalog')."
        ) from None
    finally:
        os.close(fd)


def _driver_jar() -> str:
    named = os.environ.get(JDBC_JAR_ENV)
    if named:
        if not os.path.isfile(named):
            raise ConfigError(f"{JDBC_JAR_ENV}={named} is not a file; name the PostgreSQL JDBC driver jar")
        return named
    for pattern in _JAR_CANDIDATES:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise ConfigError("a PostgreSQL metastore needs the PostgreSQL JDBC driver: install Debian's "
                      f"libpostgresql-jdbc-java (apt-get install libpostgresql-jdbc-java) or set {JDBC_JAR_ENV} "
                      "to the driver jar")


def postgres_settings(url: str) -> dict[str, str]:
    """Spark settings for a Hive metastore in PostgreSQL: `postgresql://user:password@host:port/database` (or a
    `jdbc:postgresql://...` URL with user/password as query parameters)."""
    if url.startswith("jdbc:postgresql://"):
        jdbc, user, password = url, None, None
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres") or not parts.hostname or not parts.path.strip("/"):
            raise ConfigError(f"metastore_url {url!r} is not a PostgreSQL URL; write "
                              "postgresql://user:password@host:5432/database")
        jdbc = f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}/{parts.path.strip('/')}"
        user = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
    settings = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": jdbc,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.driver.extraClassPath": _driver_jar(),
    }
    if user:
        settings["spark.hadoop.javax.jdo.option.ConnectionUserName"] = user
    if password:
        settings["spark.hadoop.javax.jdo.option.ConnectionPassword"] = password
    return settings


_MODEL_PACKAGE = "org/apache/hadoop/hive/metastore/model/"
_SCHEMA_LOCK = 72016                      # pg_advisory_lock key: one process creates the schema at a time


def _model_classes(jvm) -> list[str]:
    """Hive's persistent metastore classes (MDatabase, MTable, ...), read from the hive-metastore jar Spark ships."""
    import zipfile

    import pyspark
    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "hive-metastore-*.jar"))
    if not jars:
        raise ConfigError("this pyspark has no hive-metastore jar; a PostgreSQL metastore needs Spark's Hive support")
    names = [n[:-6].replace("/", ".") for n in zipfile.ZipFile(jars[0]).namelist()
             if n.startswith(_MODEL_PACKAGE + "M") and n.endswith(".class") and "$" not in n]
    persistable = jvm.java.lang.Class.forName("org.datanucleus.enhancement.Persistable")
    return sorted(n for n in names if persistable.isAssignableFrom(jvm.java.lang.Class.forName(n)))


def prepare_postgres_schema(spark, settings: dict[str, str]) -> None:
    """Create Hive's metastore schema in the PostgreSQL database once, before Hive first uses it.

    Hive would create its tables lazily (DataNucleus autoCreateAll), each in a second connection whose foreign keys
    wait for locks the first connection holds: the first CREATE TABLE hangs on PostgreSQL. Creating every table up
    front (DataNucleus' StoreManager.manageClasses over Hive's model classes), under an advisory lock so that two
    processes starting together do not both create it, avoids that."""
    jvm = spark.sparkContext._jvm
    url = settings["spark.hadoop.javax.jdo.option.ConnectionURL"]
    user = settings.get("spark.hadoop.javax.jdo.option.ConnectionUserName")
    password = settings.get("spark.hadoop.javax.jdo.option.ConnectionPassword")
    jvm.java.lang.Class.forName("org.postgresql.Driver")
    connection = jvm.java.sql.DriverManager.getConnection(url, user, password)
    try:
        connection.createStatement().execute(f"SELECT pg_advisory_lock({_SCHEMA_LOCK})")
        if connection.getMetaData().getTables(None, None, "DBS", None).next():
            return
        props = jvm.java.util.Properties()
        for key, value in {"javax.jdo.PersistenceManagerFactoryClass":
                           "org.datanucleus.api.jdo.JDOPersistenceManagerFactory",
                           "javax.jdo.option.ConnectionURL": url,
                           "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
                           "javax.jdo.option.ConnectionUserName": user or "",
                           "javax.jdo.option.ConnectionPassword": password or "",
                           "datanucleus.schema.autoCreateAll": "true",
                           "datanucleus.identifierFactory": "datanucleus1",        # Hive's table and column names
                           "datanucleus.rdbms.useLegacyNativeValueStrategy": "true"}.items():
            props.setProperty(key, value)
        factory = jvm.javax.jdo.JDOHelper.getPersistenceManagerFactory(props)
        try:
            context = factory.getNucleusContext()
            classes = _model_classes(jvm)
            names = spark.sparkContext._gateway.new_array(jvm.java.lang.String, len(classes))
            for i, name in enumerate(classes):
                names[i] = name
            context.getStoreManager().manageClasses(context.getClassLoaderResolver(None), names)
        finally:
            factory.close()
    finally:
        connection.close()                   # also releases the advisory lock
