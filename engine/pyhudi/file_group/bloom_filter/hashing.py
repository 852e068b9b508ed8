"""Keys -> bit indices: Hadoop's MurmurHash (as Hudi's filters use it) over Arrow string data, vectorised with numpy."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa

from pyhudi.errors import RecordKeyError


_M = np.uint32(0x5BD1E995)          # MurmurHash2's multiplier
# Keys hashed per numpy pass: bounds the (n, nbHash) index matrix to ~16 MB for 30 hashes.
_CHUNK = 1 << 17


# ---------------------------------------------------------------------------------------------------------------
# key normalisation and hashing
# ---------------------------------------------------------------------------------------------------------------


def _as_arrow(keys) -> pa.Array:
    """Turn the accepted key containers into one pyarrow (large_)string/binary array."""
    if isinstance(keys, (str, bytes)):
        keys = [keys]
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if isinstance(keys, pa.Array):
        arr = keys
    else:
        if not isinstance(keys, (list, tuple, np.ndarray)) and not hasattr(keys, "__array__"):
            keys = list(keys)
        try:
            if isinstance(keys, np.ndarray) and keys.dtype.kind == "S":
                arr = pa.array(keys, type=pa.large_binary())
            else:
                arr = pa.array(keys, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise RecordKeyError(
                f"bloom filter keys must be strings (record keys); could not convert the given keys: {exc}. "
                "Pass a list/array of str or a pyarrow string array."
            ) from exc
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)):
        try:
            arr = arr.cast(pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise RecordKeyError(
                f"bloom filter keys must be strings (record keys), got a pyarrow array of type {t}. "
                "Cast the record key column to string first."
            ) from exc
    if arr.null_count:
        raise RecordKeyError(
            f"bloom filter keys contain {arr.null_count} null value(s); a Hudi record key can never be null. "
            "Filter out or fill null record keys before writing."
        )
    return arr


def string_offsets_and_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets of length n+1, uint8 data) of a string/binary array, without copying the data."""
    _, off_buf, data_buf = arr.buffers()[:3]
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    n = len(arr)
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(off_buf, dtype=np.int64 if large else np.int32)[arr.offset:arr.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def _sign_extended(byte_col: np.ndarray) -> np.ndarray:
    """Java ``(int) someByte`` for a uint8 column, as uint32 bit patterns."""
    return byte_col.view(np.int8).astype(np.int32).view(np.uint32)


def _hash_indices(offsets: np.ndarray, data: np.ndarray, nb_hash: int, vector_size: int) -> np.ndarray:
    """Bit positions of every key: an (n, nb_hash) int64 array, row i for the key at offsets[i]:offsets[i+1].

    Hadoop's HashFunction: ``initval = murmur(key, initval)`` starting at 0, position ``abs(initval % vectorSize)``.
    Keys are grouped by their number of whole 4-byte blocks so each murmur step is one numpy op over a column.
    """
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    n = len(lengths)
    out = np.empty((n, nb_hash), dtype=np.int64)
    if n == 0:
        return out
    if lengths.min() <= 0:
        raise RecordKeyError(
            "bloom filter keys contain an empty string; Hudi cannot hash an empty record key "
            "(HashFunction requires key length > 0). Filter out empty record keys before writing."
        )
    nblocks_all = lengths >> 2
    order = np.argsort(nblocks_all, kind="stable")
    sorted_blocks = nblocks_all[order]
    bounds = np.flatnonzero(np.diff(sorted_blocks)) + 1
    groups = np.split(order, bounds)
    vs = np.int64(vector_size)
    for sel in groups:
        nblocks = int(nblocks_all[sel[0]])
        g_start = starts[sel]
        g_len = lengths[sel]
        m = len(sel)
        # Mixed body blocks: k = le32(block); k *= m; k ^= k >>> 24; k *= m  (independent of the seed).
        if nblocks:
            idx = g_start[:, None] + np.arange(nblocks * 4, dtype=np.int64)[None, :]
            body = np.ascontiguousarray(data[idx]).view("<u4").astype(np.uint32, copy=False)
            body = body * _M
            body ^= body >> np.uint32(24)
            body *= _M
            k_cols = np.ascontiguousarray(body.T)  # (nblocks, m): each block a contiguous column
        else:
            k_cols = None
        # Tail: h ^= (int)b[-3] << 16; h ^= (int)b[-2] << 8; h ^= (int)b[-1]; then h *= m (only if tail != 0).
        left = (g_len & 3).astype(np.int64)
        has_tail = left != 0
        any_tail = bool(has_tail.any())
        tail = np.zeros(m, dtype=np.uint32)
        if any_tail:
            end = g_start + g_len
            for back, shift in ((3, 16), (2, 8), (1, 0)):
                present = left >= back
                if not present.any():
                    continue
                pos = np.where(present, end - back, 0)
                val = _sign_extended(data[pos]) << np.uint32(shift)
                tail ^= np.where(present, val, np.uint32(0))
            all_tail = bool(has_tail.all())
            # multiplier per key: m where there is a tail, 1 where there is none
            tail_mul = None if all_tail else np.where(has_tail, _M, np.uint32(1)).astype(np.uint32)
        len32 = g_len.astype(np.uint32)
        seed = np.zeros(m, dtype=np.uint32)
        h = np.empty(m, dtype=np.uint32)
        tmp = np.empty(m, dtype=np.uint32)
        res = np.empty((m, nb_hash), dtype=np.int64)
        for i in range(nb_hash):
            np.bitwise_xor(seed, len32, out=h)
            for j in range(nblocks):
                np.multiply(h, _M, out=h)
                np.bitwise_xor(h, k_cols[j], out=h)
            if any_tail:
                np.bitwise_xor(h, tail, out=h)
                if tail_mul is None:
                    np.multiply(h, _M, out=h)
                else:
                    np.multiply(h, tail_mul, out=h)
            np.right_shift(h, np.uint32(13), out=tmp)
            np.bitwise_xor(h, tmp, out=h)
            np.multiply(h, _M, out=h)
            np.right_shift(h, np.uint32(15), out=tmp)
            np.bitwise_xor(h, tmp, out=h)
            seed, h = h, seed  # the hash becomes the next seed
            col = np.abs(seed.view(np.int32).astype(np.int64))
            np.remainder(col, vs, out=res[:, i])
        out[sel] = res
    return out


def hash_keys(keys, nb_hash: int, vector_size: int):
    """Yield (n, nb_hash) bit-position arrays for the keys, in key order, chunk by chunk (a HashedKeys: its
    positions, hashed once for all its slices)."""
    if isinstance(keys, HashedKeys):
        yield keys.positions(nb_hash, vector_size)
        return
    arr = _as_arrow(keys)
    for start in range(0, len(arr), _CHUNK):
        chunk = arr.slice(start, _CHUNK)
        offsets, data = string_offsets_and_data(chunk)
        yield _hash_indices(offsets, data, nb_hash, vector_size)


_SHAPES = 4   # filter shapes a HashedKeys hashes all its keys for; further shapes hash only a slice's keys


class HashedKeys:
    """Keys whose bit positions are computed once per filter shape (nb_hash, vector_size) and shared by slices
    of them. A writer's task tests its keys against many files, a few keys each, and the files' filters mostly
    have one shape: hashing a few keys costs a few hundred numpy calls, hashing all of them at once hardly more.
    Threads of the task share one instance."""

    def __init__(self, keys, start: int = 0, length: int | None = None, shared: tuple | None = None):
        self._keys = keys
        self._start = start
        self._length = len(keys) - start if length is None else length
        self._memo, self._lock = shared if shared is not None else ({}, threading.Lock())

    def __len__(self) -> int:
        return self._length

    def slice(self, start: int, length: int) -> "HashedKeys":
        return HashedKeys(self._keys, self._start + start, length, (self._memo, self._lock))

    def positions(self, nb_hash: int, vector_size: int) -> np.ndarray:
        """(n, nb_hash) bit positions of this slice's keys."""
        with self._lock:
            every = self._memo.get((nb_hash, vector_size))
            if every is None and len(self._memo) >= _SHAPES:   # files written under many settings: per slice
                return _all_positions(self._keys.slice(self._start, self._length), nb_hash, vector_size)
            if every is None:
                every = self._memo[(nb_hash, vector_size)] = _all_positions(self._keys, nb_hash, vector_size)
        return every[self._start:self._start + self._length]


def _all_positions(keys, nb_hash: int, vector_size: int) -> np.ndarray:
    return np.concatenate(list(hash_keys(keys, nb_hash, vector_size)) or [np.empty((0, nb_hash), np.int64)])
