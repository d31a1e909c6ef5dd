"""Training data larger than memory: arrays spooled to files and read a batch of rows at a time.

A case base of millions of cases holds gigabytes of vectors (221 float32 a case, 884 bytes) and
of token ranges (96 bytes a case), far more than its labels. :func:`training.stored.from_casebase`
given a spool directory writes those to files there as it streams the case base page by page
(:class:`Sink`), and gives a Dataset whose vectors and ranges are memory-mapped
(:class:`numpy.memmap`). Every reader of them reads some rows at a time — the epochs' batches,
the validation passes, the normalisation statistics, the evaluation (:func:`row_chunks`,
:func:`take`) — and then says that the rows it read are no longer needed (:func:`release`), so
that the process's resident memory holds a batch, not the file: the operating system's page
cache keeps what it has room for, and gives it back when another process needs it.

A spooled file is unlinked as soon as it is mapped: it lives as long as the arrays that map it
(a run killed while it is still being written leaves it in the spool directory, which
``noisecbr train`` makes in a temporary directory of its own).
"""

from __future__ import annotations

import mmap
import os
import uuid
import weakref
from pathlib import Path

import numpy as np

__all__ = ["Sink", "is_spooled", "release", "gather", "take", "row_chunks", "CHUNK_ROWS"]

#: Rows read at a time by a pass over a spooled array: 65 536 vectors are 58 MB, large enough
#: for numpy and torch to run at full speed, small beside the machine's memory.
CHUNK_ROWS = 65_536


class Sink:
    """Named arrays appended a page at a time, kept in memory or written to files in
    ``directory`` (None: in memory)."""

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        self.directory = None if directory is None else Path(directory)
        self.parts: dict[str, list[np.ndarray]] = {}
        self.files: dict[str, tuple[object, int, np.dtype, tuple[int, ...]]] = {}
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)

    def append(self, name: str, array: np.ndarray) -> None:
        """Add ``array``'s rows to the array ``name`` (same dtype and row shape each time)."""
        array = np.ascontiguousarray(array)
        if self.directory is None:
            self.parts.setdefault(name, []).append(array)
            return
        if name not in self.files:
            path = self.directory / f"{name}-{uuid.uuid4().hex}.bin"
            self.files[name] = (path.open("wb"), 0, array.dtype, array.shape[1:])
        handle, rows, dtype, shape = self.files[name]
        if array.dtype != dtype or array.shape[1:] != shape:
            raise ValueError(f"{name}: rows of {array.dtype} {array.shape[1:]} after rows of "
                             f"{dtype} {shape}")
        handle.write(array.tobytes())
        self.files[name] = (handle, rows + len(array), dtype, shape)

    def finish(self, name: str, dtype, shape: tuple[int, ...] = ()) -> np.ndarray:
        """The array ``name`` as appended (an empty one of ``dtype`` and row ``shape`` when
        nothing was): in memory, or mapped from its file."""
        if self.directory is None:
            parts = self.parts.pop(name, [])
            return (np.concatenate(parts) if parts
                    else np.zeros((0, *shape), dtype=dtype))
        if name not in self.files:
            return np.zeros((0, *shape), dtype=dtype)
        handle, rows, dtype, shape = self.files.pop(name)
        handle.close()
        try:
            return _mapped(Path(handle.name), dtype, (rows, *shape))
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise

    def close(self) -> None:
        """Close and remove the files of arrays not finished (after an error)."""
        for handle, *_ in self.files.values():
            handle.close()
            Path(handle.name).unlink(missing_ok=True)
        self.files.clear()


