"""A request body decoded as JSON, strictly: UTF-8, no ``NaN``/``Infinity``, bounded nesting and numbers, no lone
surrogates; anything else is refused with status 400 (:class:`gfun.errors.RequestError`) naming why.

The nesting is bounded before the body is decoded (:func:`nesting_depth`), so the recursive decoder of the
standard library never meets more than :data:`MAX_JSON_DEPTH` levels.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from gfun.errors import RequestError

__all__ = ["MAX_JSON_DEPTH", "MAX_NUMBER_CHARS", "loads", "nesting_depth"]

#: Deepest nesting of arrays and objects in a request body (a valid request needs 3).
MAX_JSON_DEPTH = 16
#: Longest number, in characters, in a request body.
MAX_NUMBER_CHARS = 64


class _Refused(Exception):
    """A body refused while it is decoded (raised from the JSON decoder's hooks)."""


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def nesting_depth(body: bytes) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``body`` outside strings (without decoding it, so without recursion)."""
    import numpy as np

    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0
    codes = np.frombuffer(_JSON_STRING.sub(b"", body), dtype=np.uint8)
    steps = np.isin(codes, (91, 123)).astype(np.int64) - np.isin(codes, (93, 125))
    return int(np.cumsum(steps).max(initial=0))


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise _Refused(f"a number of {len(text)} characters, more than the limit of {MAX_NUMBER_CHARS}")
        value = kind(text)
        if kind is float and not math.isfinite(value):
            raise _Refused(f"the number {text} is too large for a 64-bit float")
        return value
    return parse


def _not_json(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _strings_and_depth(payload: Any) -> None:
    """Refuse strings with lone surrogates (not Unicode text) and nesting beyond :data:`MAX_JSON_DEPTH`."""
    stack: list[tuple[Any, int]] = [(payload, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            items: Iterable[Any] = (value,)
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise _Refused(f"arrays and objects nested more than {MAX_JSON_DEPTH} deep")
            items = value.keys() if isinstance(value, dict) else ()
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
        else:
            continue
        for text in items:
            if isinstance(text, str) and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise _Refused(f"a string holds the lone surrogate \\u{ord(text[exc.start]):04x}, which is "
                                   "not Unicode text") from None


def loads(body: bytes) -> Any:
    """``body`` decoded as JSON (strict UTF-8, no ``NaN``/``Infinity``, bounded nesting and numbers); 400 if not."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(400, f"the request body is not valid UTF-8 (byte {exc.start})") from None
    try:
        if nesting_depth(body) > MAX_JSON_DEPTH:
            raise _Refused(f"arrays and objects nested more than {MAX_JSON_DEPTH} deep")
        payload = json.loads(text, parse_int=_number(int), parse_float=_number(float), parse_constant=_not_json)
        _strings_and_depth(payload)
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"the request body is not valid JSON ({exc.msg} at line {exc.lineno} column "
                                f"{exc.colno})") from None
    except _Refused as exc:
        raise RequestError(400, f"the request body is refused: {exc}") from None
    except RecursionError:  # not expected after the nesting check; still a refusal, never a crash
        raise RequestError(400, f"the request body is refused: arrays and objects nested more than "
                                f"{MAX_JSON_DEPTH} deep") from None
    return payload

