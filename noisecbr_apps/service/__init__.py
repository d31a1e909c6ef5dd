"""The web service (``noisecbr serve``): clean, explain and correct pages over HTTP, and the
review page that draws a page's decisions and takes corrections.

    app.py      create_app(Settings): the FastAPI app, its limits and error answers
    routes.py   the endpoints (/clean, /explain, /cases, /pages, /review, /healthz)
    work.py     what reads untrusted pages, run in a process pool under a time limit
    drawing.py  a page's decided subtrees marked and the page sanitised for the review page
    cli.py      the ``serve`` command (registered on ``noisecbr``)
    static/     review.html, review.css, review.js, frame.css (no build step)

Nothing here is imported by :mod:`noisecbr`; FastAPI and uvicorn come with the ``serve`` extra
(``pip install 'noisecbr[serve]'``).
"""
