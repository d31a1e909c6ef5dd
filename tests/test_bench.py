"""The bench's timing loop: extractors take turns over blocks of pages and score every page."""

from noisecbr.eval.datasets import LabelledPage
from noisecbr.prepare.subtrees import build_table
from noisecbr.prepare.tidy import tidy
from noisecbr_apps.bench import ROUND_PAGES, _run


def _pages(n: int) -> list[LabelledPage]:
    return [LabelledPage(id=str(i), url=f"https://s{i}.example/", site=f"s{i}.example",
                         html=b"", truth=f"page {i} says one two three four", dataset="t")
            for i in range(n)]


def test_extractors_take_turns_and_score_every_page():
    pages = _pages(2 * ROUND_PAGES + 5)
    calls: list[tuple[str, str]] = []

    def echo(page: LabelledPage) -> str:
        calls.append(("echo", page.id))
        return page.truth

    def flaky(page: LabelledPage) -> str:
        calls.append(("flaky", page.id))
        if int(page.id) % 3 == 0:
            raise RuntimeError("peer crashed")
        return ""

    rows = _run([("echo", echo), ("flaky", flaky)], pages)
    assert [row.name for row in rows] == ["echo", "flaky"]
    # Turns: a block of pages for echo, the same block for flaky; the second block starts with
    # flaky, the third (5 pages) with echo again.
    owners = [name for name, _ in calls]
    assert owners[:ROUND_PAGES] == ["echo"] * ROUND_PAGES
    assert owners[ROUND_PAGES:2 * ROUND_PAGES] == ["flaky"] * ROUND_PAGES
    assert owners[2 * ROUND_PAGES:3 * ROUND_PAGES] == ["flaky"] * ROUND_PAGES
    assert owners[3 * ROUND_PAGES:4 * ROUND_PAGES] == ["echo"] * ROUND_PAGES
    assert owners[4 * ROUND_PAGES] == "echo"
    assert [pid for name, pid in calls if name == "echo"] == [p.id for p in pages]
    assert [pid for name, pid in calls if name == "flaky"] == [p.id for p in pages]
    echo_row, flaky_row = rows
    assert echo_row.scores.f1 == 1.0 and echo_row.failures == 0
    assert len(flaky_row.pages) == len(pages)
    assert flaky_row.failures == sum(1 for p in pages if int(p.id) % 3 == 0)
    assert flaky_row.scores.recall == 0.0
    assert echo_row.docs_per_second > 0 and flaky_row.docs_per_second > 0


def test_a_missing_peer_keeps_its_place_in_the_rows(tmp_path, monkeypatch, article_html):
    import gzip
    import json

    from noisecbr_apps import bench as bench_module

    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    (data / "html" / "1.html.gz").write_bytes(gzip.compress(article_html))
    (data / "ground-truth.json").write_text(json.dumps({"1": {"url": "", "articleBody": "x"}}))

    def missing() -> None:
        raise ModuleNotFoundError("no module named 'jusText'", name="justext")

    monkeypatch.setitem(bench_module.PEERS, "justext", missing)
    rows = bench_module.bench(str(data), ["none", "justext", "noisecbr"])
    assert [row.name for row in rows] == ["none", "justext", "noisecbr"]
    assert rows[1].scores is None and "not installed (justext)" in rows[1].note
    assert rows[0].scores is not None and rows[2].scores is not None


def test_cv_fold_models_learn_from_the_datasets_own_truth(tmp_path, monkeypatch, article_html):
    # Scored against the article alone, the fold models still learn the full ground truth,
    # where the reader comments after the marker are labelled comments (the embedded recipe).
    import gzip
    import json

    from noisecbr.cleaner import default_model
    from noisecbr.eval.datasets import COMMENTS_MARKER
    from noisecbr_apps import bench as bench_module

    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    full = f"Anemones open like flowers\\n{COMMENTS_MARKER}\\nGreat post, thanks"
    truths = {}
    for k in range(2):
        (data / "html" / f"{k}.html.gz").write_bytes(gzip.compress(article_html))
        truths[str(k)] = {"url": f"https://s{k}.test/", "articleBody": full}
    (data / "ground-truth.json").write_text(json.dumps(truths))
    seen = []

    def fold_models(pages, folds, seed, progress, extra):
        seen.extend(page.truth for page in pages)
        return [([f"{page.dataset}/{page.id}" for page in pages], default_model())]

    monkeypatch.setattr(bench_module, "_fold_models", lambda: fold_models)
    rows = bench_module.bench(str(data), ["noisecbr"], cv=2, truth="article")
    assert seen == [full, full]
    assert rows[0].scores is not None


