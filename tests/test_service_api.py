"""The web service's API (``noisecbr serve``) through FastAPI's TestClient: answers, limits,
error answers (never a traceback, never a 500 for bad input) and the correction flow."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("httpx", reason="TestClient needs httpx (dev extra)")

from click.testing import CliRunner
from fastapi.testclient import TestClient

from casebase.cli import cli as casebase_cli
from noisecbr.cleaner import Cleaner
from noisecbr_apps.service.app import Settings, create_app

FIXTURE = Path(__file__).parent / "fixtures" / "casebase"
TRUTH = json.loads((FIXTURE / "ground-truth.json").read_text())
TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BYLINE = "/html/body/main/div/div"  # "Posted in tips": kept by the model on both news pages


def _page(name: str) -> bytes:
    return gzip.decompress((FIXTURE / "html" / f"{name}.html.gz").read_bytes())


@pytest.fixture(scope="module")
def readonly():
    with TestClient(create_app(Settings(max_body=200_000))) as client:
        yield client


@pytest.fixture
def served(tmp_path, flawed_model):
    """A server on a case base holding the dataset's blog pages (no page of the news site)."""
    db = tmp_path / "cb.sqlite"
    pages = tmp_path / "blogs"
    (pages / "html").mkdir(parents=True)
    for name in ("blog-1", "blog-2"):
        (pages / "html" / f"{name}.html.gz").write_bytes((FIXTURE / "html" /
                                                          f"{name}.html.gz").read_bytes())
    (pages / "ground-truth.json").write_text(json.dumps({k: v for k, v in TRUTH.items()
                                                         if k.startswith("blog")}))
    result = CliRunner().invoke(casebase_cli, ["--db", str(db), "import", str(pages), "-q",
                                               "-j", "0", "--no-oracle"])
    assert result.exit_code == 0, result.output
    with TestClient(create_app(Settings(db=str(db), token=TOKEN, model=flawed_model))) as client:
        yield client


def _one_line(answer) -> str:
    detail = answer.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and "Traceback" not in detail
    return detail


def test_clean_answers_text_html_or_json_like_the_cli(readonly):
    page = _page("news-1")
    text = readonly.post("/clean", content=page, params={"format": "text"},
                         headers={"Content-Type": "text/html"})
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert text.text.startswith("Work to repair") and "Most read" not in text.text
    assert "Harbour wall repairs" not in text.text  # the headline is the title, not body text
    html = readonly.post("/clean", json={"html": page.decode(), "options": {"format": "html"}})
    assert html.status_code == 200 and "<script" not in html.text
    assert "sandbox" in html.headers["content-security-policy"]  # opened in a browser: inert
    as_json = readonly.post("/clean", json={"html": page.decode(), "url": "https://a.test/x"}
                            ).json()
    assert as_json["url"] == "https://a.test/x" and as_json["text"] == text.text.rstrip("\n")
    assert as_json == json.loads(Cleaner().clean(page, url="https://a.test/x").to_json())
    markdown = readonly.post("/clean", content=page, params={"format": "markdown"},
                             headers={"Content-Type": "text/html"})
    assert markdown.status_code == 200
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text == as_json["markdown"] + "\n"
    linked = readonly.post("/clean", json={"html": page.decode(), "url": "https://a.test/x",
                                           "options": {"format": "markdown", "links": True}})
    assert linked.text == Cleaner().clean(page, url="https://a.test/x").to_markdown(
        links=True) + "\n"
    smooth = readonly.post("/clean", json={"html": page.decode(), "options": {"smooth": 2.0}})
    assert smooth.json()["text"] == Cleaner(smooth=2.0).clean(page).text


