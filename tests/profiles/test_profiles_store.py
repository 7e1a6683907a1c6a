"""The profile store: where user profiles live, loading by name or path, saving."""

from __future__ import annotations

from pathlib import Path

import pytest

from innoflush.errors import ProfileError, UsageError
from innoflush.profiles import load_profile, save_profile, user_names, user_profile_dir
from innoflush.profiles.store import load_builtin, user_home


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("INNOFLUSH_HOME", str(tmp_path / "ih"))
    return tmp_path / "ih"


def test_innoflush_home_wins(home, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_home() == home
    assert user_profile_dir() == home / "profiles"


def test_xdg_fallback(monkeypatch, tmp_path):
    monkeypatch.delenv("INNOFLUSH_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_profile_dir() == tmp_path / "xdg" / "innoflush" / "profiles"


def test_home_fallback(monkeypatch, tmp_path):
    monkeypatch.delenv("INNOFLUSH_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_home() == tmp_path / ".local" / "share" / "innoflush"


def test_empty_store(home):
    assert user_names() == []


def test_save_and_load_by_name(home):
    p = load_builtin("samsung-pm9a3")
    p.name = "my-pm9a3"
    path = save_profile(p)
    assert path == home / "profiles" / "my-pm9a3.json"
    assert user_names() == ["my-pm9a3"]
    assert load_profile("my-pm9a3") == p
    assert not list((home / "profiles").glob(".*.tmp"))


def test_save_refuses_to_overwrite_without_force(home):
    p = load_builtin("samsung-pm9a3")
    save_profile(p)
    with pytest.raises(UsageError, match="already exists.*--force"):
        save_profile(p)
    p.title = "changed"
    save_profile(p, overwrite=True)
    assert load_profile("samsung-pm9a3").title == "changed"


def test_user_profile_shadows_builtin(home):
    p = load_builtin("samsung-990-pro")
    p.title = "re-measured"
    save_profile(p)
    assert load_profile("samsung-990-pro").title == "re-measured"
    assert load_builtin("samsung-990-pro").title != "re-measured"


def test_save_bad_name(home):
    p = load_builtin("samsung-pm9a3")
    p.name = "Not/Good"
    with pytest.raises(UsageError, match="bad profile name"):
        save_profile(p)


def test_load_by_path(home, tmp_path):
    f = tmp_path / "x.json"
    f.write_text(load_builtin("crucial-t500").to_json())
    assert load_profile(str(f)).name == "crucial-t500"


def test_unknown_name(home):
    with pytest.raises(ProfileError, match="unknown profile 'no-such-device'"):
        load_profile("no-such-device")
    with pytest.raises(ProfileError, match="not a profile name or file"):
        load_profile("Bad Name")
    with pytest.raises(ProfileError, match="no built-in profile"):
        load_builtin("no-such-device")


def test_missing_file(home, tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        load_profile(str(tmp_path / "gone.json"))
