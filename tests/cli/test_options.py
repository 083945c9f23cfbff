"""Command-line option parsing (gfun.cli.options): ``--view-param``."""

from __future__ import annotations

import pytest

from gfun.cli.options import parse_view_params


def test_view_param_option() -> None:
    out = parse_view_params(["r.hidden_size=16", "r.wce=true", "b.model=some/dir", "m.source=vec:x"],
                            {"m": {"source": "e5"}})
    assert out == {"r": {"hidden_size": 16, "wce": True}, "b": {"model": "some/dir"}, "m": {"source": "vec:x"}}
    for bad in ("hidden_size=16", "q.x=1", "r.=3", "r.x"):
        with pytest.raises(ValueError):
            parse_view_params([bad], None)
