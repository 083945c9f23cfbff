"""Strict JSON bodies: the nesting depth is found in one linear pass, as the decoder would meet it."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gfun.errors import RequestError
from gfun.serve import json_body
from gfun.serve.json_body import MAX_JSON_DEPTH, loads, nesting_depth


def reference_depth(body: bytes) -> int:
    """The deepest nesting outside strings, byte by byte (escapes and strings as the JSON decoder reads them)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if escaped:
            escaped = False
        elif byte == ord("\\"):
            escaped = True
        elif byte == ord('"'):
            in_string = not in_string
        elif not in_string and byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and byte in b"]}":
            depth -= 1
    return deepest


@settings(max_examples=400, deadline=None, derandomize=True)
@given(body=st.binary(max_size=80).map(lambda b: bytes(b"[{]}\\\"a"[x % 7] for x in b)),
       block=st.sampled_from([1, 2, 3, 7, 2**20]))
def test_nesting_depth_agrees_with_a_byte_by_byte_scanner(body: bytes, block: int) -> None:
    """Any mix of brackets, quotes and backslashes, scanned in blocks of any size (runs of backslashes and strings
    crossing the blocks): the same depth as a scanner reading one byte at a time."""
    saved = json_body._BLOCK
    json_body._BLOCK = block
    try:
        body = b"[" * (MAX_JSON_DEPTH + 1) + body  # past the shortcut for bodies with few brackets
        assert nesting_depth(body) == reference_depth(body)
    finally:
        json_body._BLOCK = saved


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.recursive(st.text(alphabet='[]{}"\\ab', max_size=6), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(alphabet='[]{}"\\', max_size=3), inner, max_size=3), max_leaves=30))
def test_nesting_depth_of_json_is_its_depth(value) -> None:
    def depth(v) -> int:
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        return 0 if children is None else 1 + max(map(depth, children), default=0)

    body = json.dumps([[[[[[[[[[[[[[[[[value]]]]]]]]]]]]]]]]]).encode()
    assert nesting_depth(body) == 17 + depth(value)


@pytest.mark.parametrize("name", ["escaped quotes", "backslashes", "quotes", "brackets", "strings of brackets"])
def test_nesting_depth_is_linear_on_the_largest_bodies(name: str) -> None:
    """8 MiB (the default body limit) of what makes a backtracking scanner quadratic (quotes and backslashes
    that open strings never closed): a linear pass takes a fraction of a second, a quadratic one days."""
    n = 8 * 2**20
    body = {"escaped quotes": b"[" * 17 + b'"' + b'\\"' * (n // 2),
            "backslashes": b"[" * 17 + b'"' + b"\\" * n,
            "quotes": b"[" * 17 + b'"' * n,
            "brackets": b"[" * (n // 2) + b"]" * (n // 2),
            "strings of brackets": b'["' + b"[" * n + b'"]'}[name]
    t0 = time.perf_counter()
    depth = nesting_depth(body)
    seconds = time.perf_counter() - t0
    assert depth == {"brackets": n // 2, "strings of brackets": 1}.get(name, 17)
    assert seconds < 3.0, f"{seconds:.2f} s"


def test_the_issue_body_is_refused_as_too_deep() -> None:
    body = b"[" * 17 + b'"' + b'\\"' * 30_000
    with pytest.raises(RequestError, match="nested more than 16 deep") as exc:
        loads(body)
    assert exc.value.status == 400


@pytest.mark.parametrize(("body", "message"), [
    (b"[" * 19_000, "nested more than 16 deep"),
    (b'{"documents": ' + b"[" * 17 + b"]" * 17 + b"}", "nested more than 16 deep"),
    (b'{"documents": [{"text": "a", "lang": "de", "id": ' + b"[" * 14 + b"]" * 14 + b"}]}", "nested more than 16"),
    (b'{"documents": [{"text": "Hallo", "lang": "de"}], "top_k": ' + b"9" * 5000 + b"}", "5000 characters"),
    (b'{"documents": [{"text": "Hallo", "lang": "de", "id": ' + b"1" * 65 + b"}]}", "more than the limit of 64"),
    (b'{"documents": [{"text": "Hallo", "lang": "de", "id": 1e999}]}', "too large for a 64-bit float"),
    (b'{"documents": [{"text": "Hallo", "lang": "de", "id": NaN}]}', "NaN is not JSON"),
    (b'{"documents": [{"text": "Hallo \\ud800", "lang": "de"}]}', "lone surrogate \\ud800"),
    (b'{"documents": [{"text": "Hallo", "lang": "de", "\\udfff": 1}]}', "lone surrogate \\udfff"),
    (b'\xef\xbb\xbf{"documents": []}', "not valid JSON"),
    (b'{"documents": [{"text": "\xff"}]}', "not valid UTF-8 (byte 25)"),
])
def test_malformed_bodies_are_400(client, body: bytes, message: str) -> None:
    """Deep nesting, long numbers, NaN, lone surrogates, a byte-order mark: 400 naming why, never a 500."""
    r = client.post("/predict", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert message in r.json()["detail"]
