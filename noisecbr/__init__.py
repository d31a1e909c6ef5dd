"""noisecbr — a case-based neural web page cleaner.

Removes the noise subtrees of a page (navigation, ads, cookie banners, footers, "related" lists)
with a backpropagation network trained on a case base of labelled DOM subtrees.

>>> import noisecbr
>>> result = noisecbr.clean(html, url=url)    # doctest: +SKIP
>>> result.text                                # the main content  # doctest: +SKIP
>>> result = noisecbr.fetch_and_clean("https://example.org/")  # doctest: +SKIP

The pipeline's stages, one at a time (:mod:`noisecbr.pipeline`):

>>> cleaner = noisecbr.Cleaner()
>>> page = cleaner.prepare(html, url=url)         # doctest: +SKIP
>>> decisions = cleaner.decide(page)             # doctest: +SKIP
>>> result = cleaner.render(page, decisions)      # doctest: +SKIP
"""

from __future__ import annotations

from .cleaner import Cleaner, clean, default_model
from .decide.walk import Thresholds
from .errors import ModelError, NoisecbrError, SchemaMismatchError
from .pipeline import Decisions, Page
from .prepare.tidy import (
    BinaryInputError,
    EmptyInputError,
    InputError,
    InputTooLargeError,
    NotHTMLError,
    WARCInputError,
    tidy,
)
from .result import LABELS, CleanResult, Decision
from .score.artifact import load_model, save_model
from .score.model import Model
from .seeds.smoothing import isotonic_smooth
from .settings import Settings
from .site.memory import SiteMemory
from .web.fetch import Fetcher, FetchError, RobotsDeniedError, fetch_and_clean

__version__ = "0.1.0"

__all__ = [
    "LABELS",
    "BinaryInputError",
    "CleanResult",
    "Cleaner",
    "CompressedStructureTree",
    "Decision",
    "Decisions",
    "EmptyInputError",
    "FetchError",
    "Fetcher",
    "InputError",
    "InputTooLargeError",
    "Model",
    "ModelError",
    "NoisecbrError",
    "NotHTMLError",
    "Page",
    "RobotsDeniedError",
    "SchemaMismatchError",
    "Settings",
    "SiteMemory",
    "SiteStyleTree",
    "Thresholds",
    "WARCInputError",
    "clean",
    "default_model",
    "fetch_and_clean",
    "isotonic_smooth",
    "load_model",
    "save_model",
    "tidy",
]


def __getattr__(name: str):
    # The site-level methods are imported on first use: most users never need them.
    if name in ("SiteStyleTree", "CompressedStructureTree"):
        from . import seeds

        return getattr(seeds, name)
    raise AttributeError(f"module 'noisecbr' has no attribute {name!r}")
