"""Typed Hudi options: every key pyhudi understands, declared once with Apache Hudi's name, default, parser and doc,
in one module per group (table, write, keygen, index, read, cdc, clean, archive, compaction, clustering, lock);
hudi-rs `crates/core/src/config/` is the model.

Options arrive as Hudi's Spark datasource options (`hoodie.*` strings) or as Hudi's SQL aliases
(`primaryKey`, `preCombineField`, `type`: config.aliases). `HoodieConfig` resolves aliases, applies defaults,
checks values (a wrong value raises ConfigError naming the key) and warns about unknown `hoodie.*` keys, so a typo
is visible instead of silently ignored. Each service reads its group's frozen typed config (`CleanConfig`,
`ArchiveConfig`, `CompactionConfig`, `LockConfig`, `HeartbeatConfig`, `IndexConfig`), parsed once; a write
reads `WriteConfig` (config.write_config).

Everything is re-exported here, so `from pyhudi import config as C; C.RECORD_KEY` works for every key.
"""

from pyhudi.config.core import (NON_NEGATIVE, POSITIVE, PROPERTIES, ConfigProperty, bool_value, declare,  # noqa: F401
                                fraction, int_at_least, lower, parse_value, upper, whole_number)
from pyhudi.config.table import *  # noqa: F401,F403
from pyhudi.config.write import *  # noqa: F401,F403
from pyhudi.config.keygen import *  # noqa: F401,F403
from pyhudi.config.read import *  # noqa: F401,F403
from pyhudi.config.cdc import *  # noqa: F401,F403
from pyhudi.config.clustering import *  # noqa: F401,F403
from pyhudi.config.aliases import (DBT_OPTION_ALIASES, PRECOMBINE_FIELD, PRIMARY_KEY, SQL_ALIASES,  # noqa: F401
                                   TABLE_TYPE_ALIASES, TYPE, normalize_options)
from pyhudi.config.resolve import (ACCEPTED_PREFIXES, ACCEPTED_WITHOUT_EFFECT, IGNORED_OPTIONS,  # noqa: F401
                                   HoodieConfig, bool_option, config_of, int_option, known_key, option)
from pyhudi.config.index import *  # noqa: F401,F403
from pyhudi.config.clean import *  # noqa: F401,F403
from pyhudi.config.archive import *  # noqa: F401,F403
from pyhudi.config.compaction import *  # noqa: F401,F403
from pyhudi.config.lock import *  # noqa: F401,F403
from pyhudi.config.write_config import WriteConfig  # noqa: F401
