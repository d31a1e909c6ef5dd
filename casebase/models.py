"""The case base schema (SQLAlchemy 2.0 typed ORM).

``Site``          one row per host (``www.`` stripped, see :func:`noisecbr.eval.datasets.site_of`)
``Page``          a page, its tidied HTML stored once (zlib-compressed UTF-8), unique per
                  (source, sha256 of the raw bytes), with what its cases derive from it: every
                  element's vector, path, tag and text, stored once (:mod:`casebase.derived`)
``Case``          one candidate subtree of a page, by reference: its page, the position of its
                  element, its label and label source (its path, tag, text and vector are the
                  page's, at that position)
``LabelHistory``  every change of a case's label after it was created

Enumerations are stored as short strings guarded by CHECK constraints, so the database stays
readable from any SQL client. Every change here needs an Alembic migration in ``alembic/versions``
(``tests/test_casebase_migrations.py`` fails when models and migrations disagree).
"""

from __future__ import annotations

import zlib
from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from noisecbr.result import LABELS

__all__ = [
    "LABELS",
    "LABEL_SOURCES",
    "MAX_TEXT_CHARS",
    "Base",
    "Case",
    "LabelHistory",
    "Page",
    "Site",
    "compress_html",
    "decompress_html",
]

#: Where a label came from: the dataset's ground truth, a site template (boilerplate shared by
#: the pages of a site), a person, or a model's prediction.
LABEL_SOURCES: tuple[str, ...] = ("ground_truth", "site_template", "human", "model")

#: A case's text is the subtree's text (its text pieces joined by one space, whitespace
#: normalised), cut to this many characters: enough to recognise and search a subtree, while the
#: body's text (the whole page) is not held again for every ancestor of every paragraph.
MAX_TEXT_CHARS = 2000

#: Length of a host name (RFC 1035) and of a dataset name / external id.
_HOST_CHARS = 255
_NAME_CHARS = 200

_NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    """Declarative base of the case base's tables (constraint names follow one convention)."""

    metadata = MetaData(naming_convention=_NAMING)


class Site(Base):
    """A web site (by host without ``www.``): its pages share templates."""

    __tablename__ = "sites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(_HOST_CHARS), unique=True)

    pages: Mapped[list[Page]] = relationship(back_populates="site", passive_deletes=True)

    def __repr__(self) -> str:
        return f"Site(id={self.id}, host={self.host!r})"


