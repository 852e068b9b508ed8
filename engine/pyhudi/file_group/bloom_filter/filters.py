"""The bloom filters Hudi writes: SIMPLE (one Hadoop BloomFilter) and DYNAMIC_V0 (Hudi's
InternalDynamicBloomFilter: a growing list of filters up to a maximum number of entries)."""

from __future__ import annotations

import base64

import numpy as np

from pyhudi.errors import ConfigError, CorruptFileError, RecordKeyError
from pyhudi.file_group.bloom_filter.hashing import hash_keys
from pyhudi.file_group.bloom_filter.params import (DYNAMIC_V0, DYN_FIELDS, FOOTER_TYPE_KEY, HEADER, INT_MAX,
                                                   MURMUR_HASH, SIMPLE, VERSION, bit_size, i32, num_hashes)
from pyhudi.file_group.bloom_filter.serialized import (BitFilter, decode_base64, read_bit_filter, read_bytes,
                                                       read_header)


# ---------------------------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------------------------


class BloomFilter:
    """A Hudi record-key bloom filter (base class and factory).

    >>> bf = BloomFilter.create("DYNAMIC_V0", num_entries=1000, fpp=1e-6, max_entries=5000)
    >>> bf.add_keys(["k1", "k2"])
    >>> bf.might_contain("k1")
    True
    >>> BloomFilter.deserialize(bf.serialize(), bf.type_code).serialize() == bf.serialize()
    True
    """

    type_code: str = ""

    # -- factory ---------------------------------------------------------------------------------------------
    @staticmethod
    def create(filter_type: str = DYNAMIC_V0, num_entries: int = 60000, fpp: float = 1e-9,
               max_entries: int = 100000) -> "BloomFilter":
        """A new empty filter sized like Hudi does from ``hoodie.index.bloom.num_entries`` (``num_entries``),
        ``hoodie.index.bloom.fpp`` (``fpp``) and, for DYNAMIC_V0,
        ``hoodie.bloom.index.filter.dynamic.max.entries`` (``max_entries``)."""
        code = _normalize_type(filter_type, ConfigError, "hoodie.bloom.index.filter.type")
        if isinstance(num_entries, bool) or not isinstance(num_entries, (int, np.integer)) or num_entries <= 0:
            raise ConfigError(f"hoodie.index.bloom.num_entries must be a positive integer, got {num_entries!r}")
        if num_entries > INT_MAX:
            raise ConfigError(f"hoodie.index.bloom.num_entries must fit a Java int, got {num_entries}")
        try:
            fpp_f = float(fpp)
        except (TypeError, ValueError):
            raise ConfigError(f"hoodie.index.bloom.fpp must be a number between 0 and 1, got {fpp!r}") from None
        if not (0.0 < fpp_f < 1.0):
            raise ConfigError(f"hoodie.index.bloom.fpp must be strictly between 0 and 1, got {fpp!r}")
        if isinstance(max_entries, bool) or not isinstance(max_entries, (int, np.integer)):
            raise ConfigError(
                f"hoodie.bloom.index.filter.dynamic.max.entries must be an integer, got {max_entries!r}")
        bits = bit_size(int(num_entries), fpp_f)
        if bits >= INT_MAX:
            raise ConfigError(
                f"a bloom filter for hoodie.index.bloom.num_entries={num_entries} at hoodie.index.bloom.fpp={fpp} "
                "needs more than 2^31 bits; lower num_entries or raise fpp"
            )
        hashes = num_hashes(bits, int(num_entries))
        if code == SIMPLE:
            return SimpleBloomFilter(BitFilter(bits, hashes))
        return DynamicBloomFilter(bits, hashes, int(num_entries), int(max_entries))

    @staticmethod
    def deserialize(serialized: str, type_code: str | None) -> "BloomFilter":
        """Decode a footer filter string. ``type_code`` is the ``hoodie_bloom_filter_type_code`` footer value;
        like Hudi, a missing (None/empty) type code means SIMPLE. Raises CorruptFileError on anything undecodable."""
        if isinstance(type_code, bytes):
            type_code = type_code.decode("utf-8", "replace")
        code = SIMPLE if not type_code else _normalize_type(type_code, CorruptFileError, FOOTER_TYPE_KEY)
        raw = decode_base64(serialized, code)
        if code == SIMPLE:
            return SimpleBloomFilter._from_raw(raw)
        return DynamicBloomFilter._from_raw(raw)

    # -- operations ------------------------------------------------------------------------------------------
    def add_keys(self, keys) -> None:
        """Add record keys (iterable of str, pyarrow string array/chunked array, numpy array of str)."""
        raise NotImplementedError

    def might_contain(self, key: str) -> bool:
        """False means the key is certainly absent; True means it may be present."""
        if not isinstance(key, (str, bytes)):
            raise RecordKeyError(f"bloom filter keys must be str, got {type(key).__name__}: {key!r}")
        return bool(self.might_contain_many([key])[0])

    def might_contain_many(self, keys) -> np.ndarray:
        """Vectorised :meth:`might_contain`: a bool array, one entry per key, in order."""
        raise NotImplementedError

    def serialize(self) -> str:
        """The footer string (Base64 of Hudi's binary layout)."""
        return base64.b64encode(self._to_raw()).decode("ascii")

    def _to_raw(self) -> bytes:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.type_code}>"


