"""The lexical fields in training: which tokens each case holds, the vocabulary of buckets a
model keeps, and the embedding bags that learn their vectors with the network.

A :class:`LexicalCases` holds every page's token buckets one page after another (``text``: the
words; ``attr``: the attribute tokens, element after element) and, per case, the ranges of them
that make each pooled field of :mod:`noisecbr.features.lexical`: its words, its first
HEAD_WORDS words, its own attribute tokens and those of its ANCESTORS nearest ancestors, and
its page's words. Ranges are global, so a subset of the cases (a fold, a validation part)
keeps the same token arrays.

The vocabulary (:func:`vocabulary`) keeps the buckets seen on at least ``min_sites`` training
sites: a token of one site's template would otherwise be learnt as that site's noise or data,
which says nothing about a new site; the others stay unknown to the model, so they add nothing
(as tokens never seen in training add nothing when cleaning).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from noisecbr.features.lexical import FIELDS, LexicalInputs, Lexicon
from noisecbr.settings import HEAD_WORDS
from noisecbr.settings import LEXICAL_ANCESTORS as ANCESTORS

from .spool import gather, release, row_chunks, take

__all__ = ["LexicalCases", "cases_of_page", "vocabulary", "Bags", "pool_cases"]


@dataclass
class LexicalCases:
    """Token buckets of many pages and, per case, the token ranges of its fields."""

    text: np.ndarray  # int64 buckets of every page's words, page after page
    attr: np.ndarray  # int64 buckets of every page's attribute tokens
    text_range: np.ndarray  # int64 (cases, 2): the case's words
    attr_range: np.ndarray  # int64 (cases, 1 + ANCESTORS, 2): own tokens, then each ancestor's
    page_range: np.ndarray  # int64 (cases, 2): the words of the case's page

    def __len__(self) -> int:
        return len(self.text_range)

    def subset(self, index: np.ndarray) -> LexicalCases:
        """The cases at ``index`` (the token arrays are shared; spooled ranges go to a new
        spooled file, :func:`training.spool.take`)."""
        return LexicalCases(self.text, self.attr, take(self.text_range, index),
                            take(self.attr_range, index), take(self.page_range, index))

    @classmethod
    def concat(cls, parts: Sequence[LexicalCases]) -> LexicalCases:
        """The cases of ``parts`` one after another, their ranges moved onto the joined
        token arrays."""
        text_at = np.cumsum([0] + [len(p.text) for p in parts])
        attr_at = np.cumsum([0] + [len(p.attr) for p in parts])
        return cls(
            text=np.concatenate([p.text for p in parts]) if parts else np.zeros(0, np.int64),
            attr=np.concatenate([p.attr for p in parts]) if parts else np.zeros(0, np.int64),
            text_range=np.concatenate([p.text_range + t for p, t in zip(parts, text_at)])
            if parts else np.zeros((0, 2), np.int64),
            attr_range=np.concatenate([p.attr_range + a for p, a in zip(parts, attr_at)])
            if parts else np.zeros((0, 1 + ANCESTORS, 2), np.int64),
            page_range=np.concatenate([p.page_range + t for p, t in zip(parts, text_at)])
            if parts else np.zeros((0, 2), np.int64))

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name, for a .npz file."""
        return {"lexical_text": self.text, "lexical_attr": self.attr,
                "lexical_text_range": self.text_range, "lexical_attr_range": self.attr_range,
                "lexical_page_range": self.page_range}

    @classmethod
    def from_arrays(cls, data) -> LexicalCases | None:
        """The cases :meth:`arrays` wrote (None when ``data`` has none)."""
        if "lexical_text" not in data:
            return None
        return cls(data["lexical_text"], data["lexical_attr"], data["lexical_text_range"],
                   data["lexical_attr_range"], data["lexical_page_range"])


def cases_of_page(inputs: LexicalInputs) -> LexicalCases:
    """Every element of one page as a case: the ranges of its fields."""
    own = np.stack([inputs.attr_start, inputs.attr_end], axis=1)
    ranges = np.zeros((len(inputs), 1 + ANCESTORS, 2), dtype=np.int64)
    ranges[:, 0] = own
    for k in range(ANCESTORS):
        ancestor = inputs.ancestors[:, k]
        has = ancestor >= 0
        ranges[has, 1 + k] = own[ancestor[has]]
    text_range = np.stack([inputs.text_start, inputs.text_end], axis=1)
    page_range = np.repeat(text_range[:1], len(text_range), axis=0)  # the body's words
    return LexicalCases(inputs.text.astype(np.int64), inputs.attr.astype(np.int64),
                        text_range, ranges, page_range)


