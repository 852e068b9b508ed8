"""What Hudi 0.15's MergeIntoHoodieTableCommand refuses before it writes, with its messages (each raised as
SqlError with pyhudi's hint on a second line):

- on a merge-on-read table, an UPDATE assignment that reads a target column;
- an ON condition that is not equalities on a primary-key table, a key or partition column matched to anything
  but a source column (possibly cast), a source value that cannot be up-cast to the key's type, and (with
  hoodie.spark.sql.optimized.writes.enable) a primary-key column missing from the condition;
- a table with an ordering field whose value the source cannot give (a source column of that name, or an UPDATE
  assignment of it from a source column).
"""

from __future__ import annotations

from typing import Callable

from pyspark.sql import types as T
from sqlglot import exp

from pyhudi.errors import SqlError

_NUMERIC_ORDER = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)


def can_up_cast(source: T.DataType, target: T.DataType) -> bool:
    """Spark's Cast.canUpCast for the types a key holds: the same type, a wider number, anything to a string."""
    if source == target or isinstance(target, T.StringType):
        return True
    order = [i for i, kind in enumerate(_NUMERIC_ORDER) if isinstance(source, kind)], \
        [i for i, kind in enumerate(_NUMERIC_ORDER) if isinstance(target, kind)]
    if order[0] and order[1]:
        return order[0][0] <= order[1][0]
    if isinstance(source, T.DecimalType) and isinstance(target, T.DecimalType):
        return target.scale >= source.scale and target.precision - target.scale >= source.precision - source.scale
    return isinstance(source, T.DateType) and isinstance(target, T.TimestampType)


class MergeChecks:
    """The checks of one MERGE INTO: target and source aliases, their columns, and a way to type a source-side
    expression (`type_of(sql)`)."""

    def __init__(self, table: str, target_alias: str, source_alias: str, target_types: dict[str, T.DataType],
                 source_columns: list[str], type_of: Callable[[str], T.DataType]):
        self.table = table
        self.target_alias = target_alias.lower()
        self.source_alias = source_alias.lower()
        self.target_types = {k.lower(): v for k, v in target_types.items()}
        self.source_columns = {c.lower() for c in source_columns}
        self.type_of = type_of

    def _is_target(self, node: exp.Expression) -> bool:
        if not isinstance(node, exp.Column):
            return False
        if node.table:
            return node.table.lower() == self.target_alias
        return node.name.lower() in self.target_types and node.name.lower() not in self.source_columns

    def _is_source_column(self, node: exp.Expression) -> bool:
        node = node.this if isinstance(node, exp.Cast) else node
        if not isinstance(node, exp.Column):
            return False
        if node.table:
            return node.table.lower() == self.source_alias
        return node.name.lower() in self.source_columns

    @staticmethod
    def _spark_sql(node: exp.Expression) -> str:
        text = node.sql("spark")
        return f"({text})" if isinstance(node, exp.Binary) else text

    def check_updates(self, is_mor: bool, assignments: list[exp.Expression]) -> None:
        """Merge-on-read: Hudi merges an update with the stored record only when it reads the table, so an UPDATE
        value cannot read a target column."""
        if not is_mor:
            return
        for value in assignments:
            used = [c.name for c in value.find_all(exp.Column) if self._is_target(c)]
            if used:
                raise SqlError(f"assertion failed: Target table's field({','.join(used)}) cannot be the right-value "
                               f"of the update clause for MOR table.\nMERGE INTO {self.table}: compute the value "
                               "from source columns only (the stored row is not read when a merge-on-read table "
                               "takes an update)")

    def check_condition(self, on: exp.Expression, key_fields: list[str], partition_fields: list[str],
                        optimized_writes: bool) -> dict[str, exp.Expression]:
        """Checks the ON condition; returns the source expression each key or partition column is matched to."""
        conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
        if key_fields and not all(isinstance(c, exp.EQ) for c in conjuncts):
            raise SqlError(f"Currently only equality predicates are supported in MERGE INTO statement on primary key "
                           f"table(provided {on.sql('spark')}\nMERGE INTO {self.table}: match on "
                           "target.key = source.column only")
        matched: dict[str, tuple[exp.Column, exp.Expression]] = {}
        for eq in conjuncts:
            if not isinstance(eq, exp.EQ):
                continue
            left, right = eq.this, eq.expression
            if isinstance(left, exp.Cast) and isinstance(right, exp.Cast) and left.to == right.to:
                left, right = left.this, right.this    # Hudi's stripCasting
            for attr, other in ((left, right), (right, left)):
                column = attr.this if isinstance(attr, exp.Cast) else attr
                if not self._is_target(column):
                    continue
                wanted = self.target_types[column.name.lower()]
                got = self.type_of(other.sql("spark"))
                if not can_up_cast(got, wanted):
                    shown = self._spark_sql(other)
                    raise SqlError(f"Invalid MERGE INTO matching condition: {shown}: can't cast {shown} (of "
                                   f"{type(got).__name__}) to {type(wanted).__name__}\nMERGE INTO {self.table}: "
                                   f"compare {column.name} with a source value of its type")
                matched.setdefault(column.name.lower(), (column, other))
                break
        for field in list(key_fields) + list(partition_fields):
            found = matched.get(field.lower())
            if found is None:
                if field in key_fields and optimized_writes:
                    raise SqlError(f"Hudi tables with primary key are required to match on all primary key colums. "
                                   f"Column: '{field}' not found\nMERGE INTO {self.table}: add "
                                   f"{self.target_alias}.{field} = <source column> to the ON condition")
                continue
            column, other = found
            if not self._is_source_column(other):
                raise SqlError(f"Only simple conditions of the form `t.id = s.id` are allowed on the primary-key "
                               f"and partition path column. Found `{self.target_alias}.{column.name} = "
                               f"{self._spark_sql(other)}`\nMERGE INTO {self.table}: compute the key in the source "
                               "query (SELECT ... AS id) and match on it")
        return {name: other for name, (_, other) in matched.items()}

    def check_ordering_field(self, precombine: str | None, updates: list[tuple[str, exp.Expression]]) -> None:
        """The source must give the ordering field: a column of that name, or an UPDATE assignment of it from a
        source column (Hudi's preCombineAttributeAssociatedExpression)."""
        if not precombine or precombine.lower() in self.source_columns:
            return
        if any(name.lower() == precombine.lower() and self._is_source_column(value) for name, value in updates):
            return
        raise SqlError(f"Failed to resolve pre-combine field `{precombine}` w/in the source-table output\n"
                       f"MERGE INTO {self.table}: give the source a column `{precombine}` (the ordering field), "
                       f"e.g. SELECT ..., s_ts AS {precombine}")