def _normalize_type(filter_type, error, where: str) -> str:
    code = str(filter_type).strip().upper() if filter_type is not None else ""
    if code not in (SIMPLE, DYNAMIC_V0):
        raise error(f"unknown bloom filter type {filter_type!r} in {where}; Hudi knows SIMPLE and DYNAMIC_V0")
    return code


class SimpleBloomFilter(BloomFilter):
    """Hudi's SimpleBloomFilter: one fixed-size Hadoop bloom filter."""

    type_code = SIMPLE

    def __init__(self, bit_filter: BitFilter):
        self._f = bit_filter

    @property
    def vector_size(self) -> int:
        return self._f.vector_size

    @property
    def nb_hash(self) -> int:
        return self._f.nb_hash

    def add_keys(self, keys) -> None:
        for positions in hash_keys(keys, self._f.nb_hash, self._f.vector_size):
            self._f.set(positions)

    def might_contain_many(self, keys) -> np.ndarray:
        parts = [self._f.test(p) for p in hash_keys(keys, self._f.nb_hash, self._f.vector_size)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.bool_)

    def _to_raw(self) -> bytes:
        return self._f.to_bytes()

    @classmethod
    def _from_raw(cls, raw: bytes) -> "SimpleBloomFilter":
        f, pos = read_bit_filter(raw, 0, SIMPLE)
        if pos != len(raw):
            raise CorruptFileError(f"SIMPLE bloom filter has {len(raw) - pos} unexpected trailing byte(s) after "
                                   f"its {f.vector_size}-bit vector")
        return cls(f)

    def __repr__(self) -> str:
        return f"<SimpleBloomFilter bits={self._f.vector_size} hashes={self._f.nb_hash}>"


