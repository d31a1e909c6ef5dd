"""Cleaning crawls: WARC records in, one row per page out (:mod:`~noisecbr_apps.crawl.warc`), in
a pool of processes (:mod:`~noisecbr_apps.crawl.pool`), on Spark
(:mod:`~noisecbr_apps.crawl.spark`) or as a datatrove step
(:mod:`~noisecbr_apps.crawl.datatrove_step`)."""