class Page(Base):
    """A stored page: its tidied body (compressed), where it came from, its ground truth if any."""

    __tablename__ = "pages"
    __table_args__ = (
        UniqueConstraint("source", "content_hash", name="uq_pages_source_content_hash"),
        Index("ix_pages_site_id", "site_id"),
        # Which pages are of another vector schema, counted without reading their blobs.
        Index("ix_pages_vector_schema", "vector_schema"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site_id: Mapped[int] = mapped_column(ForeignKey("sites.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text, default="")
    #: The dataset's directory name, or "import" for pages added one at a time.
    source: Mapped[str] = mapped_column(String(_NAME_CHARS))
    #: The page's id in its source (the dataset's page id), if it has one.
    external_id: Mapped[str | None] = mapped_column(String(_NAME_CHARS))
    #: sha256 (hex) of the raw bytes as read, before tidying.
    content_hash: Mapped[str] = mapped_column(String(64))
    #: The parser that tidied the page: case paths are paths in that parser's tree.
    parser: Mapped[str] = mapped_column(String(16), default="lxml")
    #: ``lxml.html.tostring(body, encoding="utf-8")`` of the tidied body, zlib-compressed.
    html: Mapped[bytes] = mapped_column(LargeBinary)
    #: The ground-truth main content, when the page came from a labelled dataset.
    truth: Mapped[str | None] = mapped_column(Text)
    #: Whether the page's head declared it an article (``og:type``, a JSON-LD article type):
    #: the stored body keeps no head, and a declared article is walked in the precision mode
    #: (:mod:`noisecbr.decide.convention`). NULL for pages stored before revision 0004.
    declared_article: Mapped[bool | None] = mapped_column(Boolean)
    #: The vector schema of ``vectors`` (:data:`noisecbr.features.VECTOR_SCHEMA` when stored).
    vector_schema: Mapped[int | None] = mapped_column(Integer)
    #: Every element's vector, one compressed matrix (:func:`casebase.derived.encode_vectors`);
    #: NULL for a page whose HTML could not be read back.
    vectors: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Every element's path, tag and text (:func:`casebase.derived.encode_outline`); NULL as
    #: ``vectors``.
    outline: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime, server_default=func.current_timestamp())

    site: Mapped[Site] = relationship(back_populates="pages")
    cases: Mapped[list[Case]] = relationship(back_populates="page", passive_deletes=True)

    @property
    def body_html(self) -> str:
        """The stored tidied body as HTML text."""
        return decompress_html(self.html)

    def __repr__(self) -> str:
        return f"Page(id={self.id}, source={self.source!r}, url={self.url!r})"


class Case(Base):
    """A labelled subtree of a stored page, by reference: page, position, label and source."""

    __tablename__ = "cases"
    __table_args__ = (
        CheckConstraint(_one_of("label", LABELS), name="label"),
        CheckConstraint(_one_of("label_source", LABEL_SOURCES), name="label_source"),
        CheckConstraint("count >= 1", name="count_positive"),
        # A page's cases, and a page's case at a position: one index serves both.
        Index("ix_cases_page_id_position", "page_id", "position"),
        # Ids only grow, never reused after a deletion (PostgreSQL's sequences never reuse
        # one): the nearest-case index tells new cases from old by their ids.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    page_id: Mapped[int] = mapped_column(ForeignKey("pages.id", ondelete="CASCADE"))
    #: The element's index in the page's element table, in document order (0 = body): its
    #: path, tag, text and vector are the page's at this position (``Page.outline``,
    #: ``Page.vectors``; a position after the page's elements is an extra row, a case kept
    #: with its own path, tag, text and vector: :func:`casebase.derived.with_extras`).
    position: Mapped[int] = mapped_column(Integer, default=0)
    label: Mapped[str] = mapped_column(String(8))
    label_source: Mapped[str] = mapped_column(String(16))
    #: How many identical cases this one stands for (``casebase dedupe`` sums them).
    count: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    #: NULL: created with its page (``Page.created_at``); set for a case added to a stored page.
    created_at: Mapped[datetime | None] = mapped_column(DateTime)
    #: NULL: not changed since it was created; set by a relabel, a dedupe, revectorize moving
    #: it to its element's new position, or an import of an export (which writes it out).
    updated_at: Mapped[datetime | None] = mapped_column(
        DateTime, onupdate=func.current_timestamp())

    page: Mapped[Page] = relationship(back_populates="cases")
    history: Mapped[list[LabelHistory]] = relationship(
        back_populates="case", passive_deletes=True, order_by="LabelHistory.id"
    )

    def __repr__(self) -> str:
        return (f"Case(id={self.id}, page_id={self.page_id}, position={self.position}, "
                f"label={self.label!r})")


class LabelHistory(Base):
    """One change of a case's label: old and new label, who changed it, when and why."""

    __tablename__ = "label_history"
    __table_args__ = (
        CheckConstraint(_one_of("new_label", LABELS), name="new_label"),
        CheckConstraint(f"old_label IS NULL OR {_one_of('old_label', LABELS)}", name="old_label"),
        CheckConstraint(_one_of("source", LABEL_SOURCES), name="source"),
        Index("ix_label_history_case_id", "case_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    old_label: Mapped[str | None] = mapped_column(String(8))
    new_label: Mapped[str] = mapped_column(String(8))
    source: Mapped[str] = mapped_column(String(16))
    changed_at: Mapped[datetime] = mapped_column(DateTime, server_default=func.current_timestamp())
    note: Mapped[str | None] = mapped_column(Text)

    case: Mapped[Case] = relationship(back_populates="history")


def compress_html(html: bytes | str) -> bytes:
    """The bytes a page's HTML is stored as (zlib, level 6)."""
    if isinstance(html, str):
        html = html.encode("utf-8")
    return zlib.compress(html, 6)


def decompress_html(blob: bytes) -> str:
    """The HTML text of stored bytes (:func:`compress_html`'s inverse)."""
    return zlib.decompress(blob).decode("utf-8")
