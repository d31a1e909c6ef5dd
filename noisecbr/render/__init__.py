"""Render: what a walk kept, as text and sanitised HTML (:mod:`.text`), Markdown (:mod:`.markdown`),
the author a byline names (:mod:`.byline`) and the result's expected F1 (:mod:`.confidence`).

Entry points: :func:`noisecbr.render.text.render_text`,
:func:`noisecbr.render.text.render_html`, :func:`noisecbr.render.markdown.render_markdown`.

The modules are imported by name (the stages' modules import each other's, so this package
imports none of them).
"""
