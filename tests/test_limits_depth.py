"""nesting_depth of JSON text against the two-pass strip it does in one (strings, then all but brackets)."""

from __future__ import annotations

import re
from itertools import accumulate

from hypothesis import given, settings
from hypothesis import strategies as st

from ocsplan.limits import nesting_depth

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')  # a JSON string (no newline after a backslash)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _reference(text: str) -> int:
    brackets = re.sub(r"[^\[\]{}]+", "", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='[]{}"\\ a\n\u00e9', max_size=40))
def test_json_depth_is_the_two_pass_strip(text: str) -> None:
    assert nesting_depth(text) == _reference(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='[]{}" a\u00e9', max_size=60))
def test_json_depth_without_backslashes_is_the_two_pass_strip(text: str) -> None:
    """The texts of the string-method path (no backslash), mostly balanced ones."""
    assert nesting_depth(text) == _reference(text)


@given(st.recursive(st.just("1") | st.just('"[{"'), lambda inner: st.lists(inner).map(lambda xs: f"[{','.join(xs)}]")
                    | st.lists(inner).map(lambda xs: "{" + ",".join(f'"k{i}":{x}' for i, x in enumerate(xs)) + "}"),
                    max_leaves=30))
def test_json_depth_of_json_texts_is_the_two_pass_strip(text: str) -> None:
    assert nesting_depth(text) == _reference(text)


def test_json_depth_beyond_the_limit_and_unbalanced() -> None:
    for depth in (64, 65, 66, 200):
        assert nesting_depth("[" * depth + "]" * depth) == depth
    assert nesting_depth("[[]][") == 2 and nesting_depth("[]]]") == 1


def test_json_depth_of_strings_escapes_and_unclosed_quotes() -> None:
    assert nesting_depth('{"a": ["[[", "\\"]"], "b": {}}') == 2
    assert nesting_depth('"[' + "[" * 3) == 4  # an unclosed quote hides nothing
    assert nesting_depth("]]") == -1 and nesting_depth("") == 0