def test_the_oracle_row_takes_each_pages_best_row():
    from noisecbr_apps.bench import ORACLE, oracle_row

    pages = _pages(3)
    half = {"0": "page 0 says one", "1": "", "2": "page 2 says one two three four"}

    def exact(page: LabelledPage) -> str:
        return page.truth if page.id != "2" else ""

    def partial(page: LabelledPage) -> str:
        return half[page.id]

    rows = _run([("exact", exact), ("partial", partial)], pages)
    row = oracle_row(rows)
    assert row.name == ORACLE
    # page 0 and 1 from "exact" (F1 1), page 2 from "partial" (F1 1): the ceiling is perfect
    # though each row missed a page.
    assert rows[0].scores.f1 < 1 and rows[1].scores.f1 < 1
    assert row.scores.f1 == 1.0 and row.scores.pages == 3
    assert [p.precision for p in row.pages] == [1.0, 1.0, 1.0]
    assert row.empty == 0 and rows[1].page_empty == [False, False, False]


def test_bench_adds_the_oracle_row_last(tmp_path, article_html):
    import gzip
    import json
    import math

    from noisecbr_apps import bench as bench_module
    from noisecbr_apps.bench import ORACLE, format_table

    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    (data / "html" / "1.html.gz").write_bytes(gzip.compress(article_html))
    (data / "ground-truth.json").write_text(json.dumps({"1": {"url": "", "articleBody": "x"}}))
    rows = bench_module.bench(str(data), ["none", "noisecbr"], oracle=True)
    assert [row.name for row in rows] == ["none", "noisecbr", ORACLE]
    assert rows[2].scores.f1 == max(rows[0].scores.f1, rows[1].scores.f1)
    assert math.isnan(rows[2].docs_per_second)
    assert ORACLE in format_table(rows) and "nan" not in format_table(rows)


def _dataset(root, name: str, html: bytes, langs: list[str]):
    import gzip
    import json

    data = root / name
    (data / "html").mkdir(parents=True)
    truths = {}
    for k, lang in enumerate(langs):
        page = html.replace(b"<html", f'<html lang="{lang}"'.encode(), 1) if lang else html
        (data / "html" / f"{k}.html.gz").write_bytes(gzip.compress(page))
        truths[str(k)] = {"url": f"https://{name}{k}.test/", "articleBody": "Anemones open"}
    (data / "ground-truth.json").write_text(json.dumps(truths))
    return data


def test_fold_models_score_each_page_with_its_folds_model(tmp_path, article_html):
    import json

    import pytest

    from noisecbr.cleaner import default_model
    from noisecbr.score.artifact import save_model
    from noisecbr_apps import bench as bench_module

    data = _dataset(tmp_path, "set", article_html, ["de-DE", "en", ""])
    folder = tmp_path / "folds"
    folder.mkdir()
    save_model(default_model(), folder / "fold0.safetensors")
    (folder / "folds.json").write_text(json.dumps({"set/0": 0, "set/1": 0, "set/2": 0}))
    rows = bench_module.bench(str(data), ["noisecbr"], fold_models=folder, by_lang=True)
    assert rows[0].name == "noisecbr (recipe folds)" and rows[0].scores.pages == 3
    table = bench_module.format_by_type(rows, "lang")
    assert "de " in table and "en " in table
    (folder / "folds.json").write_text(json.dumps({"set/0": 0}))
    with pytest.raises(bench_module.BenchUsageError, match="2 pages are in no fold"):
        bench_module.bench(str(data), ["noisecbr"], fold_models=folder)
    with pytest.raises(bench_module.BenchUsageError, match="neither cv nor model"):
        bench_module.bench(str(data), ["noisecbr"], fold_models=folder, cv=2)


def test_a_pages_language_is_declared_or_read_off_its_words():
    from noisecbr_apps.bench import page_language

    assert page_language(b'<html lang="pt-BR"><body><p>Ol\xc3\xa1</p></body></html>') == "pt"
    german = ("<html><body><p>" + "Der Hund und die Katze sind nicht mit dem Auto in die "
              "Stadt gefahren, aber sie haben es gewollt. " * 5 + "</p></body></html>")
    assert page_language(german.encode()) == "de"
    assert page_language(b"<html><body><p>12 34</p></body></html>") == "?"


