"""Reading datasets: a ground truth stored as UTF-16 but read one byte per character."""

from __future__ import annotations

import json

from noisecbr.layout import read_dataset, repair_truth


def _dataset(tmp_path, truth: str):
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "1.html").write_text("<html><body><p>Hi</p></body></html>")
    (tmp_path / "ground-truth.json").write_text(
        json.dumps({"1": {"url": "https://example.com/a", "articleBody": truth}}))
    return next(read_dataset(tmp_path))


def test_utf16_truth_read_as_latin1_is_decoded_again(tmp_path):
    written = "Forgiving your enemies\r\n\r\n“Then all that’s left now” — Ünïcode."
    garbled = written.encode("utf-16").decode("latin-1")  # ÿþ, then a NUL per ASCII letter
    assert garbled.startswith("\xff\xfe") and "\x00" in garbled
    assert _dataset(tmp_path, garbled).truth == written


def test_other_truths_are_left_as_written(tmp_path):
    assert _dataset(tmp_path, "ÿþ is how the BOM looks").truth == "ÿþ is how the BOM looks"
    assert repair_truth("") == ""
    odd = "\xff\xfeA\x00\u20ac"  # a character beyond Latin-1: not bytes read as Latin-1
    assert repair_truth(odd) == odd
