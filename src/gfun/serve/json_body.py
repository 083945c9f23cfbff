"""A request body decoded as JSON, strictly: UTF-8, no ``NaN``/``Infinity``, bounded nesting and numbers, no lone
surrogates; anything else is refused with status 400 (:class:`gfun.errors.RequestError`) naming why.

The nesting is bounded before the body is decoded (:func:`nesting_depth`), so the recursive decoder of the
standard library never meets more than :data:`MAX_JSON_DEPTH` levels.
"""

from __future__ import annotations

import json
import math
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


#: Bytes of a body scanned at once by :func:`nesting_depth` (its memory is a few times this, whatever the body).
_BLOCK = 2**20
_BACKSLASH, _QUOTE, _OPENING, _CLOSING = 92, 34, (91, 123), (93, 125)


def nesting_depth(body: bytes) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``body`` outside strings, without decoding it (so without recursion),
    in one pass linear in its length, by blocks of :data:`_BLOCK` bytes (numpy; the interpreter is free between
    the array operations, so other threads run).

    A backslash escapes the character after it (pairs counted left to right, as the decoder reads them); a string
    runs from an unescaped quote to the next one (to the end of the body when none follows, where the decoder
    stops); brackets count outside strings. Outside a string a backslash is not JSON: the decoder stops there, and
    every bracket before it is counted as the decoder meets it, so the depth returned is never below the depth the
    decoder reaches.
    """
    import numpy as np

    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0
    data = np.frombuffer(body, dtype=np.uint8)
    deepest = depth = 0
    run = 0  # backslashes ending the bytes before this block (the parity is what counts)
    in_string = False  # whether the bytes before this block end inside a string
    for start in range(0, len(data), _BLOCK):
        block = data[start:start + _BLOCK]
        index = np.arange(len(block), dtype=np.int32)
        backslash = block == _BACKSLASH
        begins = backslash.copy()  # the first backslash of each run
        begins[1:] &= ~backslash[:-1]
        begins[0] &= run == 0
        # where the current run of backslashes began (a run carried over began ``run`` bytes before the block)
        run_start = np.maximum.accumulate(np.where(begins, index, -run))
        escaping = backslash & ((index - run_start) & 1 == 0)  # the 1st, 3rd, ... backslash of a run
        escaped = np.empty_like(escaping)
        escaped[0] = run % 2 == 1
        escaped[1:] = escaping[:-1]
        quote = (block == _QUOTE) & ~escaped
        inside = np.bitwise_xor.accumulate(quote) ^ in_string  # for a quote: after it; a bracket is not one
        counted = ~escaped & ~inside
        opening = ((block == _OPENING[0]) | (block == _OPENING[1])) & counted
        closing = ((block == _CLOSING[0]) | (block == _CLOSING[1])) & counted
        steps = opening.view(np.int8) - closing.view(np.int8)
        levels = np.cumsum(steps, dtype=np.int32) + depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        in_string = bool(inside[-1])
        run = int(len(block) - run_start[-1]) if backslash[-1] else 0
    return deepest


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

