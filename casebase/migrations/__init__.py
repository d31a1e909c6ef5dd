"""Schema migrations of the case base (Alembic).

``casebase.connection`` runs them programmatically (``CaseBase.open`` upgrades to head), from
the installed package, so a wheel needs no ``alembic.ini``. Developers run ``alembic`` by hand
from the repository root, where ``alembic.ini`` points here (``alembic revision --autogenerate -m
...``, ``alembic -x db=URL upgrade head``).
"""