def _page_spans(ranges: np.ndarray, pages: np.ndarray) -> dict[str, tuple[int, int]]:
    """Per page, the span of token positions its cases' ranges cover (read a chunk of cases
    at a time: spooled ranges stay out of memory)."""
    names, codes = np.unique(pages, return_inverse=True)
    codes = codes.reshape(-1)
    none = np.iinfo(np.int64).max  # no token yet
    low = np.full(len(names), none, dtype=np.int64)
    high = np.full(len(names), -1, dtype=np.int64)
    for part in row_chunks(len(ranges)):
        chunk = np.asarray(ranges[part], dtype=np.int64)
        release(ranges)
        starts = chunk[..., 0].reshape(len(chunk), -1)
        ends = chunk[..., 1].reshape(len(chunk), -1)
        nonempty = ends > starts
        np.minimum.at(low, codes[part], np.where(nonempty, starts, none).min(axis=1))
        np.maximum.at(high, codes[part], np.where(nonempty, ends, -1).max(axis=1))
    return {str(name): (int(lo), int(hi)) for name, lo, hi in zip(names, low, high) if hi > lo}


def _site_counts(tokens: np.ndarray, spans: dict[str, tuple[int, int]],
                 site_of_page: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct buckets of the spans' tokens and on how many sites each occurs."""
    sites = {site: k for k, site in enumerate(sorted(set(site_of_page.values())))}
    pairs = [np.unique(tokens[lo:hi]) + (sites[site_of_page[page]] << 32)
             for page, (lo, hi) in spans.items()]
    if not pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    unique_pairs = np.unique(np.concatenate(pairs))
    return np.unique(unique_pairs & 0xFFFFFFFF, return_counts=True)


def vocabulary(lexical: LexicalCases, sites: np.ndarray, pages: np.ndarray,
               min_sites: int) -> tuple[np.ndarray, np.ndarray]:
    """The word and attribute buckets (sorted) of the cases that occur on at least
    ``min_sites`` distinct sites."""
    keys, first = np.unique(pages, return_index=True)
    site_of_page = dict(zip(keys.tolist(), sites[first].tolist()))
    out = []
    for tokens, ranges in ((lexical.text, lexical.text_range[:, None, :]),
                           (lexical.attr, lexical.attr_range)):
        buckets, counts = _site_counts(tokens, _page_spans(ranges, pages), site_of_page)
        out.append(buckets[counts >= min_sites].astype(np.int64))
    return out[0], out[1]


def _rows(buckets: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The row of each token in ``buckets`` (sorted), −1 for a bucket not in it."""
    if not len(buckets):
        return np.full(len(tokens), -1, dtype=np.int64)
    row = np.minimum(np.searchsorted(buckets, tokens), len(buckets) - 1)
    return np.where(buckets[row] == tokens, row, -1)


class Bags:
    """Embedding-bag inputs of the fields for any set of cases, over the known tokens
    only (a field's mean is over the tokens the vocabulary keeps, as when cleaning)."""

    def __init__(self, lexical: LexicalCases, text_buckets: np.ndarray,
                 attr_buckets: np.ndarray, page_sample: int | None = None,
                 seed: int = 0) -> None:
        #: In training, a page's field is the mean of ``page_sample`` of its known words drawn
        #: at random (with replacement) when it has more: the same mean on average, without
        #: gathering a page's every word for each batch it is in.
        self.page_sample = page_sample
        self.rng = np.random.default_rng(seed)
        self.ranges = []
        self.tokens = []
        for tokens, buckets in ((lexical.text, text_buckets), (lexical.attr, attr_buckets)):
            row = _rows(buckets, tokens)
            known = row >= 0
            # Position → known tokens before it: a range of positions becomes a range of the
            # compacted known tokens.
            # int32 while the case base's tokens count fits: these two arrays span every
            # token of every page (tens of millions at a few thousand pages).
            width = np.int32 if len(tokens) < 2**31 - 1 else np.int64
            before = np.zeros(len(tokens) + 1, dtype=width)
            np.cumsum(known, out=before[1:])
            self.tokens.append(row[known].astype(width))
            self.ranges.append(before)
        self.lexical = lexical
        release(lexical.text)
        release(lexical.attr)

    def _fields(self, index: np.ndarray) -> list[np.ndarray]:
        """Per field, the ranges of known tokens of the cases ``index`` (cases × k × 2): the
        own attribute tokens, the ancestors', the head words, the words, the page's words.
        Computed for a batch's cases only, so that a case base's ranges (spooled, when it is
        larger than memory) are never all read at once."""
        text_before, attr_before = self.ranges
        lexical = self.lexical
        attr, text, page = (gather(lexical.attr_range, index),
                            gather(lexical.text_range, index), gather(lexical.page_range, index))
        start, end = text[:, 0], text[:, 1]
        head = np.minimum(start + HEAD_WORDS, end)
        return [attr_before[attr[:, :1]], attr_before[attr[:, 1:]],
                text_before[np.stack([start, head], axis=1)][:, None, :],
                text_before[text][:, None, :], text_before[page][:, None, :]]

    def batch(self, index: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """Per field, (flat token rows, offset of each bag, the bag of each case) for the cases
        ``index``. The page field's bag is made once per page of the batch (its cases share
        it; a bag per case would gather a page's words for each of its subtrees), the others
        once per case (the bag of each case: None)."""
        out = []
        for k, chosen in enumerate(self._fields(np.asarray(index))):
            tokens = self.tokens[0 if k >= 2 else 1]
            inverse = None
            if FIELDS[k] == "page":
                chosen, inverse = np.unique(chosen[:, 0, :], axis=0, return_inverse=True)
                chosen, inverse = chosen[:, None, :], inverse.reshape(-1)
                if self.page_sample:
                    out.append((*self._sampled(tokens, chosen[:, 0, :]), inverse))
                    continue
            flat, offsets = _flatten(chosen)
            out.append((tokens[flat].astype(np.int64), offsets, inverse))
        return out

    def _sampled(self, tokens: np.ndarray, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bags of the ranges (bags × 2), each of its words or of ``page_sample`` of them."""
        lengths = ranges[:, 1] - ranges[:, 0]
        long = lengths > self.page_sample
        sizes = np.where(long, self.page_sample, lengths)
        offsets = np.cumsum(sizes) - sizes
        positions = np.empty(int(sizes.sum()), dtype=np.int64)
        short_flat, short_offsets = _flatten(ranges[~long][:, None, :])
        at = np.flatnonzero(~long)
        positions[np.repeat(offsets[at] - short_offsets, sizes[at])
                  + np.arange(len(short_flat))] = short_flat
        drawn = ranges[long, :1] + (self.rng.random((int(long.sum()), self.page_sample))
                                    * lengths[long, None]).astype(np.int64)
        positions[(offsets[long, None] + np.arange(self.page_sample)).reshape(-1)] = (
            drawn.reshape(-1))
        return tokens[positions].astype(np.int64), offsets


def _flatten(ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of a batch's ranges (cases × k × 2) one after another, and where each case's
    positions start."""
    lengths = (ranges[..., 1] - ranges[..., 0]).reshape(-1)
    starts = ranges[..., 0].reshape(-1)
    total = int(lengths.sum())
    run_at = np.cumsum(lengths) - lengths
    flat = np.repeat(starts - run_at, lengths) + np.arange(total, dtype=np.int64)
    per_case = lengths.reshape(ranges.shape[:2]).sum(axis=1)  # (no rows: an empty sum)
    return flat, np.cumsum(per_case) - per_case


#: Cases pooled at a time by :func:`pool_cases`: a body's bag holds all its page's words, so
#: a chunk's gathered vectors stay in the hundreds of megabytes.
POOL_CHUNK = 8192


def pool_cases(lexicon: Lexicon, lexical: LexicalCases, rows: np.ndarray | None = None
               ) -> np.ndarray:
    """The pooled fields (float32, cases × 4·dim) of the cases ``rows`` (all by default), as
    :meth:`noisecbr.features.lexical.Lexicon.pool` computes them on a page."""
    rows = np.arange(len(lexical)) if rows is None else np.asarray(rows)
    bags = Bags(lexical, lexicon.text_buckets, lexicon.attr_buckets)
    dim = lexicon.dim
    tables = [lexicon.attr_vectors.astype(np.float64), lexicon.text_vectors.astype(np.float64)]
    out = np.zeros((len(rows), len(FIELDS) * dim), dtype=np.float32)
    for at in range(0, len(rows), POOL_CHUNK):
        chunk = rows[at:at + POOL_CHUNK]
        for k, (tokens, offsets, inverse) in enumerate(bags.batch(chunk)):
            counts = np.diff(np.append(offsets, len(tokens)))
            sums = np.zeros((len(offsets), dim))
            has = counts > 0
            if has.any():
                sums[has] = np.add.reduceat(tables[k >= 2][tokens], offsets[has], axis=0)
            means = sums / np.maximum(counts, 1)[:, None]
            out[at:at + len(chunk), k * dim:(k + 1) * dim] = (
                means if inverse is None else means[inverse])
    return out
