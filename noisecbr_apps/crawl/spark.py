"""The Spark job: WARC files (local paths or any Hadoop filesystem URL) → one Parquet row per page.

``python -m noisecbr_apps.crawl.spark WARC... -o OUT`` (or ``noisecbr spark``), run as it is in
Spark local mode or unchanged by ``spark-submit`` on a cluster (see docs/crawl.md). As in
cc-pyspark, each task reads whole WARC files (one partition per file by default) and cleans
their records with ``mapPartitions``; each executor's Python worker keeps one
:class:`noisecbr.Cleaner` in a module cache (:func:`noisecbr_apps.crawl.warc.cached_cleaner`), so
the model is loaded once per process, not per record. Files are opened with :mod:`pyarrow.fs`
(``s3://``, ``gs://``, ``hdfs://``, ``file://``, or a plain local path).

pyspark is imported only when the job runs: the ``[spark]`` extra.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import click

from noisecbr.decide.walk import AUTO, FAVOR
from noisecbr.exits import EXIT_PARTIAL
from noisecbr.prepare.limits import reading_problem

from .pool import CleanSettings
from .warc import CrawlStats, clean_pages, columns, iter_pages

__all__ = ["clean_partition", "open_warc", "spark"]

#: The counter of records read and pages cleaned in the job's accumulator (the skip reasons are
#: counted beside them under their own names).
RECORDS, CLEANED = "records read", "pages cleaned"
#: The CPU seconds the executors' Python workers spent reading and cleaning the files.
CPU = "cpu"
UNOPENED = "WARC file unreadable"
#: The accumulator's key of a file that failed (unreadable, or with damaged parts): this prefix,
#: the path, ``\t`` and what went wrong.
FAILED_FILE = "failed file\t"


def open_warc(path: str):
    """A binary stream of the WARC at ``path``: a local path or a filesystem URL pyarrow knows.
    Compressed archives are left compressed: FastWARC reads gzip members itself."""
    from pyarrow import fs

    if "://" in path:
        filesystem, inner = fs.FileSystem.from_uri(path)
    else:
        filesystem, inner = fs.LocalFileSystem(), os.path.abspath(path)
    # A random-access file: FastWARC asks the stream for its position.
    return filesystem.open_input_file(inner)


_announced = False


def _announce_python() -> None:
    """Writes to stderr (on a cluster, the executor's log), once per Python worker, the Python
    it runs, the noisecbr it imported and the site-packages on its path: which environment the
    executors were given (docs/crawl.md, "A standalone cluster")."""
    global _announced
    if not _announced:
        import noisecbr

        _announced = True
        sites = [entry for entry in sys.path if entry.endswith("site-packages")]
        print(f"noisecbr spark: Python worker {os.getpid()} runs {sys.executable} with noisecbr "
              f"{noisecbr.__file__}; site-packages {sites}", file=sys.stderr, flush=True)


def clean_partition(paths: Iterable[str], settings: CleanSettings,
                    counts: Any = None) -> Iterator[tuple]:
    """The rows (tuples in :func:`noisecbr_apps.crawl.warc.columns` order) of every page of the
    WARC files ``paths``; what was read and skipped is added to the accumulator ``counts`` per
    file."""
    _announce_python()
    cleaner = settings.cleaner()
    names = [name for name, _ in columns(settings.markdown)]
    for path in paths:
        stats = CrawlStats()
        cpu = time.process_time()
        failures = []
        try:
            with open_warc(path) as stream:
                pages = iter_pages(stream, stats, settings.max_bytes)
                for row in clean_pages(cleaner, pages, stats, settings.memories,
                                       settings.markdown, settings.by_site, settings.page_type):
                    yield tuple(row[name] for name in names)
        except OSError as error:
            stats.skip(UNOPENED)
            failures.append(reading_problem(error))
        failures += [damage.describe() for _, damage in stats.damages]
        if counts is not None:
            counts.add(Counter({RECORDS: stats.records, CLEANED: stats.cleaned,
                                CPU: time.process_time() - cpu, **stats.skipped,
                                **{f"{FAILED_FILE}{path}\t{failure}": 1 for failure in failures}}))


def _spark_schema(markdown: bool = False):
    from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType

    types = {"string": StringType(), "int": IntegerType(), "float": DoubleType()}
    return StructType([StructField(name, types[kind], nullable=True)
                       for name, kind in columns(markdown)])


def _counter_param():
    from pyspark.accumulators import AccumulatorParam

    class CounterParam(AccumulatorParam):
        """Adds up :class:`collections.Counter` values across tasks."""

        def zero(self, value: Counter) -> Counter:
            return Counter()

        def addInPlace(self, first: Counter, second: Counter) -> Counter:
            first.update(second)
            return first

    return CounterParam()


def _read_paths(inputs: tuple[str, ...], paths_from: str | None) -> list[str]:
    """The WARC paths: the arguments, then the lines of ``--paths-from`` (local or a URL)."""
    paths = list(inputs)
    if paths_from:
        with open_warc(paths_from) as stream:
            data = stream.read()
        if data[:2] == b"\x1f\x8b":  # Common Crawl's warc.paths.gz
            import gzip

            data = gzip.decompress(data)
        paths += [line.strip() for line in data.decode().splitlines() if line.strip()]
    # The executors' working directory is not the driver's: local paths go absolute.
    return [path if "://" in path else os.path.abspath(path) for path in paths]


def _failed_files(counts: Counter) -> list[tuple[str, str]]:
    """The (path, what went wrong) of the files that failed, taken out of ``counts``."""
    keys = sorted(key for key in counts if key.startswith(FAILED_FILE))
    for key in keys:
        del counts[key]
    return [tuple(key.removeprefix(FAILED_FILE).split("\t", 1)) for key in keys]


def _summary(counts: Counter) -> str:
    cpu = counts.pop(CPU, 0.0)
    stats = CrawlStats(records=counts.pop(RECORDS, 0), cleaned=counts.pop(CLEANED, 0),
                       skipped=counts)
    return f"{stats.summary()} (executors' Python CPU {cpu:.1f} s)"


@click.command("spark")
@click.argument("inputs", nargs=-1)
@click.option("-o", "--output", required=True,
              help="Parquet output folder (a local path or a Hadoop filesystem URL).")
@click.option("--paths-from", help="A file listing one WARC path or URL a line (may be .gz, "
              "like Common Crawl's warc.paths.gz).")
@click.option("--model", help="A model artifact (.safetensors) every executor can read. "
              "Default: the embedded model.")
@click.option("--memory", "memory_db", metavar="DB",
              help="A case base URL every executor can reach: pages of its labelled sites are "
              "cleaned with their site memory (the site is the host of WARC-Target-URI).")
@click.option("--site", help="With --memory: one site's memory for every page.")
@click.option("--max-bytes", type=int, default=None, help="Skip records larger than this.")
@click.option("--favor", type=click.Choice(list(FAVOR)), default=AUTO, show_default=True,
              help="As for noisecbr clean.")
@click.option("--comments", is_flag=True, help="Keep the reader comments after the main "
              "text too (the comments column has them either way).")
@click.option("--partitions", type=int, default=None,
              help="Spark partitions (default: one per WARC file).")
@click.option("--master", default=None, help="Spark master (default: spark-submit's, or "
              "local[*] when run with python).")
@click.option("--overwrite", is_flag=True, help="Replace an existing output folder.")
@click.option("--markdown", is_flag=True, help="Add a markdown column: the main content as "
              "Markdown.")
@click.option("--by-site", is_flag=True, help="Clean each host's pages with what recurs on "
              "them (menus, footers, rails): records grouped by the host of their target URI, "
              "256 records at a time.")
def spark(inputs: tuple[str, ...], output: str, paths_from: str | None, model: str | None,
          memory_db: str | None, site: str | None, max_bytes: int | None, favor: str,
          comments: bool, partitions: int | None, master: str | None, overwrite: bool,
          markdown: bool, by_site: bool) -> None:
    """Clean WARC files on Spark: INPUTS are WARC paths or URLs; writes Parquet to OUTPUT."""
    paths = _read_paths(inputs, paths_from)
    if not paths:
        raise click.UsageError("give WARC paths, or --paths-from FILE")
    try:
        from pyspark.sql import SparkSession
    except ImportError as error:
        raise click.ClickException(f"the Spark job needs {error.name}: "
                                   "pip install 'noisecbr[spark]'") from error
    memories = None
    if memory_db:
        from casebase.reuse import open_page_memories
        from noisecbr.site.memory import MemorySourceError

        try:
            memories = open_page_memories(memory_db, site)
        except (ValueError, MemorySourceError) as error:
            raise click.ClickException(f"--memory: {error}") from error
    settings = CleanSettings(model=model, max_bytes=max_bytes, memories=memories, favor=favor,
                             comments=comments, markdown=markdown, by_site=by_site)
    builder = SparkSession.builder.appName("noisecbr")
    if master:
        builder = builder.master(master)
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started this driver
    if (master or "local").startswith("local") and not submitted:
        # Local workers must run this Python, where noisecbr is installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = builder.getOrCreate()
    try:
        session.sparkContext.setLogLevel("WARN")
        counts = session.sparkContext.accumulator(Counter(), _counter_param())
        started = time.perf_counter()
        rdd = session.sparkContext.parallelize(paths, partitions or len(paths))
        rows = rdd.mapPartitions(lambda part: clean_partition(part, settings, counts))
        frame = session.createDataFrame(rows, _spark_schema(markdown))
        frame.write.mode("overwrite" if overwrite else "errorifexists").parquet(output)
        totals = counts.value
        failed = _failed_files(totals)
        click.echo(f"noisecbr spark: {len(paths)} WARC files: {_summary(totals)} "
                   f"in {time.perf_counter() - started:.1f} s after Spark started", err=True)
    finally:
        session.stop()
    if failed:
        click.echo(f"noisecbr spark: {len({path for path, _ in failed})} of {len(paths)} WARC "
                   "files failed:", err=True)
        for path, problem in failed:
            click.echo(f"  {path}: {problem}", err=True)
        sys.exit(EXIT_PARTIAL)


if __name__ == "__main__":  # pragma: no cover
    spark()
