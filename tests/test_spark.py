"""The Spark job in local mode (Java and pyspark are on the machine): about 30 s."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from warchelpers import ACCENTED, BASE, DAMAGED_RECORDS, damaged_archive, make_crawl

from noisecbr_apps.cli import main

pytest.importorskip("pyspark", reason="the Spark job needs the [spark] extra")


def test_spark_local_mode_gives_the_rows_of_noisecbr_clean(tmp_path):
    crawl = make_crawl(tmp_path)
    jsonl = tmp_path / "clean.jsonl"
    assert CliRunner().invoke(main, ["clean", str(crawl.warc), "-o", str(jsonl)]).exit_code == 0
    expected = {json.loads(line)["url"]: json.loads(line)
                for line in jsonl.read_text().splitlines()}
    out = tmp_path / "parquet"
    # A missing WARC and a damaged one: both named, the job goes on and exits 1.
    damaged = tmp_path / "damaged.warc.gz"
    offset = damaged_archive(damaged)
    proc = subprocess.run([sys.executable, "-m", "noisecbr_apps.crawl.spark", str(crawl.warc),
                           str(tmp_path / "missing.warc.gz"), str(damaged), "-o", str(out),
                           "--master", "local[2]"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    read, cleaned = crawl.records + DAMAGED_RECORDS - 1, crawl.cleaned + DAMAGED_RECORDS - 1
    assert (f"3 WARC files: {read} records read, {cleaned} pages cleaned; "
            "skipped: HTTP status not 2xx 1, WARC file unreadable 1, damaged archive part 1, "
            "not HTML 1, truncated 2, unreadable HTTP response 1") in proc.stderr
    assert "2 of 3 WARC files failed:" in proc.stderr
    assert f"{tmp_path / 'missing.warc.gz'}: " in proc.stderr
    assert f"{damaged}: damaged at byte {offset} (" in proc.stderr
    rows = {row["url"]: row for row in pq.read_table(out).to_pylist()}
    assert {url: row for url, row in rows.items() if url in expected} == expected
    assert len(rows) == len(expected) + DAMAGED_RECORDS - 1
    assert ACCENTED in rows[BASE + "wrong-charset"]["text"]
