import gzip
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from noisecbr_apps.cli import main


def test_clean_file_to_stdout(article_html, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(article_html)
    result = CliRunner().invoke(main, ["clean", str(page)])
    assert result.exit_code == 0, result.output
    assert "Anemones open like flowers" in result.output
    assert "Accept all cookies" not in result.output


def test_clean_says_the_kind_and_takes_the_kind_and_the_headline(article_html, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(article_html)
    guessed = json.loads(CliRunner().invoke(main, ["clean", str(page), "-f", "json"]).output)
    assert guessed["page_type"] in guessed["page_types"] and 0 <= guessed["confidence"] <= 1
    given = CliRunner().invoke(main, ["clean", str(page), "-f", "json", "--page-type", "forum",
                                      "--title"])
    assert given.exit_code == 0, given.output
    payload = json.loads(given.output)
    assert payload["page_type"] == "forum" and payload["page_types"]["forum"] == 1.0
    assert payload["text"].startswith(payload["title"])
    plain = CliRunner().invoke(main, ["clean", str(page), "--no-title"]).output
    assert not plain.startswith(payload["title"])
    bad = CliRunner().invoke(main, ["clean", str(page), "--page-type", "blog"])
    assert bad.exit_code == 2 and "blog" in bad.output


def test_one_pages_output_file_chooses_its_format_by_its_extension(article_html, tmp_path):
    page = tmp_path / "page.html"
    page.write_bytes(article_html)
    for name, check in (("out.json", lambda text: json.loads(text)["text"]),
                        ("out.md", lambda text: text.startswith("When the tide")),
                        ("out.html", lambda text: "<html" in text and "<p>" in text),
                        ("out.txt", lambda text: text.startswith("When the tide"))):
        result = CliRunner().invoke(main, ["clean", str(page), "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        assert check((tmp_path / name).read_text(encoding="utf-8")), name
    # -f says otherwise: it wins.
    CliRunner().invoke(main, ["clean", str(page), "-o", str(tmp_path / "x.json"), "-f", "text"])
    assert (tmp_path / "x.json").read_text(encoding="utf-8").startswith("When the tide")


def test_batch_with_a_corrupt_file(article_html, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.html").write_bytes(article_html)
    (inputs / "b.html.gz").write_bytes(gzip.compress(article_html))
    (inputs / "broken.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["clean", str(inputs), "-o", str(out), "-q", "-j", "2",
                                       "--format", "json"])
    assert result.exit_code == 1
    assert "broken.html" in result.output and "1 of 3 inputs failed" in result.output
    written = sorted(p.name for p in out.iterdir())
    assert written == ["a.json", "b.json"]
    payload = json.loads((out / "b.json").read_text())
    assert "Anemones" in payload["text"] and payload["decisions"]


def test_batch_output_mirrors_the_input_tree_and_refuses_collisions(article_html, tmp_path):
    """DIR/a.html and DIR/sub/a.html are two outputs, not one file written twice; inputs that
    would write one file are refused before anything is written."""
    inputs = tmp_path / "in"
    (inputs / "sub").mkdir(parents=True)
    for name in ("a.html", "sub/a.html", "sub/b.html.gz"):
        data = article_html if not name.endswith(".gz") else gzip.compress(article_html)
        (inputs / name).write_bytes(data)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["clean", str(inputs), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["a.txt", "sub/a.txt", "sub/b.txt"]
    assert "wrote 3 of 3 pages to" in result.stderr
    assert "Anemones" in (out / "sub" / "a.txt").read_text()

    # A folder of one page is a folder out too.
    single = tmp_path / "single"
    (single / "deep").mkdir(parents=True)
    (single / "deep" / "only.html").write_bytes(article_html)
    one = CliRunner().invoke(main, ["clean", str(single), "-o", str(tmp_path / "one"), "-q"])
    assert one.exit_code == 0 and (tmp_path / "one" / "deep" / "only.txt").is_file()

    other = tmp_path / "other"
    other.mkdir()
    (other / "a.htm").write_bytes(article_html)
    clash = tmp_path / "clash"
    for args in ([str(inputs / "a.html"), str(other / "a.htm")],  # a.html and a.htm
                 [str(inputs / "a.html"), str(inputs / "a.html")],  # one file twice
                 [str(inputs / "sub"), str(other), str(inputs)]):  # sub/a.html beside a.htm
        refused = CliRunner().invoke(main, ["clean", *args, "-o", str(clash), "-q"])
        assert refused.exit_code == 2, (args, refused.output)
        assert "would both be written to" in refused.stderr
        assert not clash.exists()


def test_the_element_limit_is_an_option(tmp_path):
    page = tmp_path / "many.html"
    page.write_text("<html><body>" + "<p>word and more words</p>" * 2_000 + "</body></html>")
    refused = CliRunner().invoke(main, ["clean", str(page), "--max-elements", "1000"])
    assert refused.exit_code == 1
    assert "over the limit of 1,000 (raise it with max_elements= or --max-elements)" \
        in refused.output
    kept = CliRunner().invoke(main, ["clean", str(page), "--max-elements", "5000"])
    assert kept.exit_code == 0 and "word and more words" in kept.output


def test_stdin_and_html_format(article_html):
    proc = subprocess.run([sys.executable, "-m", "noisecbr_apps.cli", "clean", "-", "--format",
                           "html"], input=gzip.compress(article_html), capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"<html" in proc.stdout and b"Anemones" in proc.stdout
    assert b"Accept all cookies" not in proc.stdout


def test_missing_input_and_bad_model(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["clean", str(tmp_path / "nope.html")])
    assert result.exit_code == 3 and f"no such file or directory: {tmp_path / 'nope.html'}" \
        in result.output  # not found (noisecbr/exits.py), before anything is cleaned
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"junk")
    page = tmp_path / "p.html"
    page.write_text("<p>x</p>")
    result = runner.invoke(main, ["clean", str(page), "--model", str(junk)])
    assert result.exit_code == 4 and "not a safetensors model" in result.output


def test_bench_on_a_tiny_dataset(tmp_path, article_html):
    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    (data / "html" / "1.html.gz").write_bytes(gzip.compress(article_html))
    truth = ("Tide pools of the northern coast. When the tide goes out along the northern coast, "
             "it leaves behind hundreds of small rock pools that teem with life.")
    (data / "ground-truth.json").write_text(json.dumps({"1": {"url": "", "articleBody": truth}}))
    result = CliRunner().invoke(main, ["bench", str(data), "-e", "noisecbr", "-e", "none"])
    assert result.exit_code == 0, result.output
    assert "noisecbr" in result.output and "none" in result.output
    assert "oracle" not in result.output
    # The truth it scored against is said (issue 42: the whole truth scored without a word).
    assert result.output.splitlines()[0].startswith("set: 1 pages, scored against the whole")
    article = CliRunner().invoke(main, ["bench", str(data), "--truth", "article"]).output
    assert "scored against the article part" in article.splitlines()[0]
    table = tmp_path / "bench.csv"
    result = CliRunner().invoke(main, ["bench", str(data), "-e", "noisecbr", "-e", "none",
                                       "--oracle", "--csv", str(table)])
    assert result.exit_code == 0, result.output
    oracle = result.output.splitlines()[-1]
    assert oracle.startswith("oracle: best row per page") and " – " in oracle
    assert table.read_text().splitlines()[-1].split(",")[6] == ""  # no docs/s: cleans nothing


def test_bench_with_needs_cv(tmp_path):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "ground-truth.json").write_text("{}")
    result = CliRunner().invoke(main, ["bench", str(tmp_path / "set"), "--with",
                                       str(tmp_path / "set")])
    assert result.exit_code == 2 and "--with" in result.output


def test_bench_by_page_type(tmp_path, article_html):
    data = tmp_path / "set"
    (data / "html").mkdir(parents=True)
    truth = ("Tide pools of the northern coast. When the tide goes out along the northern coast, "
             "it leaves behind hundreds of small rock pools that teem with life.")
    records = {}
    for page_id, page_type in (("1", "article"), ("2", "article"), ("3", "forum")):
        (data / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(article_html))
        records[page_id] = {"url": "", "articleBody": truth if page_type == "article" else
                            "a forum thread that is not on this page at all",
                            "page_type": page_type}
    (data / "ground-truth.json").write_text(json.dumps(records))
    result = CliRunner().invoke(main, ["bench", str(data), "-e", "none", "--by-type"])
    assert result.exit_code == 0, result.output
    table = result.output.split("F1 by page type (shingle/word):")[1].splitlines()
    article = next(line for line in table if line.startswith("article"))
    forum = next(line for line in table if line.startswith("forum"))
    assert article.split()[1] == "2" and float(article.split()[2].split("/")[0]) > 0.1
    assert forum.split()[1] == "1" and article.split()[2].count("/") == 1
    shingle, words = (float(f1) for f1 in forum.split()[2].split("/"))
    assert shingle == 0.0 and words < 0.1  # "a" and "the" are the truth's words too
    assert next(line for line in table if line.startswith("all")).split()[1] == "3"


def test_both_command_lines_share_one_table_of_exit_codes():
    import ast

    from noisecbr import exits

    # noisecbr clean's documented codes, which scripts already rely on.
    assert (exits.EXIT_PARTIAL, exits.EXIT_USAGE, exits.EXIT_MODEL, exits.EXIT_CASEBASE) == (
        1, 2, 4, 5)
    root = Path(__file__).resolve().parents[1]
    own_tables = []
    for package in ("noisecbr", "casebase", "training"):
        for path in (root / package).rglob("*.py"):
            if path.name == "exits.py" and path.parent.name == "noisecbr":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = node.targets if isinstance(node, ast.Assign) else []
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                own_tables += [f"{path.name}: {n}" for n in names if n.startswith("EXIT_")]
    assert own_tables == []


def test_the_labels_are_defined_once():
    # NOISE / DATA / MIXTURE / COMMENT (and LABELS) are assigned in noisecbr/result.py only;
    # everything else imports them (an alias derived from them, like sst's _NOISE, is fine).
    import ast

    root = Path(__file__).resolve().parents[1]
    names = {"NOISE", "DATA", "MIXTURE", "COMMENT", "LABELS", "PAPER_LABELS"}
    elsewhere = []
    for package in ("noisecbr", "casebase", "training"):
        for path in (root / package).rglob("*.py"):
            if path == root / "noisecbr" / "result.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = (node.targets if isinstance(node, ast.Assign)
                           else [node.target] if isinstance(node, ast.AnnAssign) else [])
                bound = [n for t in targets
                         for n in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
                elsewhere += [f"{path.name}: {n.id}" for n in bound
                              if isinstance(n, ast.Name) and n.id in names]
    assert elsewhere == []


def test_json_output_names_the_class_of_each_probability(article_html, tmp_path):
    import doctest

    import noisecbr.result
    from noisecbr.result import LABELS

    page = tmp_path / "page.html"
    page.write_bytes(article_html)
    result = CliRunner().invoke(main, ["clean", str(page), "--format", "json"])
    assert result.exit_code == 0, result.output
    decisions = json.loads(result.output)["decisions"]
    assert decisions
    for decision in decisions:
        assert list(decision["probabilities"]) == list(LABELS)
    assert doctest.testmod(noisecbr.result).failed == 0


def test_training_tables_say_what_each_column_measures():
    from training import report

    metrics = {"rates": {label: 0.5 for label in ("noise", "data", "mixture")}, "mse": 0.1,
               "accuracy": 0.5, "balanced_accuracy": 0.5}
    header = report.format_table({"paper": {"val": metrics, "unseen_walk": metrics}},
                                 parts=("val", "unseen_walk")).splitlines()[0]
    assert "paper: validation sites" in header and "paper: unseen sites, walk cases" in header
    assert "unseen_walk" not in header


def test_no_progress_bar_when_stderr_is_not_a_terminal(article_html, tmp_path):
    # A redirected log gets the summary lines, not kilobytes of carriage-return updates.
    pages = tmp_path / "pages"
    pages.mkdir()
    for k in range(3):
        (pages / f"p{k}.html").write_bytes(article_html)
    (pages / "broken.html").write_bytes(b"")
    done = subprocess.run([sys.executable, "-m", "noisecbr_apps.cli", "clean", str(pages), "-o",
                           str(tmp_path / "out")], capture_output=True, check=False)
    assert done.returncode == 1 and b"1 of 4 inputs failed" in done.stderr
    assert b"\r" not in done.stderr and b"page/s" not in done.stderr
