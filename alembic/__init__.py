"""Schema migrations of the case base, installed as the package ``casebase.migrations``.

``casebase.store`` runs them programmatically (``CaseBase.open`` upgrades to head); developers
can also run ``alembic`` by hand from the repository root with ``alembic.ini``.

This folder is called ``alembic`` so that ``alembic revision`` finds it by convention, which
means that when the repository root is on ``sys.path`` (``python -m pytest`` or ``python -c``
from the root) ``import alembic`` would find this package instead of the Alembic library. The
block below detects that case and loads the library in this module's place: the import system
returns whatever ``sys.modules["alembic"]`` holds once this module has run.
"""

if __name__ == "alembic":  # imported under the library's name, not as casebase.migrations
    import importlib.machinery
    import importlib.util
    import os
    import sys

    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _search = [p for p in sys.path if os.path.abspath(p or os.curdir) != _root]
    _spec = importlib.machinery.PathFinder.find_spec("alembic", _search)
    if _spec is None or _spec.loader is None:
        raise ImportError("the Alembic library is not installed (pip install alembic)")
    _library = importlib.util.module_from_spec(_spec)
    sys.modules["alembic"] = _library
    _spec.loader.exec_module(_library)