def test_clean_options_reach_the_cleaner(readonly):
    page = _page("news-1")
    for options in ({"comments": True}, {"favor": "precision"}, {"favor": "recall"}):
        answer = readonly.post("/clean", json={"html": page.decode(), "options": options})
        assert answer.status_code == 200
        assert answer.json()["text"] == Cleaner(**options).clean(page).text
    bad = readonly.post("/clean", json={"html": page.decode(), "options": {"favor": "speed"}})
    assert bad.status_code == 422 and "favor" in _one_line(bad)
    # The page's kind given, and the headline first: as the library does them.
    answer = readonly.post("/clean", json={"html": page.decode(), "options": {
        "page_type": "forum", "title": True}}).json()
    expected = Cleaner(title=True).clean(page, page_type="forum")
    assert answer["page_type"] == "forum" and answer["text"] == expected.text
    assert answer["text"].startswith("Harbour wall repairs")
    assert 0.0 <= answer["confidence"] <= 1.0
    bad = readonly.post("/clean", json={"html": page.decode(), "options": {"page_type": "blog"}})
    assert bad.status_code == 422 and "page_type" in _one_line(bad)


@pytest.mark.parametrize("body, headers, status, says", [
    # Refused by its signature, with the format named (noisecbr.prepare.sniff).
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, {"Content-Type": "text/html"}, 422,
     "PNG image"),
    (b"GIF89a", {"Content-Type": "image/gif"}, 415, "not image/gif"),
    (b"", {"Content-Type": "text/html"}, 422, "not a page"),
    (b"{not json", {"Content-Type": "application/json"}, 422, "JSON"),
    (b'{"url": "https://a.test"}', {"Content-Type": "application/json"}, 422, "html"),
    (b'{"html": "<p>x</p>", "options": {"fomat": "text"}}', {"Content-Type":
                                                              "application/json"}, 422, "fomat"),
    (b'{"html": "<p>x</p>", "options": {"smooth": -1}}', {"Content-Type": "application/json"},
     422, "smooth"),
])
def test_bad_input_gets_a_4xx_with_one_line(readonly, body, headers, status, says):
    answer = readonly.post("/clean", content=body, headers=headers)
    assert answer.status_code == status
    assert says in _one_line(answer)


def test_an_oversized_body_is_refused_while_it_is_read(readonly):
    big = b"<p>" + b"x" * 300_000 + b"</p>"
    declared = readonly.post("/clean", content=big, headers={"Content-Type": "text/html"})
    assert declared.status_code == 413 and "200,000 bytes" in _one_line(declared)
    # Without a Content-Length (chunked), the count stops the read past the limit.
    chunks = iter([b"<p>" + b"y" * 80_000] * 4)
    streamed = readonly.post("/clean", content=chunks, headers={"Content-Type": "text/html"})
    assert streamed.status_code == 413
    assert readonly.post("/review", json={"html": "<p>" + "z" * 250_000}).status_code == 413


def test_a_page_over_the_time_limit_is_stopped_and_the_next_is_served(readonly):
    slow = "<html><body>" + "".join(
        f'<div class="c{i % 7}"><p>word {i}</p><a href="/x{i}">link</a></div>'
        for i in range(40_000)) + "</body></html>"
    with TestClient(create_app(Settings(timeout=0.3))) as client:
        answer = client.post("/clean", content=slow.encode(), params={"format": "text"},
                             headers={"Content-Type": "text/html"})
        assert answer.status_code == 503 and "limit of 0.3 s" in _one_line(answer)
        # The stopped job's process is replaced (about a second: it loads the model); the
        # limit counts the wait for it, so until it is back a page may get the same 503.
        for _ in range(40):
            again = client.post("/clean", content=b"<p>A short page.</p>",
                                params={"format": "text"}, headers={"Content-Type": "text/html"})
            if again.status_code == 200:
                break
            assert again.status_code == 503 and "its wait included" in _one_line(again)
            time.sleep(0.25)
        assert again.status_code == 200 and "short page" in again.text


