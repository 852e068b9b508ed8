"""Joda-Time date patterns: tokenising a pattern into letters and literals."""

from __future__ import annotations

from dataclasses import dataclass

from pyhudi.keygen.joda.zones import PatternError


# ---------------------------------------------------------------------------------------------- patterns

_FORMAT_LETTERS = set("GCYxweEyDMdaKhHkmsSzZ")
_NUMERIC_LETTERS = set("CYxwedDyMdKhHkmsS")


@dataclass(frozen=True)
class Token:
    """A literal (``letter == ""``, text in ``text``) or a pattern field (``letter`` repeated ``count`` times)."""

    letter: str = ""
    count: int = 0
    text: str = ""

    @property
    def numeric(self) -> bool:
        if self.letter == "M":
            return self.count <= 2
        return self.letter in _NUMERIC_LETTERS


def tokenize(pattern: str) -> list[Token]:
    """Split a Joda pattern into tokens; raises :class:`PatternError` on unknown letters or open quotes."""
    tokens: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ("a" <= ch <= "z") or ("A" <= ch <= "Z"):
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            if ch not in _FORMAT_LETTERS:
                raise PatternError(f"illegal pattern component '{pattern[i:j]}' in '{pattern}'")
            tokens.append(Token(ch, j - i))
            i = j
        elif ch == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(Token(text="'"))
                i += 2
                continue
            j = i + 1
            buf = []
            while True:
                if j >= n:
                    raise PatternError(f"unterminated quote in '{pattern}'")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        buf.append("'")
                        j += 2
                        continue
                    break
                buf.append(pattern[j])
                j += 1
            tokens.append(Token(text="".join(buf)))
            i = j + 1
        else:
            tokens.append(Token(text=ch))
            i += 1
    # merge adjacent literals
    merged: list[Token] = []
    for tok in tokens:
        if not tok.letter and merged and not merged[-1].letter:
            merged[-1] = Token(text=merged[-1].text + tok.text)
        else:
            merged.append(tok)
    return merged


def literal_slashes(pattern: str) -> int:
    """How many ``/`` a formatted value of this pattern contains (partition-path segments minus one)."""
    return sum(tok.text.count("/") for tok in tokenize(pattern) if not tok.letter)
