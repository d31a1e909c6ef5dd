"""What the network is fed in training: the normalised columns of any rows and, for a preset with
lexical fields, the rows' embedding bags; and the torch module that learns the bucket vectors
with the MLP.

torch is imported when a network is built or fed, never at import time (the ``runs`` and
``train --help`` commands work without it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from noisecbr.features.lexical import FIELDS, Lexicon

from .lexicon import Bags, vocabulary
from .spool import gather

__all__ = ["Feed", "LexicalSetup", "LexicalNetwork", "lexical_feeds", "is_lexical",
           "PAGE_SAMPLE"]

#: Words drawn from a page for its page field in a training batch (:class:`Bags`): a page has
#: some 3 000; the mean of 256 of them differs from theirs by a few hundredths.
PAGE_SAMPLE = 256


@dataclass
class LexicalSetup:
    """The buckets a network learns vectors for, and their length."""

    text_buckets: np.ndarray
    attr_buckets: np.ndarray
    dim: int

    @property
    def width(self) -> int:
        """The inputs the pooled fields add to the MLP's."""
        return len(FIELDS) * self.dim


class Feed:
    """The network's inputs of any rows: X's rows (its ``columns``, less ``mean``, over
    ``scale``, then ``kinds``' rows when given) and, with lexical fields, their bags. The rows
    are gathered a batch at a time, so X may be spooled (:mod:`training.spool`)."""

    def __init__(self, X: np.ndarray, bags: Bags | None = None, *,
                 columns: np.ndarray | None = None, mean: np.ndarray | None = None,
                 scale: np.ndarray | None = None, kinds: np.ndarray | None = None,
                 encoding=None) -> None:
        self.X, self.bags, self.kinds = X, bags, kinds
        self.columns, self.mean, self.scale = columns, mean, scale
        #: The columns' piecewise-linear encoding (:mod:`noisecbr.score.encoding`), applied
        #: in place of the normalisation.
        self.encoding = encoding

    def __len__(self) -> int:
        return len(self.X)

    def rows(self, index: np.ndarray) -> np.ndarray:
        """The network's dense inputs (float32) of the rows ``index``."""
        x = gather(self.X, index)
        if self.columns is not None:
            x = x[:, self.columns]
        if self.encoding is not None:
            x = self.encoding(x)
        elif self.mean is not None:
            x = (x - self.mean) / self.scale
        if self.kinds is not None:
            x = np.concatenate([x, self.kinds[index]], axis=1)
        return np.ascontiguousarray(x, dtype=np.float32)

    def __call__(self, net, index: np.ndarray):
        """``net``'s logits for the rows ``index``."""
        import torch

        index = np.asarray(index, dtype=np.int64)
        x = torch.from_numpy(self.rows(index))
        if self.bags is None:
            return net(x)
        fields = [(torch.from_numpy(tokens), torch.from_numpy(offsets),
                   None if inverse is None else torch.from_numpy(inverse))
                  for tokens, offsets, inverse in self.bags.batch(index)]
        return net(x, fields)


def is_lexical(net) -> bool:
    """Whether ``net`` is a :func:`LexicalNetwork`."""
    return getattr(net, "is_lexical", False)


@functools.cache
def _network_class():
    import torch
    import torch.nn as nn

    class _LexicalNetwork(nn.Module):
        """An MLP whose inputs are the dense columns and the four pooled fields."""

        is_lexical = True

        def __init__(self, mlp, setup: LexicalSetup) -> None:
            super().__init__()
            self.mlp, self.setup = mlp, setup
            self.attr = nn.EmbeddingBag(max(len(setup.attr_buckets), 1), setup.dim, mode="mean")
            self.text = nn.EmbeddingBag(max(len(setup.text_buckets), 1), setup.dim, mode="mean")
            # Small vectors to start: a bucket that is rarely seen stays near nothing.
            nn.init.normal_(self.attr.weight, std=0.1)
            nn.init.normal_(self.text.weight, std=0.1)

        def forward(self, x, fields):
            pooled = []
            for k, (tokens, offsets, inverse) in enumerate(fields):
                bag = (self.attr if k < 2 else self.text)(tokens, offsets)
                pooled.append(bag if inverse is None else bag[inverse])
            return self.mlp(torch.cat([x, *pooled], dim=1))

        def embeddings(self):
            return [self.attr.weight, self.text.weight]

        def lexicon(self) -> Lexicon:
            setup = self.setup

            def rows(table, buckets):
                return table.weight.detach().cpu().numpy()[:len(buckets)].astype(np.float32)

            return Lexicon(setup.text_buckets.astype(np.int64),
                           rows(self.text, setup.text_buckets),
                           setup.attr_buckets.astype(np.int64),
                           rows(self.attr, setup.attr_buckets))

    return _LexicalNetwork


def LexicalNetwork(mlp, setup: LexicalSetup):  # noqa: N802 - builds a module, as a class would
    """The torch module of an MLP with lexical fields (:data:`setup`'s buckets)."""
    return _network_class()(mlp, setup)


def lexical_feeds(preset, inputs, train, val) -> tuple[Feed, Feed, LexicalSetup | None]:
    """The training and validation feeds of a fit (``inputs``: the columns and normalisation
    of :func:`training.train._normalise`), and the lexical setup (None when the preset has no
    lexical fields; ValueError when it has but the data does not)."""
    dense = {"columns": inputs.columns, "mean": inputs.mean, "scale": inputs.scale,
             "encoding": inputs.encoding}
    kinds = (train.kinds, val.kinds) if preset.kind_inputs else (None, None)
    if not preset.lexical_dim:
        return (Feed(train.X, kinds=kinds[0], **dense), Feed(val.X, kinds=kinds[1], **dense),
                None)
    if train.lexical is None or val.lexical is None:
        raise ValueError(f"preset {preset.name!r} learns lexical fields, but the cases have "
                         "no lexical inputs (build them with training.sources.from_pages or "
                         "training.stored.from_casebase)")
    text_buckets, attr_buckets = vocabulary(train.lexical, train.sites, train.pages,
                                            preset.lexical_min_sites)
    setup = LexicalSetup(text_buckets, attr_buckets, preset.lexical_dim)
    return (Feed(train.X, Bags(train.lexical, text_buckets, attr_buckets, PAGE_SAMPLE),
                 kinds=kinds[0], **dense),
            Feed(val.X, Bags(val.lexical, text_buckets, attr_buckets), kinds=kinds[1],
                 **dense), setup)