class DynamicBloomFilter(BloomFilter):
    """Hudi's HoodieDynamicBoundedBloomFilter (InternalDynamicBloomFilter): rows of Hadoop bloom filters.

    A new row is started every ``num_entries`` keys while ``rows * num_entries < max_entries``; once the bound
    is reached keys go round-robin over the rows (first to row 0, twice, as Hudi does). ``max_entries`` is not
    part of the serialized form: exactly like Hudi, a deserialized filter has max_entries = 0 and never grows.
    """

    type_code = DYNAMIC_V0

    def __init__(self, vector_size: int, nb_hash: int, num_entries: int, max_entries: int,
                 rows: list[BitFilter] | None = None, current_nb_record: int = 0, hash_type: int = MURMUR_HASH):
        self.vector_size = vector_size
        self.nb_hash = nb_hash
        self.hash_type = hash_type
        self.num_entries = num_entries  # Java: nr
        self.max_entries = max_entries  # Java: maxNr (transient)
        self.current_nb_record = current_nb_record
        self.rows = rows if rows is not None else [BitFilter(vector_size, nb_hash, hash_type)]
        self._reached_max = False  # transient in Java too
        self._cur_matrix_index = 0

    def _new_row(self) -> None:
        self.rows.append(BitFilter(self.vector_size, self.nb_hash, self.hash_type))

    def _assign_rows(self, n: int) -> np.ndarray:
        """Which row each of the next ``n`` keys goes to, advancing the state exactly like
        InternalDynamicBloomFilter.add / getActiveStandardBF, but a run of keys at a time."""
        out = np.empty(n, dtype=np.int64)
        done = 0
        nr = self.num_entries
        while done < n:
            if self._reached_max:
                k = n - done
                out[done:] = (self._cur_matrix_index + np.arange(k, dtype=np.int64)) % len(self.rows)
                self._cur_matrix_index = i32(self._cur_matrix_index + k)
                self.current_nb_record += k
                done = n
            elif self.current_nb_record >= nr:
                if i32(len(self.rows) * nr) < self.max_entries:
                    self._new_row()
                    self.current_nb_record = 0
                else:
                    self._reached_max = True
                    out[done] = 0
                    self.current_nb_record += 1
                    done += 1
            else:
                k = min(n - done, nr - self.current_nb_record)
                out[done:done + k] = len(self.rows) - 1
                self.current_nb_record += k
                done += k
        return out

    def add_keys(self, keys) -> None:
        for positions in hash_keys(keys, self.nb_hash, self.vector_size):
            rows = self._assign_rows(len(positions))
            if len(rows) == 0:
                continue
            if rows[0] == rows[-1] and (rows == rows[0]).all():
                self.rows[int(rows[0])].set(positions)
                continue
            for r in np.unique(rows):
                self.rows[int(r)].set(positions[rows == r])

    def might_contain_many(self, keys) -> np.ndarray:
        parts = []
        for positions in hash_keys(keys, self.nb_hash, self.vector_size):
            hit = np.zeros(len(positions), dtype=np.bool_)
            for row in self.rows:
                todo = ~hit
                if not todo.any():
                    break
                if todo.all():
                    hit = row.test(positions)
                else:
                    hit[todo] = row.test(positions[todo])
            parts.append(hit)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.bool_)

    def _to_raw(self) -> bytes:
        head = HEADER.pack(VERSION, self.nb_hash, self.hash_type, self.vector_size)
        fields = DYN_FIELDS.pack(i32(self.num_entries), i32(self.current_nb_record), len(self.rows))
        return b"".join([head, fields] + [row.to_bytes() for row in self.rows])

    @classmethod
    def _from_raw(cls, raw: bytes) -> "DynamicBloomFilter":
        nb_hash, hash_type, vector_size, pos = read_header(raw, 0, DYNAMIC_V0)
        if len(raw) - pos < DYN_FIELDS.size:
            raise CorruptFileError(f"DYNAMIC_V0 bloom filter is truncated: missing its row-count fields at offset "
                                   f"{pos} (filter has {len(raw)} bytes)")
        nr, current, n_rows = DYN_FIELDS.unpack_from(read_bytes(raw, pos, DYN_FIELDS.size))
        pos += DYN_FIELDS.size
        if n_rows <= 0:
            raise CorruptFileError(f"DYNAMIC_V0 bloom filter has an invalid number of rows: {n_rows}")
        row_size = HEADER.size + BitFilter.n_bytes(vector_size)
        if len(raw) - pos != n_rows * row_size:
            raise CorruptFileError(
                f"DYNAMIC_V0 bloom filter is truncated or malformed: {n_rows} row(s) of {vector_size} bits need "
                f"{n_rows * row_size} bytes after the header, found {len(raw) - pos}"
            )
        rows = []
        for i in range(n_rows):
            row, pos = read_bit_filter(raw, pos, f"DYNAMIC_V0 row {i}")
            if (row.vector_size, row.nb_hash, row.hash_type) != (vector_size, nb_hash, hash_type):
                raise CorruptFileError(
                    f"DYNAMIC_V0 bloom filter row {i} has size/hashes ({row.vector_size}, {row.nb_hash}) different "
                    f"from the filter's ({vector_size}, {nb_hash})"
                )
            rows.append(row)
        return cls(vector_size, nb_hash, nr, 0, rows=rows, current_nb_record=current, hash_type=hash_type)

    def __repr__(self) -> str:
        return (f"<DynamicBloomFilter bits={self.vector_size} hashes={self.nb_hash} rows={len(self.rows)} "
                f"nr={self.num_entries} current={self.current_nb_record}>")
