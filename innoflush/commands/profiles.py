"""`innoflush profiles ...`: list, show, compare, import and export device profiles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import OptionError, ProfileError
from ..outfile import check_output_target, write_output
from ..output.charts.output import check_targets, emit
from ..profiles import render
from ..profiles.model import NAME_RE, DeviceProfile
from ..profiles.store import (
    builtin_names,
    load_builtin,
    load_profile,
    save_profile,
    user_names,
    user_profile_dir,
)
from .option_types import chart_options, text_width, wide_option


def _dump(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@click.group("profiles")
def profiles_group() -> None:
    """List, show, compare, import and export device profiles.

    A profile is named by a built-in name, a name in your store
    ($INNOFLUSH_HOME/profiles, else $XDG_DATA_HOME/innoflush/profiles), or a path to a
    .json file. A profile in your store shadows the built-in one of the same name.
    """


@profiles_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@wide_option
def list_command(as_json: bool, wide: bool) -> None:
    """Built-in and user profiles, with fsync and fdatasync after a 16 KB write."""
    builtins = set(builtin_names())
    users = set(user_names())
    entries = []
    for name in sorted(builtins | users):
        if name in users:
            path = user_profile_dir() / f"{name}.json"
            try:
                profile = DeviceProfile.load(path)
            except ProfileError as exc:
                click.echo(f"innoflush: warning: skipping user profile {path}: {exc}", err=True)
                if name in builtins:
                    entries.append(render.list_entry(load_builtin(name), "built-in"))
                continue
            entries.append(render.list_entry(profile, "user", name in builtins))
        else:
            entries.append(render.list_entry(load_builtin(name), "built-in"))
    if as_json:
        click.echo(_dump(render.list_json(entries)), nl=False)
    else:
        click.echo(render.render_list(entries, text_width(wide)), nl=False)


@profiles_group.command("show")
@click.argument("ref", metavar="NAME|FILE")
@click.option("--json", "as_json", is_flag=True, help="Print the profile's JSON.")
@wide_option
def show_command(ref: str, as_json: bool, wide: bool) -> None:
    """Provenance, device facts, PLP verdict and every test of one profile."""
    profile = load_profile(ref)
    if as_json:
        click.echo(_dump(profile.to_dict()), nl=False)
    else:
        click.echo(render.render_show(profile, text_width(wide)), nl=False)


@profiles_group.command("compare")
@click.argument("refs", nargs=-1, required=True, metavar="NAME|FILE...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@chart_options
@wide_option
def compare_command(refs: tuple[str, ...], as_json: bool, html_file: str | None,
                    png_dir: str | None, wide: bool) -> None:
    """Profiles side by side: sync and write per test, and the ratio to the first."""
    check_targets(html_file, png_dir)
    profiles = [load_profile(r) for r in refs]
    data = render.compare_data(profiles)
    emit("profiles compare", {"compare": render.compare_json(data),
                              "profiles": [p.to_dict() for p in profiles]},
         html_file, png_dir, render.render_compare(data))
    if as_json:
        click.echo(_dump(render.compare_json(data)), nl=False)
    else:
        click.echo(render.render_compare(data, text_width(wide)), nl=False)


@profiles_group.command("import")
@click.argument("file", metavar="FILE")
@click.option("--name", "new_name", help="Store it under this name instead of its own.")
@click.option("--force", is_flag=True, help="Replace a user profile of the same name.")
def import_command(file: str, new_name: str | None, force: bool) -> None:
    """Validate a profile file and copy it into your profile store."""
    profile = DeviceProfile.load(file)
    if new_name is not None:
        if not NAME_RE.match(new_name):
            raise OptionError(f"bad profile name {new_name!r}: use lowercase letters, digits, "
                             "'.', '_' and '-' (at most 80, starting with a letter or digit)")
        profile.name = new_name
    path = save_profile(profile, overwrite=force)
    click.echo(f"imported {profile.name} into {path}")
    if profile.name in builtin_names():
        click.echo(f"innoflush: note: your {profile.name!r} now shadows the built-in profile "
                   "of the same name", err=True)


@profiles_group.command("export")
@click.argument("ref", metavar="NAME|FILE")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of stdout.")
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
def export_command(ref: str, output: Path | None, force: bool) -> None:
    """Write a profile's JSON to stdout or a file."""
    if output is not None:
        check_output_target(output, "-o")   # a device, FIFO or directory: refused
    text = load_profile(ref).to_json()
    if output is None:
        click.echo(text, nl=False)
        return
    write_output(output, text, "-o", exists_error=None if force else
                 f"{output} already exists (use --force to replace it)")
    click.echo(f"wrote {output}", err=True)
