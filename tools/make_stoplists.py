"""Write ``noisecbr/data/stoplists.json``: the stop words of the web's most used languages, from
jusText's stoplists (the maintained lists jusText's boilerplate removal reads stop-word density
with; BSD 2-Clause, their notice is kept in the file).

    pip install justext && python tools/make_stoplists.py

The engine reads the file (:mod:`noisecbr.features.language`); it never imports jusText.
"""

from __future__ import annotations

import json
from importlib import metadata, resources
from pathlib import Path

#: ISO 639-1 code → jusText's stoplist name. The languages of the most web pages (W3Techs'
#: content-language survey) that jusText has a list for; Japanese and Chinese have none (they
#: do not separate words), Korean's list is left out (13 000 inflected forms, a fifth of all).
LANGUAGES = {
    "en": "English", "de": "German", "es": "Spanish", "fr": "French", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "pl": "Polish", "tr": "Turkish",
    "sv": "Swedish", "cs": "Czech", "da": "Danish", "nb": "Norwegian_Bokmal", "fi": "Finnish",
    "hu": "Hungarian", "ro": "Romanian", "el": "Greek", "bg": "Bulgarian", "uk": "Ukrainian",
    "ar": "Arabic", "fa": "Persian", "he": "Hebrew", "id": "Indonesian", "vi": "Vietnamese",
    "hi": "Hindi", "sk": "Slovak", "hr": "Croatian", "ca": "Catalan", "sr": "Serbian",
}
OUT = Path(__file__).resolve().parents[1] / "noisecbr" / "data" / "stoplists.json"


def main() -> None:
    """Read the lists and write the file (words lower-cased, sorted, one string per language)."""
    lists = {}
    for code, name in LANGUAGES.items():
        text = (resources.files("justext") / "stoplists" / f"{name}.txt").read_text("utf-8")
        words = sorted({w.strip().lower() for w in text.split() if w.strip()})
        lists[code] = " ".join(words)
    license_text = next(
        (f.read_text() for f in metadata.distribution("justext").files or []
         if f.name.upper().startswith("LICENSE")), "BSD 2-Clause License")
    OUT.write_text(json.dumps({
        "source": f"jusText {metadata.version('justext')} stoplists "
                  "(https://github.com/miso-belica/jusText)",
        "license": license_text,
        "languages": lists,
    }, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(lists)} languages, {sum(len(v.split()) for v in lists.values()):,} "
          f"words, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
