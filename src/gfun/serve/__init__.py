"""``gfun serve``: a saved model behind a small HTTP API (:mod:`gfun.serve.app`), with a page to try it
(``static/``).
"""
