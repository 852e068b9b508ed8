"""The declaration of a Hudi option (key, Hudi's default, parser, doc), the registry every group module declares
into, the value parsers shared by all groups, and the cross-key rules a group registers."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from pyhudi.errors import ConfigError


@dataclass(frozen=True)
class ConfigProperty:
    key: str
    default: Any
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None
    doc: str = ""
    group: str = ""     # the pyhudi.config module that declares it (table, write, index, ...)


# key -> property; filled by the group modules (pyhudi.config imports them all)
PROPERTIES: dict[str, ConfigProperty] = {}
# (keys that trigger it, check(config)): rules across keys of one group, run when any of the keys is set
VALIDATORS: list[tuple[frozenset[str], Callable[[Any], None]]] = []


def declare(key: str, default: Any, parse: Callable[[str], Any] = str, choices: Iterable[str] | None = None,
            doc: str = "") -> ConfigProperty:
    """Declare a key once, in the group module calling this; a second declaration is a programming error."""
    if key in PROPERTIES:
        raise RuntimeError(f"Hudi option {key} is declared twice")
    group = str(sys._getframe(1).f_globals.get("__name__", "")).rsplit(".", 1)[-1]
    prop = ConfigProperty(key, default, parse, tuple(choices) if choices is not None else None, doc, group)
    PROPERTIES[key] = prop
    return prop


def validator(*props: ConfigProperty) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Register `check(config)` to run when a HoodieConfig sets any of `props`."""
    def register(check: Callable[[Any], None]) -> Callable[[Any], None]:
        VALIDATORS.append((frozenset(p.key for p in props), check))
        return check
    return register


# --- parsers ------------------------------------------------------------------------------------------------
def bool_value(value: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An integer parser that refuses values no setting can work with (0 ms heartbeats, 0-byte files)."""
    def parse(value: str) -> int:
        number = int(str(value).strip())
        if number < minimum:
            raise ValueError(f"must be {what} (at least {minimum})")
        return number
    return parse


def fraction(value: str) -> float:
    number = float(str(value).strip())
    if not 0.0 < number < 1.0:
        raise ValueError("must be a probability between 0 and 1 (exclusive)")
    return number


POSITIVE = int_at_least(1, "a positive integer")
NON_NEGATIVE = int_at_least(0, "zero or a positive integer")


def whole_number(value: str) -> int:
    return int(str(value).strip())


def upper(value: str) -> str:
    return str(value).strip().upper()


def lower(value: str) -> str:
    return str(value).strip().lower()


def parse_value(prop: ConfigProperty, text: str) -> Any:
    """`text` parsed by `prop`; a bad value is a ConfigError naming the key, the value and the default."""
    try:
        value = prop.parse(text)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"option {prop.key}={text!r} is invalid ({exc}); "
                          f"default is {prop.default!r}") from None
    if prop.choices is not None and value not in prop.choices:
        raise ConfigError(f"option {prop.key}={text!r} is not one of {', '.join(prop.choices)}")
    return value
