"""MySQL 9.x and MariaDB 11.8 in the advisor's facts and advice, without a server: the
flavor and its note for a version newer than any modelled, version_with_update, the
deprecated innodb_flush_method on MariaDB 11, the candidates in MariaDB 11's variables.
(The same on the real servers: tests/advisor/test_advisor_lts_server.py.)"""

from __future__ import annotations

import pytest

from innoflush.advisor.candidates import candidate_changes
from innoflush.advisor.rules.flush_method_change import deprecated_method_given
from innoflush.live.facts import facts_from_variables

INNODB = {"innodb_flush_log_at_trx_commit": "1", "innodb_flush_method": "O_DIRECT"}


def facts(version: str, comment: str = "", **variables: str):
    return facts_from_variables({**INNODB, "version": version, "version_comment": comment,
                                 **variables})


@pytest.mark.parametrize("version, comment, flavor, newer", [
    ("9.7.4-2", "(Debian)", "mysql-9.7", False),
    ("9.0.1", "MySQL Community Server - GPL", "mysql-9.7", False),
    ("26.7.0", "MySQL Community Server - GPL", "mysql-9.7", True),   # Innovation
    ("11.8.9-MariaDB-0+deb13u1 from Debian", "", "mariadb-11.8", False),
    ("12.1.2-MariaDB", "mariadb.org binary distribution", "mariadb-11.8", True),
])
def test_flavor_and_the_note_for_a_newer_version(version, comment, flavor, newer):
    f = facts(version, comment)
    assert f.sim_flavor == flavor
    said = [n for n in f.notes if "newer than any modelled version" in n]
    assert bool(said) == newer, f.notes
    if newer:
        lts = "MySQL 9.7 LTS" if flavor == "mysql-9.7" else "MariaDB 11.8 LTS"
        assert said[0].endswith(f"the {lts} model is used")


def test_version_with_update_where_the_server_has_it():
    f = facts("9.7.4-2", "(Debian)", version_with_update="9.7.4.0-2")
    assert f.version_with_update == "9.7.4.0-2"
    assert f.to_dict()["variables"]["version_with_update"] == "9.7.4.0-2"
    assert facts("8.4.3", "MySQL Community Server - GPL").version_with_update is None


MARIADB_118 = dict(innodb_data_file_buffering="OFF", innodb_data_file_write_through="OFF",
                   innodb_log_file_buffering="OFF", innodb_log_file_write_through="OFF",
                   innodb_doublewrite="ON")


@pytest.mark.parametrize("given, said", [
    ("O_DIRECT", None),                       # the default: nothing was given
    ("O_DIRECT_NO_FSYNC", "O_DIRECT_NO_FSYNC"),
    ("fsync", "fsync"),
])
def test_deprecated_flush_method_given_at_start(given, said):
    f = facts("11.8.9-MariaDB", **{**MARIADB_118, "innodb_flush_method": given})
    assert deprecated_method_given(f) == said
    # MySQL's innodb_flush_method is no deprecated option
    assert deprecated_method_given(facts("9.7.4-2", innodb_flush_method=given)) is None


def test_mariadb11_candidates_in_its_own_variables():
    f = facts("11.8.9-MariaDB", **MARIADB_118)
    methods = {c.id: c for c in candidate_changes(f, None) if c.id.startswith("flush-method=")}
    assert methods["flush-method=O_DIRECT_NO_FSYNC"].setting == "innodb_doublewrite"
    assert methods["flush-method=O_DIRECT_NO_FSYNC"].candidate == "innodb_doublewrite=fast"
    assert methods["flush-method=fsync"].candidate == "innodb_data_file_buffering=ON"
    assert all(c.setting != "innodb_flush_method" for c in methods.values())
    # the simulator's field is what is priced, whatever the server calls it
    assert methods["flush-method=fsync"].changes == {"innodb_flush_method": "fsync"}
    assert methods["flush-method=fsync"].current == ("O_DIRECT "
                                                     "(innodb_data_file_buffering=OFF)")
    mysql = [c for c in candidate_changes(facts("9.7.4-2"), None)
             if c.id.startswith("flush-method=")]
    assert mysql and all(c.setting == "innodb_flush_method" for c in mysql)
