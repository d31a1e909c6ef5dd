"""Which site a page file belongs to, for cleaning a crawl's pages site by site
(``noisecbr clean DIR --by-site``; WARC records group by the host of their target URI).

A saved page rarely keeps its address in its file name, but most declare it: the host of its
``<link rel="canonical">`` or ``og:url`` (:func:`noisecbr.site.memory.declared_url`) names the
site. A page that declares none belongs with the other pages of its folder, as a crawler
saving one folder per site lays them out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from noisecbr.eval.datasets import site_of
from noisecbr.prepare.tidy import InputError
from noisecbr.site.memory import declared_url

__all__ = ["group_by_site"]


def group_by_site(items: Iterable[str], read: Callable[[str], bytes]) -> dict[str, list[str]]:
    """The page files ``items`` grouped by site (in their order; groups in the order first
    met): the host a page declares, else its folder (``dir:`` and the folder). A file ``read``
    cannot read joins its folder's group; cleaning it will say why."""
    groups: dict[str, list[str]] = {}
    for item in items:
        try:
            site = site_of(declared_url(read(item)), "")
        except (InputError, OSError):
            site = "page:"
        key = f"dir:{Path(item).parent}" if site == "page:" else site
        groups.setdefault(key, []).append(item)
    return groups
