"""The case base: a SQL database of labelled subtrees (SQLite by default, any SQLAlchemy URL).

    cb = CaseBase.open()                       # NOISECBR_DB, else the per-user SQLite file
    X, y, sites, page_ids, case_ids = cb.load_arrays()
    for case in cb.iter_cases(label="noise", site="example.com"): ...
    cb.relabel(42, "data", note="caption, not an ad")
    cb.revectorize()                           # vectors of older schemas → VECTOR_SCHEMA

:class:`CaseBase` is composed of one mixin per job, each in a module of its own:

``casebase.connection``  :class:`~casebase.connection.ConnectionMixin`: the engine and its
                         SQLite settings, ``open`` and the Alembic migrations, the write and
                         read transactions (``session``, ``reading``), ``close``
``casebase.queries``     :class:`~casebase.queries.QueriesMixin`: reading cases
                         (``iter_cases``, ``list_cases``, ``get_case``…, ``stats``)
``casebase.curation``    :class:`~casebase.curation.CurationMixin`: changing them (``add_page``,
                         ``relabel``, ``delete_cases``, ``dedupe``, ``revectorize``)
``casebase.arrays``      :class:`~casebase.arrays.ArraysMixin`: training arrays
                         (``load_arrays``, ``load_counts``)

The three job mixins each build on ``ConnectionMixin`` (its engine and transactions) and on
nothing else, so a job is read in its own module. This module keeps the names callers import
from it (see ``__all__``).
"""

from __future__ import annotations

from .arrays import ArraysMixin, CaseArrays
from .connection import DEFAULT_DB_NAME, default_url, normalize_url, writer
from .curation import CurationMixin, RevectorizeReport
from .errors import CaseBaseError, NotFoundError
from .queries import CaseRecord, QueriesMixin

__all__ = [
    "DEFAULT_DB_NAME",
    "CaseArrays",
    "CaseBase",
    "CaseBaseError",
    "CaseRecord",
    "NotFoundError",
    "RevectorizeReport",
    "default_url",
    "normalize_url",
    "writer",
]


# No two mixins define the same name, so the order of the bases decides nothing; each brings
# ConnectionMixin (its __init__ and open) along.
class CaseBase(QueriesMixin, CurationMixin, ArraysMixin):
    """A case base on one database. Open with :meth:`open`; thread-safe like an Engine."""
