"""Device profiles: the model, the store, and the built-in published devices."""

from .model import OPS, SCHEMA, DeviceProfile, ProfileTest, TestKey
from .store import builtin_names, load_profile, save_profile, user_names, user_profile_dir

__all__ = ["OPS", "SCHEMA", "DeviceProfile", "ProfileTest", "TestKey", "builtin_names",
           "load_profile", "save_profile", "user_names", "user_profile_dir"]
