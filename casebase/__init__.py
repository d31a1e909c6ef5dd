"""The case base: labelled subtrees of web pages in a SQL database, and the tools to build it.

``casebase.models``     SQLAlchemy models (sites, pages, cases, label history)
``casebase.store``      :class:`~casebase.store.CaseBase`: open/migrate, read, relabel, dedupe,
                        bulk-load training arrays (``load_arrays``)
``casebase.importer``   pages → cases (tidy, element table, vectors, labels) and bulk inserts
``casebase.labelling``  ground truth → noise / data / mixture labels per subtree
``casebase.transfer``   lossless JSON Lines export / import
``casebase.cli``        the ``casebase`` command
``casebase.migrations`` the Alembic migrations (the repository's ``alembic/`` folder)
"""
