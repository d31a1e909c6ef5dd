"""Pages fetched from the web, grouped by site, for :func:`casebase.site_import.import_site_pages`
(``casebase import-urls``).

A sitemap gives many pages of one site, which is what a site template needs: the pages are
fetched politely (:class:`noisecbr.web.fetch.Fetcher`: robots.txt obeyed, one request at a time per
host, ``delay`` apart), grouped by the host they ended on after redirects, and each host's
pages are imported together, so that the subtrees repeated across them become its noise cases.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from noisecbr.prepare.limits import reading_problem
from noisecbr.prepare.tidy import InputError
from noisecbr.web.fetch import Fetcher, FetchError, RobotsDeniedError

from .importer import show_progress
from .site_import import SitePage

__all__ = ["FetchedSites", "fetch_sites"]


@dataclass
class FetchedSites:
    """What fetching found: each host's pages, the URLs that failed and why, the URLs
    robots.txt forbids (never requested)."""

    pages: dict[str, list[SitePage]] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """The pages fetched, of every host."""
        return sum(len(pages) for pages in self.pages.values())


def fetch_sites(fetcher: Fetcher, urls: Sequence[str], *, progress: bool = False
                ) -> FetchedSites:
    """Fetch ``urls`` one after another (the fetcher keeps each host's requests apart) and
    group the HTML pages by the host they ended on; a failure is that URL's only."""
    from tqdm import tqdm

    found = FetchedSites()
    seen: set[str] = set()  # final URLs: two URLs redirected to one page give it once
    bar = tqdm(total=len(urls), unit="page", file=sys.stderr, dynamic_ncols=True,
               disable=not show_progress(progress))
    try:
        for url in urls:
            bar.update(1)
            try:
                fetched = fetcher.fetch(url)
            except RobotsDeniedError:
                found.forbidden.append(url)
                continue
            except (FetchError, InputError) as error:
                found.failed.append((url, str(error)))
                continue
            except OSError as error:
                found.failed.append((url, reading_problem(error)))
                continue
            if fetched.final_url in seen:
                continue
            seen.add(fetched.final_url)
            host = (urlsplit(fetched.final_url).hostname or "").lower()
            # The page's id is the URL it ended on: fetched again, it is the same page.
            found.pages.setdefault(host, []).append(
                SitePage(fetched.final_url, fetched.payload, fetched.final_url))
            bar.set_postfix(failed=len(found.failed), refresh=False)
    finally:
        bar.close()
    return found