def test_without_a_case_base_cleaning_works_and_the_rest_says_why_not(readonly):
    assert readonly.get("/healthz").json()["casebase"] == "none"
    for method, path, body in [("post", "/explain", {"html": "<p>x</p>"}),
                               ("get", "/cases/1", None)]:
        answer = getattr(readonly, method)(path, **({"json": body} if body else {}))
        assert answer.status_code == 503 and "--db" in _one_line(answer)
    memory = readonly.post("/clean", json={"html": "<p>x</p>", "options": {"memory": True}})
    assert memory.status_code == 503 and "--db" in _one_line(memory)
    write = readonly.post("/pages", json={"html": "<p>x</p>", "labels": {}}, headers=AUTH)
    assert write.status_code == 403 and "--token" in _one_line(write)


def test_write_endpoints_need_the_token(served):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        answer = served.post("/cases/1/label", json={"label": "noise"}, headers=headers)
        assert answer.status_code == 401 and "token" in _one_line(answer)
        assert answer.headers["www-authenticate"] == "Bearer"
        stored = served.post("/pages", json={"html": "<p>x</p>", "labels": {}}, headers=headers)
        assert stored.status_code == 401


def test_unknown_cases_and_pages_are_404(served):
    assert served.get("/cases/999999").status_code == 404
    answer = served.post("/cases/999999/label", json={"label": "noise"}, headers=AUTH)
    assert answer.status_code == 404 and "no case with id 999999" in _one_line(answer)
    labels = served.post("/pages/999999/labels", json={"labels": {"/html/body": "data"}},
                         headers=AUTH)
    assert labels.status_code == 404 and "no page" in _one_line(labels)
    assert served.get("/cases/0").status_code == 422
    assert served.get("/cases/abc").status_code == 422


@pytest.mark.parametrize("labels, says", [({"/html/body": "spam"}, "not one of"),
                                          ({"/html/body[": "noise"}, "invalid XPath")])
def test_bad_labels_are_422(served, labels, says):
    answer = served.post("/pages", json={"html": "<p>x</p>", "labels": labels}, headers=AUTH)
    assert answer.status_code == 422 and says in _one_line(answer)
    assert served.post("/cases/1/label", json={"label": "spam"},
                       headers=AUTH).status_code == 422


def test_an_unreadable_case_base_is_503_not_500(tmp_path):
    db = tmp_path / "broken.sqlite"
    db.write_bytes(b"this is not a database file" * 100)
    with TestClient(create_app(Settings(db=str(db), token=TOKEN))) as client:
        assert client.get("/healthz").json()["casebase"].startswith("unavailable")
        for answer in (
            client.get("/cases/1"),
            client.post("/cases/1/label", json={"label": "noise"}, headers=AUTH),
            client.post("/clean", json={"html": "<p>x</p>", "url": "https://a.test/",
                                        "options": {"memory": True}}),
            client.post("/explain", json={"html": "<p>x</p>"}),
            client.post("/pages", json={"html": "<p>x</p>", "labels": {}}, headers=AUTH),
        ):
            assert answer.status_code == 503, answer.text
            assert "case base" in _one_line(answer)


def test_an_unexpected_error_is_a_one_line_500(served):
    class Broken:
        def get_case(self, case_id):
            raise RuntimeError("a bug\nwith a second line")

    served.app.state.casebase, real = Broken(), served.app.state.casebase
    try:
        answer = served.get("/cases/1")
    finally:
        served.app.state.casebase = real
    assert answer.status_code == 500
    assert _one_line(answer) == "internal error (RuntimeError), logged by the server"


