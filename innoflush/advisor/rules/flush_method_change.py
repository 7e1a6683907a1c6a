"""How a change of the flush method is written on a server: innodb_flush_method, or on
MariaDB 11 the variables that replace it (innodb_doublewrite=fast, innodb_data_file_*) —
the my.cnf and SET GLOBAL lines, whether it needs a restart — and the deprecated
innodb_flush_method a MariaDB 11 server was started with, which overrides them."""

from __future__ import annotations

from ...live.facts import ServerFacts
from .model import Change, Context


def method_change(f: ServerFacts, method: str) -> tuple[str, str, list[str], list[str], bool]:
    """(setting, recommended text, my.cnf lines, SET GLOBAL lines, restart) for a method."""
    if f.mariadb11_io_variables:
        if method == "O_DIRECT_NO_FSYNC":
            lines = ["innodb_doublewrite = fast"]
            setting = "innodb_doublewrite"
        elif method == "O_DIRECT":
            lines = ["innodb_data_file_buffering = OFF", "innodb_data_file_write_through = OFF"]
            if f.flush_method == "O_DIRECT_NO_FSYNC":
                lines = ["innodb_doublewrite = ON"] + lines
            setting = ("innodb_doublewrite" if f.flush_method == "O_DIRECT_NO_FSYNC"
                       else "innodb_data_file_buffering")
        elif method == "fsync":
            lines = ["innodb_data_file_buffering = ON"]
            if f.flush_method == "O_DIRECT_NO_FSYNC":
                lines = ["innodb_doublewrite = ON"] + lines
            setting = "innodb_data_file_buffering"
        else:
            lines = ["innodb_data_file_write_through = ON"]
            setting = "innodb_data_file_write_through"
        sets = [f"SET GLOBAL {name} = {value};"
                for name, value in (ln.split(" = ") for ln in lines)]
        dynamic = all(f.dynamic(ln.split(" = ")[0], True) for ln in lines)
        rec = ", ".join(ln.replace(" = ", "=") for ln in lines)
        return setting, rec, lines, (sets if dynamic else []), not dynamic
    return ("innodb_flush_method", method, [f"innodb_flush_method = {method}"], [], True)


def _current_method_text(f: ServerFacts) -> str:
    if f.mariadb11_io_variables:
        return f"{f.flush_method} ({f.flush_method_source})"
    return f.flush_method


def deprecated_method_given(f: ServerFacts) -> str | None:
    """MariaDB 11: the innodb_flush_method value the server was started with, when it is
    not the default (O_DIRECT): a deprecated option that, at the next start, overrides
    innodb_doublewrite and innodb_data_file_* whatever their order in my.cnf (tried on
    MariaDB 11.8.9: innodb_flush_method=O_DIRECT_NO_FSYNC with innodb_doublewrite=ON
    starts with fast). SET GLOBAL of the new variables leaves it showing the old value."""
    if not f.mariadb11_io_variables:
        return None
    raw = str(f.variables.get("innodb_flush_method") or "").strip()
    return raw if raw and raw.upper() != "O_DIRECT" else None


def change_to_method(ctx: Context, method: str, why: list[str], risk: str) -> Change:
    """The Change of a flush-method finding to method, on this server's variables, with
    the warning about a deprecated innodb_flush_method that would override it."""
    f = ctx.facts
    setting, rec, lines, sets, restart = method_change(f, method)
    if given := deprecated_method_given(f):
        why = [*why, f"the server was started with innodb_flush_method={given}, deprecated "
               "since MariaDB 11.0 (MDEV-30136): remove it from my.cnf, or at the next "
               "start it overrides the settings above"]
    return Change(setting=setting, current=_current_method_text(f), recommended=rec, why=why,
                  risk=risk, restart_needed=restart, my_cnf=lines, set_global=sets,
                  sim_changes={"innodb_flush_method": method})
