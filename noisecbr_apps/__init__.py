"""The applications above the cleaning engine: the ``noisecbr`` command line
(:mod:`~noisecbr_apps.cli`), the benchmark against peer extractors (:mod:`~noisecbr_apps.bench`),
crawl batches (WARC → JSON Lines / Parquet, the Spark job, the datatrove step:
:mod:`~noisecbr_apps.crawl`) and the HTTP service with its review page
(:mod:`~noisecbr_apps.service`).

They import the engine (:mod:`noisecbr`), the case base (:mod:`casebase`) and training
(:mod:`training`) directly; nothing below imports them (docs/architecture.md).
"""
