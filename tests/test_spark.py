"""The Spark job in local mode (Java and pyspark are on the machine): about 30 s."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from warchelpers import ACCENTED, BASE, make_crawl

from noisecbr_apps.cli import main

pytest.importorskip("pyspark", reason="the Spark job needs the [spark] extra")


def test_spark_local_mode_gives_the_rows_of_noisecbr_clean(tmp_path):
    crawl = make_crawl(tmp_path)
    jsonl = tmp_path / "clean.jsonl"
    assert CliRunner().invoke(main, ["clean", str(crawl.warc), "-o", str(jsonl)]).exit_code == 0
    expected = {json.loads(line)["url"]: json.loads(line)
                for line in jsonl.read_text().splitlines()}
    out = tmp_path / "parquet"
    # A second, missing WARC: counted, the job goes on.
    proc = subprocess.run([sys.executable, "-m", "noisecbr_apps.crawl.spark", str(crawl.warc),
                           str(tmp_path / "missing.warc.gz"), "-o", str(out),
                           "--master", "local[2]"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (f"2 WARC files: {crawl.records} records read, {crawl.cleaned} pages cleaned; "
            "skipped: HTTP status not 2xx 1, WARC file unreadable 1, not HTML 1, truncated 2, "
            "unreadable HTTP response 1") in proc.stderr
    rows = {row["url"]: row for row in pq.read_table(out).to_pylist()}
    assert rows == expected
    assert ACCENTED in rows[BASE + "wrong-charset"]["text"]
