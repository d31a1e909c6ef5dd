"""The case base: labelled subtrees of web pages in a SQL database, and the tools to build it.

``casebase.models``     SQLAlchemy models (sites, pages, cases, label history)
``casebase.store``      :class:`~casebase.store.CaseBase`, composed of the four modules below
``casebase.connection`` open, migrate, SQLite settings, write and read transactions
``casebase.queries``    read cases (``iter_cases``, ``list_cases``, ``get_case``, ``stats``…)
``casebase.curation``   add pages, relabel, delete, dedupe, revectorize
``casebase.arrays``     bulk-load training arrays (``load_arrays``, ``load_counts``)
``casebase.retain``     one page stored once and its cases by reference (``add_page``)
``casebase.importer``   a labelled dataset → cases, workers preparing pages, one writer
``casebase.site_import`` a site's pages without truth: its template's subtrees as noise
``casebase.labelling``  ground truth → noise / data / mixture labels per subtree
``casebase.transfer``   lossless JSON Lines export / import
``casebase.cli``        the ``casebase`` command
``casebase.migrations`` the Alembic migrations (the repository's ``alembic/`` folder)
"""
