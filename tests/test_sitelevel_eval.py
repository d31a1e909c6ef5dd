"""experiments.sitelevel_eval on a synthetic four-page site with hand-made constant models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments import sitelevel_eval as ev
from noisecbr.eval.datasets import LabelledPage
from noisecbr.features import FEATURE_NAMES
from noisecbr.score.model import Model

NAV = ('<div class="nav"><ul><li><a href="/">Home page link</a></li>'
       '<li><a href="/news">Latest news items</a></li>'
       '<li><a href="/about">About this site</a></li></ul></div>')
FOOTER = ('<div class="footer"><ul><li><a href="/c">Copyright example company</a></li>'
          '<li><a href="/p">Privacy and cookie policy</a></li></ul></div>')
ARTICLES = [
    "Apples grow on trees in temperate orchards and ripen in the autumn months",
    "Bananas are grown in tropical plantations and shipped green to distant markets",
    "Cherries blossom early in spring and are harvested in a few short summer weeks",
    "Durian has a strong smell that divides opinion among the people who taste it",
]


def fake_page(k: int, article: str, site: str = "fake.example") -> LabelledPage:
    html = (f"<html><body>{NAV}<div class='main'><h2>Fruit number {k} explained</h2>"
            f"<p>{article}.</p></div>{FOOTER}</body></html>")
    return LabelledPage(id=f"{k:04d}", url=f"https://www.{site}/fruit/{k}", site=site,
                        html=html.encode(), truth=f"Fruit number {k} explained\n\n{article}.",
                        dataset="synthetic")


@pytest.fixture
def site_pages() -> list[LabelledPage]:
    return [fake_page(k, text) for k, text in enumerate(ARTICLES)]


def constant_model(p_noise: float) -> Model:
    """Zero weights: every subtree gets (p_noise, rest as data and mixture 2:1)."""
    n = len(FEATURE_NAMES)
    rest = 1.0 - p_noise
    bias = np.log([p_noise, rest * 2 / 3, rest / 3]).astype(np.float32)
    return Model(weights=[np.zeros((3, n), np.float32)], biases=[bias], columns=np.arange(n),
                 mean=np.zeros(n, np.float32), scale=np.ones(n, np.float32),
                 output_activation="softmax")


def test_evaluation_sites_and_duplicates(site_pages) -> None:
    lone = fake_page(9, ARTICLES[0], site="other.example")
    copy = LabelledPage(id="0100", url=site_pages[0].url, site=site_pages[0].site,
                        html=site_pages[0].html, truth=site_pages[0].truth, dataset="synthetic")
    sites = ev.evaluation_sites([lone, *site_pages, copy], min_pages=3)
    assert list(sites) == ["fake.example"]
    assert len(sites["fake.example"]) == 5
    assert ev.duplicate_groups(sites["fake.example"]) == [["0000", "0100"]]


def test_leave_one_out_methods(site_pages) -> None:
    # p(noise) 0.2 < 1/3: the MLP keeps everything and the soft combination forces nothing.
    results = ev.leave_one_out(site_pages, constant_model(0.2), smooth=(0.05,))
    assert len(results) == 4
    for r in results:
        assert r.other_pages == 3
        assert r.sst_noisy > 0 and r.forced_soft == 0
        s = r.scores
        assert s["MLP (held-out)"] == s["no cleaning (all text)"]
        assert s["MLP + SST (soft, p≥1/3)"] == s["MLP (held-out)"]
        # The SST drops the repeated navigation and footer: the article alone is left.
        assert s["SST"].precision == pytest.approx(1.0)
        assert s["SST"].recall == pytest.approx(1.0)
        assert s["MLP + SST (forced)"] == s["SST"]
        assert s["no cleaning (all text)"].precision < 1.0
        assert "MLP smooth c=0.05" in s
    rows = ev.summary_rows(results, ev.METHODS)
    assert [row["method"] for row in rows] == list(ev.METHODS)
    assert rows[1]["f1"] == pytest.approx(1.0) and rows[1]["pages"] == 4


def test_soft_combination_forces_when_mlp_leans_to_noise(site_pages) -> None:
    # p(noise) 0.4: at least 1/3, under the walk's 0.5: only the SST's evidence removes nodes.
    results = ev.leave_one_out(site_pages, constant_model(0.4), smooth=())
    for r in results:
        assert r.forced_soft == r.sst_noisy > 0
        assert r.scores["MLP + SST (soft, p≥1/3)"] == r.scores["MLP + SST (forced)"]
        assert r.scores["MLP (held-out)"] == r.scores["no cleaning (all text)"]


def test_template_agreement(site_pages) -> None:
    counts = ev.template_agreement(site_pages, theta=0.10)
    assert counts["unmatched"] == 0
    assert counts["pages"] == counts["distinct_pages"] == 4
    row = ev.agreement_row("fake.example", counts)
    # Navigation and footer repeat on every page and are not in the ground truth.
    assert row["templates"] > 0
    assert row["precision_words"] == pytest.approx(1.0)
    assert row["noise_recall_words"] == pytest.approx(1.0)
    assert row["truth_word_share_in_templates"] == pytest.approx(0.0)


def test_smoothing_times_small(site_pages) -> None:
    rows = ev.smoothing_times(constant_model(0.2), site_pages, cs=(0.05,), nodes=5, runs=1)
    # The smallest page with ≥ 5 nodes, the largest page, the synthetic tree.
    assert len(rows) == 3
    assert rows[-1]["nodes"] == 5
    assert all(row["seconds"] >= 0 and not math.isnan(row["seconds"]) for row in rows)


def test_markdown_table() -> None:
    text = ev.markdown_table([{"a": "x", "b": 0.12345, "c": None}],
                             [("a", "A"), ("b", "B"), ("c", "C")])
    assert text.splitlines() == ["| A | B | C |", "|---|---|---|", "| x | 0.123 | – |"]


def test_paired_delta() -> None:
    from noisecbr.eval.metric import PageScore

    a = [PageScore(0.8, 0.1, 0.1), PageScore(0.5, 0.5, 0.0), PageScore(0.2, 0.0, 0.8)]
    b = [PageScore(0.4, 0.3, 0.3), PageScore(0.5, 0.5, 0.0), PageScore(0.1, 0.0, 0.9)]
    assert ev.paired_delta(a, a) == (0.0, 0.0, 0.0)
    delta, low, high = ev.paired_delta(a, b)
    assert low <= delta <= high and delta > 0


def write_dataset(directory, pages: list[LabelledPage]) -> None:
    import json

    (directory / "html").mkdir(parents=True)
    truth = {}
    for page in pages:
        (directory / "html" / f"{page.id}.html").write_bytes(page.html)
        truth[page.id] = {"url": page.url, "articleBody": page.truth}
    (directory / "ground-truth.json").write_text(json.dumps(truth))


def test_main_end_to_end_with_cached_model(tmp_path, site_pages) -> None:
    from noisecbr.score.artifact import save_model

    others = [fake_page(10 + k, text, site=f"s{k}.example") for k, text in enumerate(ARTICLES)]
    pages = [LabelledPage(id=p.id, url=p.url, site=p.site, html=p.html, truth=p.truth,
                          dataset="dev") for p in site_pages + others]
    data = tmp_path / "dev"
    write_dataset(data, pages)
    out = tmp_path / "out"
    model = constant_model(0.4)
    model.metadata.update(held_out_sites=["fake.example"], trained_on=["dev"], seed=0,
                          code_sha256=ev.code_fingerprint())
    save_model(model, out / ev.MODEL_FILE)

    val = ev.validation_pages([data], ["fake.example"])
    assert val and all(p.site != "fake.example" for p in val)

    report = ev.main([str(data), "--out", str(out), "--smooth", "0.05"])
    assert report["training"]["cached"] is True
    assert list(report["sites"]) == ["fake.example"]
    assert [row["method"] for row in report["leave_one_out"]] == list(ev.METHODS)
    assert report["templates"][-1]["site"] == "all (1 sites)"
    assert len(report["smoothing_check"]) == 2
    assert (out / "sitelevel.json").is_file()
