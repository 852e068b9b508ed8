"""Split a SQL script into statements on `;` tokens, so semicolons inside strings, quoted identifiers and
comments never split. Each statement keeps its exact original text (non-Hudi statements go to Spark as written)
and the options of a `/* pyhudi.options {...} */` comment among the comments that open it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from pyhudi.errors import SqlError
from pyhudi.sqlext.settings import OPTIONS_COMMENT, parse_options_comment


@dataclass(frozen=True)
class Statement:
    text: str
    line: int        # 1-based line of the statement's first token in the script
    offset: int      # character offset of the statement in the script
    options: dict = field(default_factory=dict)   # from its opening pyhudi.options comment


def tokenize(text: str):
    from sqlglot.dialects.spark import Spark
    try:
        return Spark().tokenize(text)
    except TokenError as exc:
        raise SqlError(f"cannot read the SQL text: {exc}") from None


def split_statements(text: str) -> list[Statement]:
    tokens = tokenize(text)
    statements: list[Statement] = []
    current: list = []
    lead = 0   # where the comments and blanks before the current statement begin
    for token in tokens + [None]:
        if token is None or token.token_type == TokenType.SEMICOLON:
            if current:
                start, end = current[0].start, current[-1].end + 1
                body = text[start:end]
                statements.append(Statement(body, current[0].line, start, _options(text[lead:start], body)))
            current = []
            lead = token.end + 1 if token is not None else len(text)
            continue
        current.append(token)
    return statements


_OPTIONS = re.compile(r"\s*" + re.escape(OPTIONS_COMMENT) + r"(?=\s|\{)(.*)$", re.DOTALL)


def _options(prefix: str, statement: str) -> dict:
    """Options of the `/* pyhudi.options {...} */` block comment in the blanks and comments before a statement."""
    options: dict = {}
    for comment in _block_comments(prefix):
        match = _OPTIONS.match(comment)
        if match:
            options.update(parse_options_comment(match.group(1), statement))
    return options


def _block_comments(prefix: str) -> list[str]:
    """Bodies of the /* */ comments in text made only of blanks and comments (`--` line comments skipped)."""
    bodies, i = [], 0
    while i < len(prefix):
        if prefix.startswith("--", i):
            newline = prefix.find("\n", i)
            i = len(prefix) if newline < 0 else newline + 1
        elif prefix.startswith("/*", i):
            close = prefix.find("*/", i + 2)
            close = len(prefix) if close < 0 else close
            bodies.append(prefix[i + 2:close])
            i = close + 2
        else:
            i += 1
    return bodies
