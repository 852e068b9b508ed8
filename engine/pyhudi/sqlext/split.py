"""Split a SQL script into statements on `;` tokens, so semicolons inside strings, quoted identifiers and
comments never split. Each statement keeps its exact original text (non-Hudi statements go to Spark as written)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from pyhudi.errors import SqlError


@dataclass(frozen=True)
class Statement:
    text: str
    line: int        # 1-based line of the statement's first token in the script
    offset: int      # character offset of the statement in the script


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
    for token in tokens + [None]:
        if token is None or token.token_type == TokenType.SEMICOLON:
            if current:
                start, end = current[0].start, current[-1].end + 1
                statements.append(Statement(text[start:end], current[0].line, start))
            current = []
            continue
        current.append(token)
    return statements
