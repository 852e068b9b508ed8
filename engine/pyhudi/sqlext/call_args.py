"""CALL arguments: `name(args)` parsed (named `table => 't'` or positional, in Hudi's order), bound to a
procedure's parameters and checked against each parameter's type, as Hudi's procedures declare them."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from pyhudi.errors import SqlError


@dataclass(frozen=True)
class Param:
    name: str
    required: bool = False
    default: Any = None
    kind: str = ""      # "int", "bool" or "string"; empty: from the name (INT_PARAMS, BOOL_PARAMS)

    @property
    def type(self) -> str:
        return self.kind or ("int" if self.name in INT_PARAMS else "bool" if self.name in BOOL_PARAMS
                             else "string")


INT_PARAMS = {"limit", "min_commits", "max_commits", "retain_commits", "hours_retained", "file_versions_retained",
              "trigger_max_commits"}
BOOL_PARAMS = {"schedule_in_line", "enable_metadata", "include_max", "include_in_flight", "include_inflight",
               "exclude_compaction", "merge"}
_EXAMPLES = {"int": "an integer, e.g. {name} => 10", "bool": "a boolean, e.g. {name} => true",
             "string": "a string, e.g. {name} => 'value'"}


@dataclass
class Procedure:
    name: str
    params: list[Param]
    output: T.StructType
    run: Callable[[SparkSession, dict], list[tuple]]
    doc: str = ""
    aliases: list[str] = field(default_factory=list)


def literal_value(node: exp.Expression) -> Any:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg):
        return -literal_value(node.this)
    if isinstance(node, (exp.Column, exp.Identifier, exp.Var)):
        return node.name
    raise SqlError(f"CALL argument {node.sql('spark')} must be a literal (string, number, boolean)")


def parse_call(text: str) -> tuple[str, list, dict]:
    import sqlglot
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        node = sqlglot.parse_one(f"SELECT {text.strip().rstrip(';')}", read="spark").expressions[0]
    except sqlglot.errors.ParseError as exc:
        raise SqlError(f"cannot parse CALL {text.strip()[:200]}: {exc}") from None
    finally:
        logger.setLevel(level)
    if not isinstance(node, (exp.Anonymous, exp.Func)):
        raise SqlError(f"CALL expects procedure_name(arguments); got {text.strip()[:200]}")
    name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
    args = node.expressions if isinstance(node, exp.Anonymous) else list(node.args.values())
    positional, named = [], {}
    for arg in args:
        if arg is None:
            continue
        if isinstance(arg, exp.Kwarg):
            named[arg.this.name.lower()] = literal_value(arg.expression)
        elif named:
            raise SqlError(f"CALL {name}: positional arguments must come before named ones")
        else:
            positional.append(literal_value(arg))
    return name.lower(), positional, named


def bind(proc: Procedure, positional: list, named: dict) -> dict:
    names = [p.name for p in proc.params]
    if len(positional) > len(names):
        raise SqlError(f"CALL {proc.name}: too many arguments; it takes {', '.join(names)}")
    args = dict(zip(names, positional))
    for key, value in named.items():
        if key not in names:
            raise SqlError(f"CALL {proc.name}: unknown argument {key!r}; valid arguments: {', '.join(names)}")
        args[key] = value
    for param in proc.params:
        if param.name not in args or args[param.name] is None:
            if param.required:
                raise SqlError(f"Argument: {param.name} is required\nCALL {proc.name} takes "
                               f"{', '.join(names)}; give {param.name} => ...")
            args[param.name] = param.default
        else:
            args[param.name] = _typed(proc, param, args[param.name])
    return args


def _typed(proc: Procedure, param: Param, value: Any) -> Any:
    """The argument as its parameter's type (Hudi's procedures declare one per parameter); a value of another
    type is refused with the argument's name, its type and the procedure."""
    kind = param.type
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
    elif kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    elif not isinstance(value, bool):
        return str(value)
    raise SqlError(f"CALL {proc.name}: argument {param.name!r} must be "
                   f"{_EXAMPLES[kind].format(name=param.name)}; got {value!r}")
