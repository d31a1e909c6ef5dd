"""CPU time per page of cleaning a site's pages one by one against cleaning them together
(``Cleaner.clean_site``, what ``noisecbr clean DIR --by-site`` does per site).

    python benchmarks/site_speed.py ../shared/data/utomo-big9 [--pages 20] [--sites 3] [--rounds 3]

For each of the ``--sites`` sites with the most pages (at least ``--pages``), its first
``--pages`` pages are cleaned both ways, ``--rounds`` times, alternating; the best round of each
is printed as milliseconds of CPU per page, with the ratio. Run on an idle machine: the
timings are of this process alone, but a busy machine slows the caches too.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from noisecbr.cleaner import Cleaner
from noisecbr.eval.datasets import read_dataset


def _cpu_per_page(run, pages) -> float:
    started = time.process_time()
    run(pages)
    return (time.process_time() - started) / len(pages) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--sites", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    by_site = defaultdict(list)
    for page in read_dataset(args.dataset):
        by_site[page.site].append(page.html)
    sites = sorted((site for site, pages in by_site.items() if len(pages) >= args.pages),
                   key=lambda site: -len(by_site[site]))[:args.sites]
    if not sites:
        raise SystemExit(f"no site of {args.dataset} has {args.pages} pages")
    cleaner = Cleaner()
    one_by_one = lambda pages: [cleaner.clean(html).text for html in pages]  # noqa: E731
    together = lambda pages: [result.text for result in cleaner.clean_site(pages)]  # noqa: E731
    print("| site | pages | one by one ms/page | by site ms/page | ratio |")
    print("|---|---|---|---|---|")
    for site in sites:
        pages = by_site[site][:args.pages]
        plain, grouped = [], []
        for _ in range(args.rounds):
            plain.append(_cpu_per_page(one_by_one, pages))
            grouped.append(_cpu_per_page(together, pages))
        print(f"| {site} | {len(pages)} | {min(plain):.2f} | {min(grouped):.2f} | "
              f"{min(grouped) / min(plain):.2f} |")


if __name__ == "__main__":
    main()
