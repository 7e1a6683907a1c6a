"""What a flush method means, per flavor, in one place (Flavor.io_policy): the doublewrite
file's sync, the data files' direct I/O, their syncs after a batch, write-through data
files (MariaDB's O_DSYNC) and the redo's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from innoflush.simulator.flavors import FLAVORS, FLUSH_METHODS

SIMULATOR = Path(__file__).resolve().parents[2] / "innoflush" / "simulator"


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
@pytest.mark.parametrize("method", FLUSH_METHODS)
def test_every_flavor_answers_for_every_method(flavor, method):
    fl = FLAVORS[flavor]
    io = fl.io_policy(method)
    assert io.method == method
    assert io.data_direct == (method in ("O_DIRECT", "O_DIRECT_NO_FSYNC"))
    assert io.data_file_syncs == (method != "O_DIRECT_NO_FSYNC")
    assert io.redo_write_through == (method == "O_DSYNC")
    assert io.dblwr_sync == (method in fl.dblwr_sync_methods)
    assert io.data_syncs == (io.data_file_syncs and not io.data_write_through)


def test_o_dsync_writes_mariadbs_data_files_through_and_syncs_mysqls():
    for name, fl in FLAVORS.items():
        io = fl.io_policy("O_DSYNC")
        if name.startswith("mariadb"):
            assert io.data_write_through and not io.data_syncs, name
        else:
            assert not io.data_write_through and io.data_syncs, name


def test_no_direct_no_fsync_sync_of_the_tablespaces_after_a_batch():
    for fl in FLAVORS.values():
        assert not fl.io_policy("O_DIRECT_NO_FSYNC").data_syncs
        assert fl.io_policy("O_DIRECT").data_syncs


def test_the_simulator_reads_a_flush_methods_name_only_in_flavors():
    """No other module of the model compares a flush method's name (config.py holds the
    default setting)."""
    names = set(FLUSH_METHODS) - {"fsync"}      # "fsync" is also a sync call's name
    found = []
    for path in SIMULATOR.rglob("*.py"):
        if path.name in ("flavors.py", "config.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.name}:{node.lineno} {node.value}")
    assert found == []
