"""``gfun serve``: a saved model behind a small HTTP API, with a page to try it (``static/``).

:mod:`gfun.serve.app` holds the routes and :func:`~gfun.serve.app.serve`; the model and the checks of a request's
documents are in :mod:`gfun.serve.service`, strict JSON in :mod:`gfun.serve.json_body`, what every request passes
before the application in :mod:`gfun.serve.guard`, the connections (late headers, the cap) in
:mod:`gfun.serve.connections` and the API description in :mod:`gfun.serve.schemas`.
"""
