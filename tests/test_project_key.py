"""projectKey(cwd): the directory name of a workspace under the sessions root
(docs/host-contract.md, Where logs are)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_task_gantt.logs.project_key import MAX_BODY_CHARS, project_key


def test_the_documented_example() -> None:
    assert (
        project_key("/Users/lzx/Documents/GitHub/dsh-task-gantt")
        == "--Users-lzx-Documents-GitHub-dsh-task-gantt--"
    )


@pytest.mark.parametrize(
    ("cwd", "key"),
    [
        ("/a//b", "--a-b--"),  # a run of separators is one dash
        ("C:\\Users\\me", "--C-Users-me--"),  # ':' and '\' are separators too
        ("C:\\\\:/x", "--C-x--"),  # a mixed run is still one dash
        ("/a/b/", "--a-b---"),  # a trailing separator stays (only leading dashes go)
    ],
)
def test_each_run_of_separators_becomes_one_dash(cwd: str, key: str) -> None:
    assert project_key(cwd) == key


def test_safe_characters_are_kept() -> None:
    assert project_key("/Az09._-x") == "--Az09._-x--"


def test_other_characters_become_uppercase_utf16_hex() -> None:
    assert project_key("/a b") == "--a~0020b--"
    assert project_key("/é") == "--~00E9--"
    assert project_key("/项目") == "--~9879~76EE--"


def test_an_astral_character_gives_two_code_units() -> None:
    assert project_key("/😀") == "--~D83D~DE00--"


def test_leading_dashes_are_stripped_and_empty_gives_root() -> None:
    assert project_key("/") == "--root--"
    assert project_key("--x") == "--x--"
    assert project_key("/-/x") == "--x--"


def test_no_cwd() -> None:
    assert project_key(None) == "_no-cwd"
    assert project_key("") == "_no-cwd"


def test_long_paths_are_cut_to_251_characters_before_wrapping() -> None:
    key = project_key("/" + "a" * 400)
    assert key == "--" + "a" * MAX_BODY_CHARS + "--"
    assert len(key) == 255
    # The cut counts escaped characters, so an escape may be cut mid-way.
    assert project_key("/" + "a" * 250 + "é") == "--" + "a" * 250 + "~" + "--"


@settings(max_examples=150)
@given(st.text())
def test_keys_are_safe_directory_names(cwd: str) -> None:
    key = project_key(cwd)
    assert "/" not in key and "\\" not in key and ":" not in key
    assert key == "_no-cwd" or (key.startswith("--") and key.endswith("--") and len(key) <= 255)
    assert all(c.isascii() for c in key)
