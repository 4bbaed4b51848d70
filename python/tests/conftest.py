"""Shared by the pure and the live tests: where the test data is."""

import os
import pathlib

import pytest

DATA_DIR = pathlib.Path(os.environ.get("PGROUPS_TEST_DATA_DIR",
                                       pathlib.Path(__file__).resolve().parents[2] / "tests" / "data"))


@pytest.fixture
def data_dir() -> pathlib.Path:
    return DATA_DIR
