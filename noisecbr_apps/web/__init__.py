"""The web as input: the URLs of a sitemap or a feed (:mod:`.discover`) fetched politely
(:class:`noisecbr.web.fetch.Fetcher`) and cleaned into rows that a crawl can resume
(:mod:`.crawl`)."""