def test_a_correction_over_the_api_cleans_the_sites_next_page(served):
    url1, url2 = TRUTH["news-1"]["url"], TRUTH["news-2"]["url"]
    second = {"html": _page("news-2").decode(), "url": url2,
              "options": {"memory": True, "format": "text"}}
    before = served.post("/clean", json=second)
    assert before.status_code == 200 and "Posted in" in before.text
    assert before.headers["x-noisecbr-memory-pages"] == "0"
    stored = served.post("/pages", headers=AUTH, json={
        "html": _page("news-1").decode(), "url": url1, "labels": {BYLINE: "noise"}}).json()
    assert stored["page_id"] and stored["counts"] == {"noise": 1}
    case_id = stored["cases"][BYLINE]["id"]
    after = served.post("/clean", json=second)
    assert "Posted in" not in after.text and "The Victorian market hall" in after.text
    assert after.headers["x-noisecbr-memory-pages"] == "1"
    # Storing the same page again stores nothing; more labels go to the stored page.
    again = served.post("/pages", headers=AUTH, json={
        "html": _page("news-1").decode(), "url": url1, "labels": {BYLINE: "noise"}}).json()
    assert again["page_id"] is None and again["duplicate_of"] == stored["page_id"]
    more = served.post(f"/pages/{stored['page_id']}/labels", headers=AUTH,
                       json={"labels": {"/html/body/main/div/article": "data",
                                        "/html/body/nav": "noise"}}).json()
    assert more["added"] == 1 and more["unknown_paths"] == ["/html/body/nav"]
    # A relabelling keeps the history, as `casebase label` does, and acts at once.
    relabelled = served.post(f"/cases/{case_id}/label", headers=AUTH,
                             json={"label": "data", "note": "the byline is content"})
    assert relabelled.json() == {"id": case_id, "old_label": "noise", "label": "data",
                                 "source": "human"}
    case = served.get(f"/cases/{case_id}").json()
    assert case["label"] == "data" and case["path"] == BYLINE and "Posted in" in case["html"]
    assert [(h["old_label"], h["new_label"], h["note"]) for h in case["history"]] == [
        ("noise", "data", "the byline is content")]
    assert "Posted in" in served.post("/clean", json=second).text


def test_explain_lists_the_nearest_stored_cases(served):
    answer = served.post("/explain", json={"html": _page("news-2").decode(),
                                           "url": TRUTH["news-2"]["url"], "options": {"k": 2}})
    assert answer.status_code == 200
    items = {item["path"]: item for item in answer.json()}
    footer = items["/html/body/footer"]
    assert footer["decision"] == "noise" and len(footer["neighbours"]) == 2
    assert all(n["site"].endswith("workshop-blog.test") for n in footer["neighbours"])
    assert served.post("/explain", json={"html": "<p>x</p>", "options": {"k": 0}}
                       ).status_code == 422


HOSTILE = """<html><head><link rel="stylesheet" href="https://evil.test/a.css">
<meta http-equiv="refresh" content="0;url=https://evil.test/"></head><body onload="steal()">
<main><h1 onclick="steal()">A title</h1><p>Words of the story, <a href="javascript:steal()">
a link</a> and <a href="https://evil.test/page">another</a>.</p>
<img src="https://evil.test/pixel.gif" onerror="steal()" srcset="https://evil.test/b.png 2x">
<iframe src="https://evil.test/frame"></iframe><object data="https://evil.test/o.swf"></object>
<form action="https://evil.test/post"><input name="q"></form>
<svg><script>steal()</script><image href="https://evil.test/c.png"/></svg>
<div style="background: url(https://evil.test/bg.png)">styled</div>
<style>@import url(https://evil.test/d.css); p { color: red }</style>
<script>steal()</script></main></body></html>"""


def test_the_review_page_draws_a_sanitised_page(readonly):
    answer = readonly.post("/review", json={"html": HOSTILE, "url": "https://news.test/a"})
    assert answer.status_code == 200
    data = answer.json()
    frame = data["frame"]
    for bad in ("<script", "steal()", "evil.test", "<iframe", "<object", "<form", "<input",
                " on", "javascript:", "http-equiv"):
        assert bad not in frame, bad
    assert "A title" in frame and "Words of the story" in frame
    marked = re.findall(r'data-ncbr="(\d+)" data-ncbr-label="(\w+)"', frame)
    decisions = data["decisions"]
    drawn = [int(i) for i, _ in marked]
    # Every decided subtree is drawn with its label, the frame and the form too (made inert).
    assert [label for _, label in marked] == [decisions[i]["label"] for i in drawn]
    assert sorted(drawn) == list(range(len(decisions)))
    assert {"iframe", "form"} <= {d["tag"] for d in decisions}
    assert data["casebase"] is False and "neighbours" not in data
    page = readonly.get("/review")
    assert page.status_code == 200 and "review.js" in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy


