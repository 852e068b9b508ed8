"""Profiles of the differential conformance harness (tests/conformance): how many seeds, which seeds.

  default (CI)                 SMALL_SEQUENCES statement sequences and SMALL_PROJECTS dbt projects, fixed seeds
  PYHUDI_CONFORMANCE_LONG=1    LONG_SEQUENCES sequences and LONG_PROJECTS projects
  PYHUDI_CONFORMANCE_SEQUENCES=N / PYHUDI_CONFORMANCE_PROJECTS=N   any other count (e.g. a medium run)
  PYHUDI_CONFORMANCE_SEED=s[,s...]   replay only these seeds (sequence and project seeds share the numbering)
  PYHUDI_CONFORMANCE_KNOWN=1   also generate what KNOWN_DIVERGENCES (cf_known.py) keeps out, to see what is fixed

The Spark session is the suite's one session (tests/conftest.py `spark`).
"""

from __future__ import annotations

import os

SMALL_SEQUENCES, SMALL_PROJECTS = 8, 2
LONG_SEQUENCES, LONG_PROJECTS = 500, 200
SEQUENCE_SEED_BASE, PROJECT_SEED_BASE = 1000, 5000


def _count(name: str, small: int, long: int) -> int:
    if os.environ.get(name):
        return int(os.environ[name])
    return long if os.environ.get("PYHUDI_CONFORMANCE_LONG") == "1" else small


def _seeds(base: int, count: int) -> list[int]:
    chosen = os.environ.get("PYHUDI_CONFORMANCE_SEED")
    if chosen:
        return [int(s) for s in chosen.split(",") if base <= int(s) < base + 4000]
    return list(range(base, base + count))


def sequence_seeds() -> list[int]:
    return _seeds(SEQUENCE_SEED_BASE, _count("PYHUDI_CONFORMANCE_SEQUENCES", SMALL_SEQUENCES, LONG_SEQUENCES))


def project_seeds() -> list[int]:
    return _seeds(PROJECT_SEED_BASE, _count("PYHUDI_CONFORMANCE_PROJECTS", SMALL_PROJECTS, LONG_PROJECTS))


def include_known() -> bool:
    return os.environ.get("PYHUDI_CONFORMANCE_KNOWN") == "1"


def sequence_length() -> int:
    return int(os.environ.get("PYHUDI_CONFORMANCE_LENGTH", "6" if os.environ.get("PYHUDI_CONFORMANCE_LONG") == "1"
                              else "4"))
