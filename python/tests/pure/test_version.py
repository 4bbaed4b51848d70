"""pgroups.__version__ is the build's, CMake's project(VERSION), not a second literal."""

import os

import pytest

import pgroups


def test_version_is_the_cmake_project_version():
    expected = os.environ.get("PGROUPS_PROJECT_VERSION")
    if not expected:
        pytest.skip("PGROUPS_PROJECT_VERSION not set (CTest sets it from CMakeLists.txt)")
    assert pgroups.__version__ == expected
    assert pgroups._pgroups.__version__ == expected
