import gzip
import json
import shutil

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from warchelpers import ACCENTED, BASE, make_crawl

from noisecbr.prepare.decode import http_decoded
from noisecbr.score.kind import KINDS
from noisecbr_apps.cli import main
from noisecbr_apps.crawl.warc import (
    columns,
    is_warc,
    response_record,
)

NAMES = {"blog-1", "blog-2", "news-1", "tide-pools", "wrong-charset", "latin-1"}


@pytest.fixture
def crawl(tmp_path):
    return make_crawl(tmp_path)


#: The columns of a row that are the CleanResult's own fields.
RESULT_FIELDS = ("title", "author", "date", "lang", "text", "comments")


def _direct_results(pages, tmp_path) -> dict[str, dict]:
    """The JSON result of each HTML file, cleaned by `noisecbr clean -f json` as a file."""
    out = tmp_path / "json"
    result = CliRunner().invoke(main, ["clean", str(pages), "-o", str(out), "-q", "-f", "json"])
    assert result.exit_code == 0, result.output
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in out.iterdir()}


def _by_name(rows) -> dict[str, dict]:
    return {row["url"].removeprefix(BASE): row for row in rows}


def test_warc_to_jsonl_gives_the_texts_of_the_html_files(crawl, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["clean", str(crawl.warc), "-o", f"{out}/"])
    assert result.exit_code == 0, result.output
    assert (f"{crawl.records} records read, {crawl.cleaned} pages cleaned; skipped: "
            "HTTP status not 2xx 1, not HTML 1, truncated 2, unreadable HTTP response 1"
            ) in result.output
    rows = [json.loads(line) for line in (out / "crawl.jsonl").read_text().splitlines()]
    by_name = _by_name(rows)
    assert set(by_name) == NAMES
    direct = _direct_results(crawl.pages, tmp_path)
    for name, row in by_name.items():
        assert {field: row[field] for field in RESULT_FIELDS} == {
            field: direct[name][field] for field in RESULT_FIELDS}, name
    # The pages declare their headlines: the rows carry them, outside the text.
    assert all(row["title"] for row in rows)
    # The HTTP charset was honoured, and a wrong one did not garble the page.
    assert ACCENTED in by_name["wrong-charset"]["text"]
    assert ACCENTED.replace("—", "-") in by_name["latin-1"]["text"]
    row = by_name["tide-pools"]
    assert row["warc_record_id"].startswith("<urn:uuid:") and row["warc_date"][:2] == "20"
    assert row["decisions_noise"] > 0 and row["decisions_data"] > 0
    assert row["comments"] == "" and set(row) == {name for name, _ in columns()}
    # Each row says what kind of page it is and how far to trust its text.
    assert all(row["page_type"] in KINDS and 0.0 <= row["confidence"] <= 1.0 for row in rows)


def test_parquet_with_jobs_gives_the_same_rows(crawl, tmp_path):
    runner = CliRunner()
    assert runner.invoke(main, ["clean", str(crawl.warc), "-o", str(tmp_path / "a.jsonl")]
                         ).exit_code == 0
    # Found by its WARC/1. magic, not its name; Parquet by the output's name; two workers.
    renamed = tmp_path / "crawl.bin"
    shutil.copy(crawl.warc, renamed)
    result = runner.invoke(main, ["clean", str(renamed), "-o", str(tmp_path / "b.parquet"),
                                  "-j", "2"])
    assert result.exit_code == 0, result.output
    jsonl = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert pq.read_table(tmp_path / "b.parquet").to_pylist() == jsonl


def test_a_markdown_column_on_request(crawl, tmp_path):
    runner = CliRunner()
    for target, jobs in (("m.jsonl", "1"), ("m.parquet", "2")):
        result = runner.invoke(main, ["clean", str(crawl.warc), "-o", str(tmp_path / target),
                                      "--markdown", "-j", jobs])
        assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert set(rows[0]) == {name for name, _ in columns(markdown=True)}
    assert pq.read_table(tmp_path / "m.parquet").to_pylist() == rows
    page = next(r for r in rows if r["url"].endswith("tide-pools"))
    assert "## What you will find" in page["markdown"]
    refused = runner.invoke(main, ["clean", str(crawl.pages / "news-1.html"), "--markdown"])
    assert refused.exit_code == 2 and "-f markdown" in refused.output