def test_the_openapi_document_describes_the_endpoints(readonly):
    document = readonly.get("/openapi.json").json()
    assert {"/clean", "/explain", "/cases/{case_id}", "/cases/{case_id}/label", "/pages",
            "/pages/{page_id}/labels", "/review", "/healthz"} <= set(document["paths"])
    body = document["paths"]["/clean"]["post"]["requestBody"]["content"]
    assert {"text/html", "application/json"} <= set(body)
    assert "CleanOptions" in document["components"]["schemas"]
    assert readonly.get("/docs").status_code == 200


def test_settings_reach_the_workers_through_the_environment():
    from noisecbr_apps.service.app import SETTINGS_ENV

    settings = Settings(db="sqlite:///x.sqlite", token="t", max_body=5, timeout=2.5, pool=2)
    assert Settings.from_env(settings.to_env()) == settings
    assert Settings.from_env({}) == Settings()
    # One variable with every field, None included: nothing left for another to fill in.
    assert list(settings.to_env()) == [SETTINGS_ENV]
    assert Settings.from_env({**Settings().to_env(), "NOISECBR_SERVE_DB": "x.sqlite",
                              "NOISECBR_SERVE_TOKEN": "t"}) == Settings()


def test_serve_command(tmp_path, monkeypatch):
    import subprocess
    import sys

    from noisecbr.exits import EXIT_CASEBASE
    from noisecbr_apps.cli import main

    runner = CliRunner()
    shown = runner.invoke(main, ["serve", "--help"])
    assert shown.exit_code == 0 and "--workers" in shown.output and "--token" in shown.output
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database" * 100)
    failed = runner.invoke(main, ["serve", "--db", str(broken)])
    assert failed.exit_code == EXIT_CASEBASE and "cannot open the case base" in failed.output
    # Every interface: said before the server starts (here it does not: run is replaced).
    import uvicorn

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs["host"]))
    every = runner.invoke(main, ["serve", "--host", "0.0.0.0"])
    assert started == ["0.0.0.0"] and "warning: listening on every interface" in every.output
    # noisecbr itself never imports the case base: `serve` is found lazily.
    code = "import sys, noisecbr_apps.cli; assert 'casebase' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def _inject(monkeypatch, db: Path) -> None:
    """A user's environment naming ``db`` and a token in the service's internal variables."""
    monkeypatch.setenv("NOISECBR_SERVE_DB", str(db))
    monkeypatch.setenv("NOISECBR_SERVE_TOKEN", "injected")
    monkeypatch.setenv("NOISECBR_SERVE_SETTINGS", json.dumps({"db": str(db), "token": "injected"}))


def test_internal_variables_a_user_set_change_nothing_served(tmp_path, monkeypatch):
    # Issue 43: NOISECBR_SERVE_DB in the environment was served, unchecked and unshown.
    import uvicorn

    from casebase.store import CaseBase
    from noisecbr_apps.cli import main
    from noisecbr_apps.service.app import app_from_env

    other, served = tmp_path / "other.sqlite", tmp_path / "served.sqlite"
    CaseBase.open(str(other)).close()
    workers = []

    def run(app: str, **_options) -> None:  # what a worker does: the factory, then serve
        module, name = app.split(":")
        assert (module, name) == ("noisecbr_apps.service.app", app_from_env.__name__)
        with TestClient(app_from_env(), base_url="http://127.0.0.1:8000") as client:
            workers.append((client.app.state.settings, client.get("/healthz").json()))

    monkeypatch.setattr(uvicorn, "run", run)
    for options, db in (([], None), (["--db", str(served), "--token", TOKEN], served)):
        _inject(monkeypatch, other)
        result = CliRunner().invoke(main, ["serve", *options])
        assert result.exit_code == 0, result.output
        settings, health = workers.pop()
        assert settings.db == (str(db) if db else None) and settings.token != "injected"
        assert health["casebase"] == ("ok" if db else "none")
        assert health["writes"] is bool(db)
        for name in ("NOISECBR_SERVE_DB", "NOISECBR_SERVE_TOKEN", "NOISECBR_SERVE_SETTINGS"):
            assert f"warning: {name} is set in the environment: ignored" in result.output
        # The banner shows every setting in effect.
        banner = next(line for line in result.output.splitlines() if "settings:" in line)
        assert f"case base {db or 'none (read-only cleaning)'};" in banner
        assert ("write token from --token" if db else "no write token") in banner
        for shown in ("model embedded", "2 cleaning process(es) per worker",
                      "body <= 10,000,000 bytes", "page time limit 30 s", "read timeout 30 s",
                      "hosts 127.0.0.1,localhost,[::1]", "1 HTTP worker(s)"):
            assert shown in banner, shown


