"""Shared by the pure and the live tests: the test data, the golden layouts and the CLI.

conftest.py sits in this folder, so pytest puts the folder on sys.path and every test
module can `import _support`."""

import json
import os
import pathlib
import subprocess

DATA_DIR = pathlib.Path(os.environ.get("PGROUPS_TEST_DATA_DIR",
                                       pathlib.Path(__file__).resolve().parents[2] / "tests" / "data"))

# The pgroups executable; CTest sets it when the CLI is built.
CLI = os.environ.get("PGROUPS_CLI")


def golden_files(folder="golden"):
    """The golden layouts of one folder of tests/data (w*.json), sorted."""
    return sorted((DATA_DIR / folder).glob("w*.json"))


def load_json(path):
    return json.loads(pathlib.Path(path).read_text())


def invalid_cases():
    """The entries of golden/invalid.json: configurations Colossal-AI rejects."""
    return load_json(DATA_DIR / "golden" / "invalid.json")


def invalid_message(note):
    """The exact message pgroups gives for the invalid.json entry of this note (shared with
    the C++ tests)."""
    return load_json(DATA_DIR / "invalid_messages.json")[note]


def plan_of(config, **extra):
    """The Plan of a golden file's (or invalid.json's) "config" object."""
    from pgroups import Plan  # late: conftest imports this module before any test sets its world up

    tensor = config["tensor"]
    return Plan(config["world_size"], pipeline=config["pipeline"], tensor=tensor["size"], mode=tensor["mode"],
                depth=tensor.get("depth"), **extra)


def run_cli(*args, check=True):
    """`pgroups ARGS...`, its output captured as text."""
    return subprocess.run([CLI, *args], check=check, capture_output=True, text=True)
