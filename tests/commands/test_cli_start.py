"""The command starts fast: the top-level group imports a command's module only when the
command is named, its --help lists the commands from a table in innoflush/commands/root.py (checked
here against the commands themselves, so it cannot drift), and the heavy libraries stay
out of the start of the commands that do not use them. bench/cli_start.py times it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from innoflush.commands import root as cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "simpy", "pymysql", "docker", "tabulate", "prometheus_client", "dask",
         "distributed")
# after running the command (atexit: --help ends in SystemExit), the heavy modules loaded
# and the command modules (those of the group's COMMANDS table) imported
_PROBE = """
import atexit, json, sys
HEAVY = {heavy!r}
from innoflush.commands.root import COMMANDS, main
MODULES = {{v.partition(":")[0] for v in COMMANDS.values()}}
atexit.register(lambda: print("LOADED", json.dumps([
    sorted(m for m in HEAVY if m in sys.modules),
    sorted(m for m in sys.modules if m in MODULES)]),
    file=sys.stderr))
main({args!r}, prog_name="innoflush")
"""


def _loaded(args: list[str]) -> tuple[list[str], list[str]]:
    """(heavy modules, innoflush command modules) a new process has after the command."""
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY, args=args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout, "the command printed nothing"
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("LOADED ")]
    heavy, commands = json.loads(line.removeprefix("LOADED "))
    return heavy, commands


def test_importing_the_cli_loads_no_heavy_library_and_no_command():
    code = ("import innoflush.commands.root, sys; print(sorted(m for m in ('numpy', 'simpy',"
            "'pymysql', 'docker') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    assert proc.stdout == "[]\n"
    code = ("import innoflush.commands.root, sys; "
            "print(sorted(m for m in sys.modules if 'innoflush' in m))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    # innoflush.signals: the stop policy every command runs under (SIGINT, SIGTERM, SIGHUP)
    assert proc.stdout == ("['innoflush', 'innoflush.commands', 'innoflush.commands.root', "
                           "'innoflush.errors', 'innoflush.signals']\n")


@pytest.mark.parametrize("args, allowed, commands", [
    (["--help"], set(), []),
    (["simulate", "--help"], set(), ["innoflush.commands.simulate"]),
    (["tps", "--help"], set(), ["innoflush.commands.simulate"]),
    (["measure", "--help"], set(), ["innoflush.commands.measure"]),
    (["advise", "--help"], set(), ["innoflush.commands.advise"]),
    (["profiles", "--help"], {"tabulate"}, ["innoflush.commands.profiles"]),
    # its table is tabulate's; numpy, simpy, PyMySQL and docker stay out
    (["profiles", "list"], {"tabulate"}, ["innoflush.commands.profiles"]),
])
def test_a_command_imports_only_what_it_uses(args, allowed, commands):
    heavy, loaded_commands = _loaded(args)
    assert set(heavy) - allowed == set()
    assert loaded_commands == commands


def test_the_command_table_names_each_command_where_it_lives():
    ctx = click.Context(cli.main)
    assert cli.main.list_commands(ctx) == sorted(cli.COMMANDS)
    for name in cli.COMMANDS:
        command = cli.main.get_command(ctx, name)
        assert isinstance(command, click.Command)
        assert command.name == name
    assert cli.main.get_command(ctx, "frobnicate") is None


def test_short_help_table_is_the_commands_own():
    """What `innoflush --help` lists for a command, at any width, is what click makes of the
    command's own help: SHORT_HELP holds its first sentence."""
    ctx = click.Context(cli.main)
    assert set(cli.SHORT_HELP) == set(cli.COMMANDS)
    for name, text in cli.SHORT_HELP.items():
        command = cli.main.get_command(ctx, name)
        assert text == command.get_short_help_str(10**6), name
        stand_in = click.Command(name, help=text)
        for limit in range(3, 300):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_help_lists_the_commands_as_click_would(width):
    """The group's command list beside click's own, which imports every command for it."""
    def listing(format_commands) -> str:
        ctx = click.Context(cli.main, info_name="innoflush", terminal_width=width,
                            max_content_width=width)
        formatter = ctx.make_formatter()
        format_commands(cli.main, ctx, formatter)
        return formatter.getvalue()

    ours = listing(type(cli.main).format_commands)
    assert ours.startswith("Commands:\n")
    assert ours == listing(click.Group.format_commands)


def test_a_mistyped_command_still_gets_the_close_names():
    """A new process, where no command is loaded yet: click suggests from the loaded ones."""
    proc = subprocess.run([sys.executable, "-m", "innoflush", "simulat"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == ("innoflush: error: no such command 'simulat'. Did you mean "
                           "'simulate'? (see 'innoflush --help')\n")


def test_float_options_of_a_lazily_loaded_command_refuse_nan():
    ctx = click.Context(cli.main)
    command = cli.main.get_command(ctx, "simulate")
    duration = next(p for p in command.params if p.name == "duration")
    assert duration.type.name == "float"
    assert type(duration.type) is not click.types.FloatParamType
    with pytest.raises(click.BadParameter, match="not a finite number"):
        duration.type.convert("nan", duration, ctx)


# ---- the installed script (innoflush/commands/entry.py): --help and --version without click ----

_ENTRY = ("import atexit, sys\n"
          "atexit.register(lambda: print('CLICK', 'click' in sys.modules, file=sys.stderr))\n"
          "sys.argv[0] = 'innoflush'\n"
          "from innoflush.commands.entry import main\n"
          "main()\n")
_CLICK = ("import sys\n"
          "from innoflush.commands.root import main\n"
          "main(sys.argv[1:], prog_name='innoflush')\n")


def _start(code: str, args: list[str], columns: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}
    env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"]])
@pytest.mark.parametrize("columns", [200, 80])
def test_the_script_answers_help_and_version_as_click_does_without_click(args, columns):
    """What the script prints before importing click is byte for byte click's own output
    (innoflush/commands/_top_help.py is generated: scripts/make_top_help.py remakes it)."""
    ours = _start(_ENTRY, args, columns)
    theirs = _start(_CLICK, args, columns)
    assert (ours.returncode, theirs.returncode) == (0, 0), ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout, "run: python scripts/make_top_help.py"
    assert "CLICK False" in ours.stderr


@pytest.mark.parametrize("args", [["--help"], ["profiles", "--help"], []])
def test_a_narrow_terminal_or_anything_else_goes_to_click(args):
    ours = _start(_ENTRY, args, 60)
    theirs = _start(_CLICK, args, 60)
    assert (ours.returncode, ours.stdout, ours.stderr.replace("CLICK True\n", "")) == (
        theirs.returncode, theirs.stdout, theirs.stderr)
    assert "CLICK True" in ours.stderr