def test_a_worker_refuses_a_case_base_at_another_schema_revision(tmp_path, monkeypatch,
                                                                 caplog):
    import logging

    from casebase.connection import migrate
    from casebase.store import CaseBase
    from noisecbr.exits import EXIT_CASEBASE
    from noisecbr_apps.service.app import app_from_env

    old = tmp_path / "old.sqlite"
    with CaseBase.open(str(old)) as casebase:  # migrated since `serve` checked it
        migrate(casebase.engine, "0001", downgrade=True)
    for name, value in Settings(db=str(old)).to_env().items():
        monkeypatch.setenv(name, value)
    with caplog.at_level(logging.ERROR, logger="noisecbr.serve"), \
            pytest.raises(SystemExit) as stopped:
        app_from_env()
    assert stopped.value.code == EXIT_CASEBASE
    assert "cannot serve the case base" in caplog.text
    assert "older than this noisecbr" in caplog.text and "\n" not in caplog.messages[-1]


def test_explain_on_an_empty_case_base_says_so(tmp_path):
    from casebase.store import CaseBase

    CaseBase.open(str(tmp_path / "empty.sqlite")).close()  # as serve creates it
    with TestClient(create_app(Settings(db=str(tmp_path / "empty.sqlite")))) as client:
        answer = client.post("/explain", json={"html": "<p>x</p>"})
    assert answer.status_code == 409 and "no cases" in _one_line(answer)


def test_a_loopback_server_answers_only_to_loopback_names(monkeypatch):
    from noisecbr_apps.service import app as service_app
    from noisecbr_apps.service.cli import allowed_hosts

    # IPv6's loopback too (issue 43: --host ::1 answered to any Host).
    assert allowed_hosts("::1") == allowed_hosts("127.0.0.1") == "127.0.0.1,localhost,[::1]"
    assert allowed_hosts("0.0.0.0") is None and allowed_hosts("192.0.2.7") is None
    app = create_app(Settings(hosts=allowed_hosts("::1")))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/healthz", headers={"Host": "[::1]:8000"}).status_code == 200
        # A page of another site reaching it by DNS rebinding names its own host.
        assert client.get("/healthz", headers={"Host": "evil.test"}).status_code == 400
        # Past the bound of waiting pages, a clear 503 instead of an ever longer queue.
        monkeypatch.setattr(service_app, "MAX_PENDING", 0)
        busy = client.post("/clean", content=b"<p>x</p>", headers={"Content-Type": "text/html"})
        assert busy.status_code == 503 and "busy" in _one_line(busy)


def test_a_very_deep_page_is_reviewed_without_recursion_errors(readonly):
    deep = "<html><body>" + "<div>" * 5_000 + "deep text" + "</div>" * 5_000
    answer = readonly.post("/review", json={"html": deep + "</body></html>"})
    assert answer.status_code == 200
    data = answer.json()
    assert len(data["decisions"]) > 1_000  # tidy keeps libxml2's 1 500 levels
    assert data["frame"].count("data-ncbr-label=") == len(data["decisions"])