def test_max_bytes_applies_per_record(crawl, tmp_path):
    sizes = {path.stem: len(path.read_bytes()) for path in crawl.pages.iterdir()}
    limit = sorted(sizes.values())[2]
    result = CliRunner().invoke(main, ["clean", str(crawl.warc), "-o", str(tmp_path / "o"),
                                       "-f", "jsonl", "--max-bytes", str(limit)])
    assert result.exit_code == 0, result.output
    rows = (tmp_path / "o" / "crawl.jsonl").read_text().splitlines()
    small = sum(size <= limit for size in sizes.values())
    assert 0 < len(rows) <= small < len(sizes)
    assert "over the size limit" in result.output


def test_usage_errors(crawl, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["clean", str(crawl.warc)])
    assert result.exit_code == 0 and result.output.count('"warc_record_id"') == crawl.cleaned
    result = runner.invoke(main, ["clean", str(crawl.warc), "-f", "parquet"])
    assert result.exit_code == 2 and "Parquet is written to a file" in result.output
    result = runner.invoke(main, ["clean", str(crawl.warc), str(crawl.pages / "news-1.html")])
    assert result.exit_code == 2 and "WARC files alone" in result.output
    result = runner.invoke(main, ["clean", str(crawl.pages / "news-1.html"), "-f", "parquet"])
    assert result.exit_code == 2 and "for WARC input" in result.output


def test_charset_decoding_falls_back_to_the_bytes():
    assert http_decoded("café".encode("cp1252"), "iso-8859-1") == "café"
    for label in ("x-no-such-charset", "utf-8", None):
        assert http_decoded(b"caf\xe9", label) == b"caf\xe9"
    assert http_decoded(b"\xef\xbb\xbfcaf\xc3\xa9", "latin-1") == b"\xef\xbb\xbfcaf\xc3\xa9"


def test_is_warc(crawl, tmp_path):
    assert is_warc(crawl.warc) and not is_warc(crawl.pages / "news-1.html")
    assert not is_warc(tmp_path / "missing.bin")


def test_site_memory_by_record_url_in_clean_and_in_the_spark_partitions(tmp_path,
                                                                         flawed_model):
    from warchelpers import FIXTURE_PAGES

    from casebase.cli import cli as casebase_cli
    from casebase.reuse import PageMemories
    from noisecbr_apps.crawl.pool import CleanSettings
    from noisecbr_apps.crawl.spark import clean_partition

    fixture = FIXTURE_PAGES.parent
    db = tmp_path / "cb.sqlite"
    runner = CliRunner()
    assert runner.invoke(casebase_cli, ["--db", str(db), "import", str(fixture), "--quiet",
                                        "-j", "0", "--no-oracle"]).exit_code == 0
    site_url = json.loads((fixture / "ground-truth.json").read_text())["news-2"]["url"]
    page = tmp_path / "news-2.html"
    page.write_bytes(gzip.decompress((FIXTURE_PAGES / "news-2.html.gz").read_bytes()))
    warc = tmp_path / "m.warc.gz"
    warc.write_bytes(response_record(site_url, page.read_bytes())
                     + response_record("https://elsewhere.test/a", page.read_bytes()))
    # A model that keeps boxes of the news page that its labelled pages call noise: the
    # memory then changes the text.
    model = ["--model", flawed_model]
    result = runner.invoke(main, ["clean", str(warc), *model, "--memory", str(db), "-o",
                                  str(tmp_path / "m.jsonl")])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    # The page of the labelled site is cleaned with its memory, as the file with its URL is;
    # the same page elsewhere by the model alone.
    direct = runner.invoke(main, ["clean", str(page), *model, "--memory", str(db), "--url",
                                  site_url])
    assert rows[0]["text"] + "\n" == direct.stdout
    assert rows[0]["text"] != rows[1]["text"]
    assert rows[1]["text"] + "\n" == runner.invoke(main, ["clean", str(page), *model]).stdout
    # The Spark job's partition function gives the same rows.
    settings = CleanSettings(model=flawed_model, memories=PageMemories(str(db)))
    names = [name for name, _ in columns()]
    assert list(clean_partition([str(warc)], settings)) == [
        tuple(row[name] for name in names) for row in rows]
