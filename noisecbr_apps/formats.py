"""A result in one of ``noisecbr clean``'s page formats: what the batch of files and the crawl
of URLs write for each page."""

from __future__ import annotations

from typing import Any

__all__ = ["rendered"]


def rendered(result: Any, fmt: str) -> str:
    """``result`` as ``fmt``: text, html, json, or markdown with ``+links`` and ``+images`` as
    asked (``markdown+links``); rendered on access, so that a rendering error is the page's."""
    if fmt == "json":
        return result.to_json() + "\n"
    if fmt.startswith("markdown"):
        flags = fmt.split("+")[1:]
        return result.to_markdown(links="links" in flags, images="images" in flags) + "\n"
    return result.html if fmt == "html" else result.text + "\n"