def test_the_review_answer_offers_an_unsure_box_first(readonly):
    data = readonly.post("/review", json={"html": _page("news-1").decode(),
                                          "url": TRUTH["news-1"]["url"]}).json()
    queue = data["queue"]
    assert 0 < len(queue) <= 10
    # The first box is one the network is unsure of (the embedded model: the headline or the
    # "Posted in" byline), not one of the boxes it is sure of.
    assert queue[0]["uncertainty"] > 0.03 and queue[-1]["uncertainty"] < 0.03
    assert {entry["path"] for entry in queue} <= {d["path"] for d in data["decisions"]}
    assert "/html/body" not in {entry["path"] for entry in queue}
    assert all(entry["recurrence"] == 1 for entry in queue)  # no case base: no other page
    assert [e["score"] for e in queue] == sorted((e["score"] for e in queue), reverse=True)
    assert "/pages/{page_id}/queue" in readonly.get("/openapi.json").json()["paths"]
    # Without a case base there is no stored page to queue.
    answer = readonly.get("/pages/1/queue")
    assert answer.status_code == 503 and "--db" in _one_line(answer)


def test_the_queue_of_a_stored_page_walks_it_in_the_mode_of_what_its_head_declared(served):
    # A stored page keeps its body only: whether its head declared an article is recorded
    # when it is stored, so its queue is walked in the precision mode, as the review page is.
    html = _page("news-1").decode()
    article = html.replace('<meta charset="utf-8">',
                           '<meta charset="utf-8"><meta property="og:type" content="article">')
    url = TRUTH["news-1"]["url"]
    modes = {}
    for name, page in (("declared", article), ("plain", html)):
        stored = served.post("/pages", headers=AUTH, json={
            "html": page, "url": url, "labels": {}, "source": name}).json()
        modes[name] = served.get(f"/pages/{stored['page_id']}/queue").json()["mode"]
        review = served.post("/review", headers=AUTH, json={"html": page, "url": url}).json()
        assert review["mode"] == modes[name]
    assert modes["declared"] == "precision" and modes["plain"] != "precision"


def test_the_queue_of_a_stored_page_leaves_out_what_the_site_already_decides(served):
    url1, url2 = TRUTH["news-1"]["url"], TRUTH["news-2"]["url"]
    stored = served.post("/pages", headers=AUTH, json={
        "html": _page("news-1").decode(), "url": url1, "labels": {BYLINE: "noise"}}).json()
    page_id = stored["page_id"]
    before = served.get(f"/pages/{page_id}/queue", params={"limit": 50}).json()
    assert before["site"] == "harbour-gazette.test" and before["site_pages"] == 0
    assert before["memory_pages"] == 1
    boxes = before["boxes"]
    assert boxes and BYLINE not in {box["path"] for box in boxes}  # labelled: settled
    assert set(boxes[0]) == {"index", "path", "decision", "probabilities", "words",
                             "uncertainty", "same_markup", "recurrence", "score"}
    assert all(box["path"] != "/html/body" and box["words"] > 0 for box in boxes)
    assert [b["score"] for b in boxes] == sorted((b["score"] for b in boxes), reverse=True)
    # The site's next page, stored unlabelled: the markup both pages share now recurs.
    served.post("/pages", headers=AUTH, json={"html": _page("news-2").decode(), "url": url2,
                                              "labels": {}})
    after = served.get(f"/pages/{page_id}/queue", params={"limit": 3}).json()
    assert after["site_pages"] == 1 and len(after["boxes"]) == 3
    recurs = {box["path"]: box["recurrence"] for box in after["boxes"]}
    assert "/html/body/footer" not in recurs or recurs["/html/body/footer"] == 2
    assert max(recurs.values()) == 2
    assert served.get("/pages/999999/queue").status_code == 404
    assert "no page with id 999999" in _one_line(served.get("/pages/999999/queue"))
    for limit in (0, 1001, "x"):
        assert served.get(f"/pages/{page_id}/queue", params={"limit": limit}
                          ).status_code == 422
