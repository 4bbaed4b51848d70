"""Fixtures shared by the pure and the live tests; the plain helpers are in _support.py."""

import pathlib

import pytest

from _support import DATA_DIR


@pytest.fixture
def data_dir() -> pathlib.Path:
    return DATA_DIR


@pytest.fixture
def write_config(tmp_path):
    """write_config(name, text): a file `name` holding `text` in this test's temporary folder."""
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write