def test_adapt_clicks_adds_a_queued_and_a_random_row_per_number(tmp_path, flawed_model):
    import json

    import pytest
    from click.testing import CliRunner
    from conftest import dataset_with_page

    from noisecbr.score.artifact import load_model, save_model
    from noisecbr_apps import bench as bench_module
    from noisecbr_apps.cli import main

    # The fixture's two sites of two pages, and a page alone on its site (not scored).
    data = dataset_with_page(tmp_path / "set", "lone", b"<html><body><p>a b</p></body></html>")
    folder = tmp_path / "folds"
    folder.mkdir()
    save_model(load_model(flawed_model), folder / "fold0.safetensors")
    keys = [f"set/{name}" for name in ("news-1", "news-2", "blog-1", "blog-2", "lone")]
    (folder / "folds.json").write_text(json.dumps(dict.fromkeys(keys, 0)))
    rows = bench_module.bench(str(data), ["noisecbr"], fold_models=folder, adapt_clicks=[1, 3])
    label = "noisecbr (recipe folds)"
    assert [row.name for row in rows] == [
        label, f"{label} + 1 queued click", f"{label} + 1 random click",
        f"{label} + 3 queued clicks", f"{label} + 3 random clicks"]
    assert all(row.scores.pages == 4 for row in rows)
    with pytest.raises(bench_module.BenchUsageError, match="numbers of clicks"):
        bench_module.bench(str(data), ["noisecbr"], adapt_clicks=[0])
    shown = CliRunner().invoke(main, ["bench", str(data), "--fold-models", str(folder),
                                      "--adapt-clicks", "1,3", "--adapt-clicks", "1"])
    assert shown.exit_code == 0, shown.output
    assert "+ 3 random clicks" in shown.output and shown.output.count("+ 1 queued click") == 1
    bad = CliRunner().invoke(main, ["bench", str(data), "--adapt-clicks", "1,x"])
    assert bad.exit_code != 0 and "'x' is not a number of clicks" in bad.output


def test_the_queued_clicks_label_the_queues_first_boxes_from_the_truth(monkeypatch):
    import numpy as np

    from noisecbr.pipeline import Decisions, prepare
    from noisecbr.result import DATA, MIXTURE, NOISE
    from noisecbr_apps import bench as bench_module

    story = "The harbour wall was repaired by the town over the long winter months"
    html = ("<html><body><nav class=menu><a>Home</a> <a>News</a></nav>"
            "<div class=promo><p>Win a trip to the sea</p></div>"
            "<main><p>{story}</p></main></body></html>")
    pages = [LabelledPage(id=k, url=f"https://s.test/{k}", site="s.test",
                          html=html.format(story=f"{story} {k}").encode(), truth=f"{story} {k}",
                          dataset="t") for k in ("a", "b")]

    class Unsure:
        """A cleaner that keeps the menu though unsure of it (0.45 noise), sure of the rest."""

        def prepare(self, html, url=None):
            return prepare(html, url=url)

        def decide(self, page):
            table = page.table
            proba = np.tile([0.01, 0.98, 0.01, 0.0], (len(table), 1))
            proba[0] = [0.0, 0.0, 1.0, 0.0]
            proba[1] = [0.45, 0.5, 0.05, 0.0]
            decision = np.full(len(table), -1)
            # body, nav, a, a, div.promo, p, main, p
            decision[[0, 1, 4, 6]] = [MIXTURE, DATA, DATA, DATA]
            return Decisions(proba, decision)

    cleaners = {"t/a": Unsure(), "t/b": Unsure()}
    memories = bench_module._click_memories(pages, cleaners, [1, 2], seed=0)
    target = build_table(tidy(pages[1].html))  # page b learns from clicks on page a
    queued = memories[1, "queued"]["b"]
    # The queue's first box is the unsure menu; its truth label (noise) reaches page b.
    assert len(queued) == 1 and queued.recall(target)[1] == NOISE
    assert len(memories[2, "queued"]["b"]) == 2
    drawn = memories[2, "random"]["b"]
    assert len(drawn) == 2 and len(memories[1, "random"]["b"]) == 1
    again = bench_module._click_memories(pages, cleaners, [2], seed=0)
    assert again[2, "random"]["b"].to_dict() == drawn.to_dict()  # seeded
