"""noisecbr as the HTML step of a datatrove pipeline: WarcReader → NoisecbrExtractor →
JsonlWriter in datatrove's local executor, on a small WARC made here (the README's example page,
two pages of the fixture sites, an image and an empty page)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

pytest.importorskip("datatrove", reason="the datatrove extra is not installed")
pytest.importorskip("warcio", reason="the datatrove extra is not installed")
pytest.importorskip("magic", reason="python-magic needs libmagic (apt-get install libmagic1)")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import WarcReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402

import noisecbr  # noqa: E402
from noisecbr_apps.crawl.datatrove_step import NoisecbrExtractor  # noqa: E402
from noisecbr_apps.crawl.warc import response_record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "casebase" / "html"
PAGES = {
    "https://coast.test/pools": (ROOT / "examples" / "tide-pools.html").read_bytes(),
    "https://harbour.test/news-1": gzip.decompress((FIXTURE / "news-1.html.gz").read_bytes()),
    "https://workshop.test/blog-1": gzip.decompress((FIXTURE / "blog-1.html.gz").read_bytes()),
}


def _run(tmp_path: Path, output: str) -> list[dict]:
    crawl = tmp_path / "crawl"
    crawl.mkdir(exist_ok=True)
    records = [response_record(url, page) for url, page in PAGES.items()]
    records.append(response_record("https://coast.test/logo.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64,
                                   headers=[("Content-Type", "image/png")]))
    (crawl / "small.warc.gz").write_bytes(b"".join(records))
    out = tmp_path / f"out-{output}"
    LocalPipelineExecutor(pipeline=[
        WarcReader(str(crawl)),
        NoisecbrExtractor(output=output),
        JsonlWriter(str(out)),
    ], tasks=1, logging_dir=str(tmp_path / f"logs-{output}")).run()
    rows = []
    for path in sorted(out.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            rows.extend(json.loads(line) for line in lines)
    return rows


def test_a_datatrove_pipeline_cleans_a_warc_with_noisecbr(tmp_path):
    rows = _run(tmp_path, "text")
    by_url = {row["metadata"]["url"]: row for row in rows}
    assert set(by_url) == set(PAGES)  # the image is not a page: not a document
    for url, page in PAGES.items():
        expected = noisecbr.clean(page, url=url)
        assert by_url[url]["text"] == expected.text
        assert by_url[url]["metadata"].get("title") == expected.title
        assert by_url[url]["metadata"]["date"]  # the reader's WARC-Date, not overwritten
    assert "Accept all cookies" not in by_url["https://coast.test/pools"]["text"]
    markdown = {row["metadata"]["url"]: row["text"] for row in _run(tmp_path, "markdown")}
    assert "## What you will find" in markdown["https://coast.test/pools"]


def test_the_extractor_says_what_it_cannot_do():
    with pytest.raises(ValueError, match="'text' or 'markdown'"):
        NoisecbrExtractor(output="xml")
    assert NoisecbrExtractor().extract("") == ""  # not a page: nothing, then dropped
