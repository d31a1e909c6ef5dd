"""The prepared page: its tidied ``<body>``, element table and URL, and what is read off it
once, when first asked for (metadata, headline, kind evidence, convention).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from lxml import etree

from ..decide.convention import declares_article, page_mode, prose_share
from ..score.kind import declared_url, nested_types, one_hot, page_evidence
from ..score.model import Model
from .metadata import (
    PageMetadata,
    declared_types,
    headline_element,
    iso_date,
    json_ld,
    page_elements,
    page_metadata,
    shown_title,
)
from .strings import printable
from .subtrees import ElementTable, build_table
from .tidy import Parser, tidy


@dataclasses.dataclass(frozen=True, eq=False)
class Page:
    """A page ready to be decided: its tidied ``<body>``, its element table and URL; its
    metadata and headline are read once, when first asked for. ``declared``: whether the
    page's head declares it an article, for a page whose head is not in the tree (a stored
    page keeps its body only); None: read from the page."""

    body: etree._Element
    table: ElementTable
    url: str | None = None
    declared: bool | None = None
    #: The page's kind when the caller knows it (:data:`noisecbr.score.kind.KINDS`): it then
    #: replaces the kind model's probabilities.
    page_type: str | None = None

    def __post_init__(self) -> None:
        if self.page_type is not None:
            one_hot(self.page_type)  # ValueError for a kind that is not one

    @functools.cached_property
    def evidence(self) -> np.ndarray:
        """The page's evidence of its kind (:func:`noisecbr.score.kind.page_evidence`): what it
        declares, its URL (or the one its head declares), its structure and words."""
        og_type, _ = declared_types(self._elements, self._json_ld)
        root = self.body.getroottree().getroot()
        metadata = self.metadata
        return page_evidence(self.table, self.url or declared_url(root), og_type,
                             nested_types(self._json_ld),
                             metadata.title, dated=metadata.date is not None,
                             authored=metadata.author is not None)

    def kinds(self, model: Model) -> np.ndarray | None:
        """The page's kind probabilities (:data:`noisecbr.score.kind.KINDS` order): its
        ``page_type``'s when given, else the ``model``'s kind model's (None without one)."""
        if self.page_type is not None:
            return one_hot(self.page_type)
        return self.read_kinds(model)

    def read_kinds(self, model: Model) -> np.ndarray | None:
        """The kind probabilities the ``model``'s kind model reads off the page, whatever kind
        the caller gave (None without a kind model); found once per model."""
        if model.kind_model is None:
            return None
        found = self._kinds.get(id(model))
        if found is None or found[0] is not model:
            found = self._kinds[id(model)] = (model,
                                              model.kind_model.predict_proba(self.evidence))
        return found[1]

    @functools.cached_property
    def _kinds(self) -> dict[int, tuple[Model, np.ndarray]]:
        return {}

    @functools.cached_property
    def metadata(self) -> PageMetadata:
        """The page's metadata, as the result holds it (no control characters)."""
        return self._read_metadata[0]

    @functools.cached_property
    def shown_metadata(self) -> PageMetadata:
        """The metadata a result holds: :attr:`metadata` (what the page declares, which its
        kind's evidence and its headline are read from) with the title as the page shows it
        (:func:`noisecbr.prepare.metadata.shown_title`)."""
        declared, headline = self._read_metadata
        title = shown_title(self._elements, headline, declared.title, declared.site_name)
        return dataclasses.replace(declared, title=printable(title) if title else None,
                                   date=iso_date(declared.date))

    @functools.cached_property
    def headline(self) -> int | None:
        """The table index of the page's headline element (taken out of the text), if any."""
        return index_of(self.table, self._read_metadata[1])

    @functools.cached_property
    def mode(self) -> str:
        """The walk's mode of the page's convention, for ``favor="auto"``
        (:func:`noisecbr.decide.convention.page_mode`: ``precision`` for a declared article,
        ``recall`` for a page with little prose, else ``balanced``)."""
        return page_mode(self.declares_article, prose_share(self.table))

    @functools.cached_property
    def declares_article(self) -> bool:
        """Whether the page declares itself an article (``og:type``, a JSON-LD article type:
        :func:`noisecbr.decide.convention.declares_article`), or ``declared`` when given."""
        if self.declared is not None:
            return self.declared
        return declares_article(*declared_types(self._elements, self._json_ld))

    @functools.cached_property
    def _elements(self) -> dict[str, list[etree._Element]]:
        # The body's elements of the tags read come from the table: only the head is walked.
        return page_elements(self.body, self.table.elements, self.table.tags)

    @functools.cached_property
    def _json_ld(self) -> list[dict]:
        return json_ld(self._elements["script"])

    @functools.cached_property
    def _read_metadata(self) -> tuple[PageMetadata, etree._Element | None]:
        metadata = xml_safe_metadata(page_metadata(self.body, self._elements, self._json_ld))
        return metadata, headline_element(self.body, metadata.title, self._elements)


def prepare(html: str | bytes, *, url: str | None = None, parser: Parser = "lxml",
            max_bytes: int | None = None, max_elements: int | None = None,
            page_type: str | None = None) -> Page:
    """The page of ``html``: tidied (:func:`noisecbr.prepare.tidy.tidy`, which raises
    :class:`~noisecbr.prepare.tidy.InputError` for input that is not HTML) and tabulated;
    ``page_type``: its kind, when the caller knows it (ValueError for one that is not a kind
    of :data:`noisecbr.score.kind.KINDS`)."""
    if page_type is not None:
        one_hot(page_type)  # refused before the page is parsed
    limits = {} if max_bytes is None else {"max_bytes": max_bytes}
    body = tidy(html, parser=parser, max_elements=max_elements, **limits)
    return Page(body, build_table(body), url, page_type=page_type)




def index_of(table: ElementTable, element: etree._Element | None) -> int | None:
    """The table index of ``element`` (None for None)."""
    if element is None:
        return None
    try:
        return table.elements.index(element)  # lxml elements compare by identity: a C scan
    except ValueError:
        return None


def xml_safe_metadata(metadata: PageMetadata) -> PageMetadata:
    """``metadata`` without control characters (:func:`noisecbr.prepare.strings.printable`, which
    also drops what lxml refuses): the page's own text, or JSON-LD's ``\\u0001`` escapes, may
    hold them, and the title is written into the cleaned HTML and every field into the JSON
    output."""
    return dataclasses.replace(metadata, **{
        field.name: printable(value) or None
        for field in dataclasses.fields(metadata)
        if isinstance(value := getattr(metadata, field.name), str)})
