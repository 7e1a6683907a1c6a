"""Where profiles live: the built-in published ones, and the user's own store."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from ..errors import ProfileError, UsageError
from ..jsonfile import check_store, store_file
from .model import NAME_RE, DeviceProfile


def user_home() -> Path:
    """$INNOFLUSH_HOME, else $XDG_DATA_HOME/innoflush, else ~/.local/share/innoflush."""
    env = os.environ.get("INNOFLUSH_HOME")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "innoflush"


def user_profile_dir() -> Path:
    return user_home() / "profiles"


def builtin_names() -> list[str]:
    root = resources.files("innoflush.profiles") / "builtin"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".json"))


def user_names() -> list[str]:
    d = user_profile_dir()
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.glob("*.json"))


def load_builtin(name: str) -> DeviceProfile:
    res = resources.files("innoflush.profiles") / "builtin" / f"{name}.json"
    if not res.is_file():
        raise ProfileError(f"no built-in profile {name!r}")
    return DeviceProfile.from_json(res.read_text(encoding="utf-8"), f"built-in {name}")


def load_profile(ref: str) -> DeviceProfile:
    """A profile by file path, user-store name, or built-in name (in that order).

    A user profile of the same name shadows the built-in one, so a user can re-measure
    a device and keep its name.
    """
    path = Path(ref)
    if ref.endswith(".json") or os.sep in ref or path.is_file():
        return DeviceProfile.load(path)
    if not NAME_RE.match(ref):
        raise ProfileError(f"not a profile name or file: {ref!r}")
    user = user_profile_dir() / f"{ref}.json"
    if user.is_file():
        return DeviceProfile.load(user)
    if ref in builtin_names():
        return load_builtin(ref)
    raise ProfileError(f"unknown profile {ref!r}: see `innoflush profiles list`")


def check_save_profile(name: str, overwrite: bool = False) -> None:
    """Before a measurement saved as name: a valid name, free unless overwrite, and a store
    that can be created and written (UsageError, exit 2)."""
    if not NAME_RE.match(name):
        raise UsageError(f"bad profile name {name!r}: use lowercase letters, digits, "
                         "'.', '_' and '-'")
    check_store(user_profile_dir(), name, "profile", overwrite)


def save_profile(profile: DeviceProfile, overwrite: bool = False) -> Path:
    """Write a profile into the user store atomically; refuses to clobber unless asked."""
    if not NAME_RE.match(profile.name):
        raise UsageError(f"bad profile name {profile.name!r}: use lowercase letters, digits, "
                         "'.', '_' and '-'")
    return store_file(user_profile_dir(), profile.name, profile.to_json(), "profile",
                      overwrite)
