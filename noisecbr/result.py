"""The result of cleaning a page: kept HTML, main-content text and the decisions that led there."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["DATA", "LABELS", "MIXTURE", "NOISE", "Decision", "CleanResult",
           "named_probabilities"]

#: Class order of every model output and every one-hot target: [1 0 0] noise, [0 1 0] data,
#: [0 0 1] mixture, as in the paper.
LABELS: tuple[str, str, str] = ("noise", "data", "mixture")

#: Each class's index in LABELS: its column in a model's output and its value in a label array.
NOISE, DATA, MIXTURE = (LABELS.index(name) for name in ("noise", "data", "mixture"))


def named_probabilities(probabilities: Sequence[float]) -> dict[str, float]:
    """Class probabilities by class name, for output that must say which number is which.

    >>> named_probabilities((0.9, 0.1, 0.0))
    {'noise': 0.9, 'data': 0.1, 'mixture': 0.0}
    """
    return dict(zip(LABELS, probabilities))


@dataclass(frozen=True)
class Decision:
    """What the cleaner decided for one subtree."""

    path: str
    tag: str
    label: str  # noise (removed) | data (kept whole) | mixture (descended into)
    probabilities: tuple[float, float, float]  # in LABELS order
    text_length: int
    #: "model" (the network's scores decided) or "memory" (stored cases of the page's site with
    #: the same markup agreed on the label; see :mod:`noisecbr.memory`)
    source: str = "model"
    #: for a decision by memory: ids of (up to 5) stored cases of the site with the same markup
    #: (``casebase show ID``), when the memory was read from a case base
    cases: tuple[int, ...] = ()


class CleanResult:
    """A cleaned page: ``.html`` (valid HTML), ``.text`` (main content) and ``.decisions``.

    The HTML and the decisions are built on first access: most callers want only the text, and
    serialising the page or a thousand decisions' paths costs a tenth of the cleaning.
    """

    def __init__(
        self,
        html: str | Callable[[], str],
        text: str,
        decisions: list[Decision] | Callable[[], list[Decision]] | None = None,
        url: str | None = None,
    ) -> None:
        self._html = html
        self.text = text
        self.url = url
        self._decisions = decisions if decisions is not None else []

    @property
    def html(self) -> str:
        if callable(self._html):
            self._html = self._html()
        return self._html

    @property
    def decisions(self) -> list[Decision]:
        if callable(self._decisions):
            self._decisions = self._decisions()
        return self._decisions

    def __repr__(self) -> str:
        return f"CleanResult(url={self.url!r}, text={self.text[:60]!r}…)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "text": self.text,
            "html": self.html,
            # Probabilities by class name: a bare list would not say which class each is for.
            "decisions": [{**asdict(decision),
                           "probabilities": named_probabilities(decision.probabilities)}
                          for decision in self.decisions],
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)