def _mapped(path: Path, dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The file at ``path`` mapped read-only as an array, the file unlinked (the mapping keeps
    its data until the array is gone)."""
    if shape[0] == 0:
        path.unlink(missing_ok=True)
        return np.zeros(shape, dtype=dtype)
    array = np.memmap(path, dtype=dtype, mode="r", shape=shape)
    # Kept open for :func:`gather`'s reads, closed with the array.
    array.spool_fd = os.open(path, os.O_RDONLY)
    weakref.finalize(array, os.close, array.spool_fd)
    try:
        path.unlink()
    except OSError:  # a system that cannot unlink a mapped file: the spool directory's owner
        pass  # removes it
    return array


def is_spooled(array) -> bool:
    """Whether ``array`` (or the array it is a view of) maps a spooled file."""
    return _mapping(array) is not None


def _mapping(array) -> mmap.mmap | None:
    """The mmap an array's memory belongs to, following its views; None for memory."""
    seen = 0
    while array is not None and seen < 64:
        if isinstance(array, mmap.mmap):
            return array
        array, seen = getattr(array, "base", None), seen + 1
    return None


def release(array) -> None:
    """Tell the kernel the rows of a spooled ``array`` read so far are not needed any more:
    they leave the process's resident memory (the page cache may keep them). Nothing for an
    array in memory."""
    mapping = _mapping(array)
    if mapping is not None and hasattr(mapping, "madvise"):
        mapping.madvise(mmap.MADV_DONTNEED)


#: :func:`gather` maps the rows between the first and the last wanted when they are at most
#: this many times the rows wanted (a chunk of a part, a run of pages), and reads each row
#: on its own otherwise.
DENSE_SPAN = 4


def gather(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``array[index]`` (rows, in the order of ``index``), in memory. A spooled array's rows
    are read from its file: scattered rows one by one, since mapping them would bring most of
    the file into the process's resident memory (the kernel maps a large block around each
    faulting row: Linux's fault-around), and rows close together through the mapping, released
    afterwards."""
    index = np.asarray(index)
    index = np.flatnonzero(index) if index.dtype == bool else index.astype(np.int64, copy=False)
    source = _memmap_of(array)
    if (source is None or getattr(source, "spool_fd", None) is None or not len(index)
            or not hasattr(os, "preadv")):  # (Windows has no preadv: read through the map)
        return array[index]
    if index.min() < 0 or index.max() >= len(array):
        raise IndexError(f"rows {index.min()}..{index.max()} of an array of {len(array)}")
    low, high = int(index.min()), int(index.max())
    if high - low + 1 <= DENSE_SPAN * len(index):
        out = np.array(array[low:high + 1][index - low])
        release(array)
        return out
    row = array.strides[0]
    if row != array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64)):
        return array[index]  # not whole rows of the file: read through the mapping
    start = (array.__array_interface__["data"][0] - source.__array_interface__["data"][0]
             + source.offset)
    out = np.empty((len(index), *array.shape[1:]), dtype=array.dtype)
    rows = out.reshape(len(index), -1).view(np.uint8)
    for k, i in enumerate(index.tolist()):
        if os.preadv(source.spool_fd, [rows[k]], start + i * row) != row:
            raise OSError(f"row {i} of a spooled array was cut short")
    return out


def row_chunks(n: int, size: int | None = None) -> list[slice]:
    """Slices of ``n`` rows, ``size`` (default :data:`CHUNK_ROWS`) at a time."""
    size = size or CHUNK_ROWS
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def take(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``array[index]``: for a spooled array, a new spooled file beside it, written
    :data:`CHUNK_ROWS` rows at a time, so that a subset of a case base larger than memory
    stays out of memory too."""
    index = np.asarray(index)
    if index.dtype == bool:
        index = np.flatnonzero(index)
    mapping = _mapping(array)
    if mapping is None:
        return array[index]
    directory = Path(getattr(_memmap_of(array), "filename", None) or ".").parent
    sink = Sink(directory)
    try:
        for part in row_chunks(len(index)):
            sink.append("take", gather(array, index[part]).reshape(-1, *array.shape[1:]))
        return sink.finish("take", array.dtype, array.shape[1:])
    finally:
        sink.close()


def _memmap_of(array) -> np.memmap | None:
    """The :class:`numpy.memmap` an array is (a view of): the one :class:`Sink` mapped (with
    its file kept open) when there is one."""
    found = None
    while array is not None:
        if isinstance(array, np.memmap) and getattr(array, "filename", None):
            if getattr(array, "spool_fd", None) is not None:
                return array
            found = found if found is not None else array
        array = getattr(array, "base", None)
    return found
