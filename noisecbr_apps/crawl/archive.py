"""FastWARC's records of one archive, read on past damage.

FastWARC reads an archive front to back; where a gzip member is corrupt or cut short, or a
record's header does not parse (or is megabytes long), it stops, and where a ``Content-Length``
is wrong it may stop without a word: everything after is lost. Yet in a ``.warc.gz`` every record
is a gzip member of its own, and in a ``.warc`` every record starts with a ``WARC/1.`` line, so the
next readable record can be found again. :func:`records` does that on a seekable stream: after
FastWARC stops, it finds where the last record read whole ends; if the file goes on, the damage is
reported (:class:`Damage`: where, why, where reading went on) and FastWARC starts again at the next
member or ``WARC/`` line that reads. A stream that cannot seek (a pipe) is read as FastWARC reads
it, and damage ends it (FastWARC itself seeks: a pipe is read into a file first).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["Damage", "records"]

#: Bytes read at a time when looking for where a record ends or the next one starts.
CHUNK = 1 << 16
#: How far a plain record's header is looked for its end: FastWARC refuses far shorter ones.
HEADER_LIMIT = 1 << 20
GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/1."
#: What may follow the last record of a file without being damage (padding, line ends).
_TRAILING = b"\r\n\t \x00"


@dataclass(frozen=True)
class Damage:
    """A part of an archive that could not be read: from byte ``offset`` (the end of the last
    record read whole, or where reading began) to ``resumed`` (where the next readable record
    starts; None: nothing after it could be read), and why."""

    offset: int
    resumed: int | None
    reason: str

    def describe(self) -> str:
        """One line: where, why, and what happened next."""
        after = ("the rest of the file unread" if self.resumed is None
                 else f"reading went on at byte {self.resumed}")
        return f"damaged at byte {self.offset} ({self.reason}): {after}"


def records(stream: IO[bytes] | Any, damages: list[Damage]) -> Iterator[Any]:
    """FastWARC's records of ``stream`` (a binary stream, gzipped or not), one at a time; each
    part that could not be read is appended to ``damages``."""
    from fastwarc.warc import ArchiveIterator

    if not _seekable(stream):
        yield from _until_damage(ArchiveIterator(stream, parse_http=False), damages, 0)
        return
    position = stream.tell()
    size = stream.seek(0, 2)
    stream.seek(position)
    gzipped = stream.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    lost: _Lost | None = None
    while position is not None and position < size:
        stream.seek(position)
        last, error = None, None
        try:
            for record in ArchiveIterator(stream, parse_http=False):
                last = (record.stream_pos, record.content_length)
                if lost is not None:  # a record read again: the damaged part ends here
                    damages.append(lost.until(record.stream_pos))
                    lost = None
                yield record
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as caught:  # noqa: BLE001 - FastWARC's Rust panics too
            error = caught
        end = _record_end(stream, gzipped, *last) if last is not None else None
        if end is not None and _only_padding(stream, end, size):
            break  # read to the end (what FastWARC stumbled on, if anything, was padding)
        if error is None and end is None:
            break  # the last record's end cannot be told: as far as FastWARC read
        if lost is None:
            lost = _Lost(end, last[0] if last else position, _reason(error))
        # The next record start after the last record read (a gzip member's end is sure, a
        # plain record's Content-Length may be what was wrong) and past the start tried: each
        # try begins further on, so the loop ends.
        after = max(end or 0 if gzipped else 0, last[0] + 1 if last else 0, position + 1)
        position = _next_start(stream, gzipped, after, size)
    if lost is not None:
        damages.append(lost.until(None))


@dataclass(frozen=True)
class _Lost:
    """A damaged part being read past: the end of the last record read whole (None: unknown),
    the start of the record where reading stopped, and why."""

    end: int | None
    record: int
    reason: str

    def until(self, resumed: int | None) -> Damage:
        """The damage, reading going on at ``resumed``: what lies between the last record's end
        and there is lost; when nothing does, the last record itself was the damaged one."""
        skipped = self.end is not None and (resumed is None or resumed > self.end)
        return Damage(self.end if skipped else self.record, resumed, self.reason)


def _until_damage(iterator: Any, damages: list[Damage], offset: int) -> Iterator[Any]:
    """A stream that cannot seek: its records until the first damage, which ends it."""
    last = offset
    try:
        for record in iterator:
            last = record.stream_pos
            yield record
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as error:  # noqa: BLE001 - FastWARC's Rust panics too
        damages.append(Damage(last, None, _reason(error)))


def _seekable(stream: Any) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _reason(error: BaseException | None) -> str:
    if error is None:
        return "a record that does not end where its Content-Length says"
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:200]


def _record_end(stream: Any, gzipped: bool, start: int, content_length: int) -> int | None:
    """Where the record read at ``start`` ends: its gzip member's end, or its header, block and
    separator's; None when that cannot be told (a member that does not end)."""
    stream.seek(start)
    if gzipped:
        return _member_end(stream, start)
    head = stream.read(HEADER_LIMIT)
    header_end = head.find(b"\r\n\r\n")
    if header_end < 0:
        return None
    end = start + header_end + 4 + content_length
    stream.seek(end)
    return end + 4 if stream.read(4) == b"\r\n\r\n" else end


def _member_end(stream: Any, start: int) -> int | None:
    """The end of the gzip member at ``start`` (the stream positioned there), decompressed a
    chunk at a time into nothing; None for a member that is corrupt or cut short."""
    inflater = zlib.decompressobj(31)
    fed = 0
    try:
        while not inflater.eof:
            chunk = stream.read(CHUNK)
            if not chunk:
                return None
            fed += len(chunk)
            while chunk and not inflater.eof:
                inflater.decompress(chunk, CHUNK)  # bounded output, thrown away
                chunk = inflater.unconsumed_tail
    except zlib.error:
        return None
    return start + fed - len(inflater.unused_data)


def _only_padding(stream: Any, end: int, size: int) -> bool:
    """Whether nothing but padding follows ``end`` (looked at a chunk at a time)."""
    stream.seek(end)
    while chunk := stream.read(CHUNK):
        if chunk.strip(_TRAILING):
            return False
    return True


def _next_start(stream: Any, gzipped: bool, start: int, size: int) -> int | None:
    """The first position from ``start`` where a record can start: a gzip member whose first
    bytes inflate to ``WARC/``, or a ``WARC/1.`` at the start of a line; None if none."""
    magic = GZIP_MAGIC if gzipped else WARC_MAGIC
    position = start
    while position < size:
        stream.seek(position)
        window = stream.read(CHUNK + len(magic))
        found = window.find(magic)
        while found >= 0:
            at = position + found
            if _starts_record(stream, gzipped, at):
                return at
            found = window.find(magic, found + 1)
        if len(window) <= len(magic):
            return None
        position += CHUNK
    return None


def _starts_record(stream: Any, gzipped: bool, at: int) -> bool:
    if not gzipped:
        if at == 0:
            return True
        stream.seek(at - 1)
        return stream.read(1) == b"\n"
    stream.seek(at)
    try:
        head = zlib.decompressobj(31).decompress(stream.read(CHUNK), len(WARC_MAGIC))
    except zlib.error:
        return False
    return head.startswith(b"WARC/")
