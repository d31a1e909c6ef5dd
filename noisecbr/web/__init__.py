"""Pages from the web: one URL fetched politely (:mod:`.fetch`: robots.txt, a delay per host,
retries, a size cap while downloading) and the URLs of a sitemap or a feed (:mod:`.discover`,
the ``web`` extra). Imported only when a URL is fetched: cleaning files never loads httpx."""
