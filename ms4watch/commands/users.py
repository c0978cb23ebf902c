"""``ms4watch users add|list|disable|remove|passwd|token|tokens|revoke`` — the workbench's
users, at a terminal.

Works on ``DATA_DIR/workbench.db`` of the same settings the server reads (``--config``,
``MS4WATCH_*``), beside a running server. A password is typed at a hidden prompt (twice)
or read from ``--password-file``, never given as a flag. Each change is written to the
workbench's audit log as done at the terminal by the person running the command (under
``sudo``, ``SUDO_USER``: not root, nor the service account of ``sudo -u ms4watch``), in
the transaction that makes the change, so neither is ever kept without the other.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ._settings import config_option, settings_or_exit

if TYPE_CHECKING:
    from ..settings import Settings

app = typer.Typer(help="The workbench's users: roles per municipality, passwords, API tokens.", no_args_is_help=True)

ROLES = "viewer, inspector, smo or admin"


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="users")


def _open(settings: "Settings"):
    from ..workbench.services import open_users
    if not Path(settings.data_dir).is_dir():     # no server here: say how to name one, make nothing
        from ..logs import say
        say(f"error: data_dir: {settings.data_dir}: no such folder (the server's settings: --config or "
            "MS4WATCH_CONFIG)", err=True)
        raise typer.Exit(2)
    return open_users(settings)


def _municipality(settings: "Settings", given: Optional[str]) -> str:
    if given:
        return given
    if settings.coalition:
        raise typer.BadParameter("the settings name a coalition's registries; say which town: --municipality",
                                 param_hint="--municipality")
    if settings.registry is None:
        raise typer.BadParameter("no registry in the settings to take the municipality from; give --municipality",
                                 param_hint="--municipality")
    from ..contract.errors import Ms4Error
    from ..contract.registry import load_registry
    try:
        return load_registry(settings.registry).municipality
    except (Ms4Error, OSError) as e:
        raise typer.BadParameter(f"{settings.registry}: {e}", param_hint="registry") from None


def _password(password_file: Optional[Path]) -> str:
    if password_file is not None:
        try:
            return password_file.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as e:
            raise typer.BadParameter(f"cannot read {password_file}: {e.strerror}", param_hint="--password-file") from None
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


def _fail(e: Exception) -> None:
    typer.echo(f"error: {e}", err=True)
    raise typer.Exit(1)


def terminal_user() -> str:
    """Who is at the terminal: the person who ran ``sudo`` (``SUDO_USER``), else the account."""
    return os.environ.get("SUDO_USER") or getpass.getuser()


def _audit(audit, municipality: str, action: str, target: str, detail: str | None = None) -> None:
    audit.write(who=terminal_user(), via="terminal", municipality=municipality, action=action, target=target,
                detail=detail)


def _together(conn):
    """One transaction for a change and its audit row (the stores' own transactions join it)."""
    from ..sqlite import transaction
    return transaction(conn)


@app.command("add")
def add(
    username: str = typer.Argument(..., help="Log-in name: letters, digits and . _ @ -"),
    role: str = typer.Option(..., help=f"Role in the municipality: {ROLES}."),
    name: Optional[str] = typer.Option(None, "--name", help="Name shown in the incident log (default: the user name)."),
    municipality: Optional[str] = typer.Option(None, help="Municipality (default: the registry's)."),
    password_file: Optional[Path] = typer.Option(None, help="Read the password from this file instead of a prompt."),
    config: Optional[Path] = config_option(),
) -> None:
    """Add a user with a role in a municipality; a user that exists gets the role there."""
    from ..workbench.errors import UserError
    from ..workbench.roles import Role
    try:
        wanted = Role(role.lower())
    except ValueError:
        raise typer.BadParameter(f"{role!r}: expected {ROLES}", param_hint="--role") from None
    settings = settings_or_exit(config)
    town = _municipality(settings, municipality)
    users, audit, conn = _open(settings)
    try:
        try:
            user = users.find(username)
        except UserError:
            user = None
        if user is not None:
            with _together(conn):
                users.grant(username, municipality=town, role=wanted)
                _audit(audit, town, "user.grant", f"user:{username}", wanted.value)
            typer.echo(f"{username}: now {wanted.value} in {town}")
            return
        password = _password(password_file)
        with _together(conn):
            users.add(username, password, municipality=town, role=wanted, display_name=name)
            _audit(audit, town, "user.add", f"user:{username}", wanted.value)
        typer.echo(f"added {username} ({wanted.value} in {town})")
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


@app.command("list")
def list_users(config: Optional[Path] = config_option()) -> None:
    """Every user, their roles per municipality, whether disabled."""
    from rich.console import Console
    from rich.table import Table
    settings = settings_or_exit(config)
    users, _, conn = _open(settings)
    try:
        table = Table("user", "name", "roles", "tokens", "created", "disabled")
        for u in users.all():
            tokens = [t for t in users.tokens(u.username) if t.revoked_at is None]
            table.add_row(u.username, u.display_name, ", ".join(f"{r.value} in {m}" for m, r in sorted(u.roles.items())),
                          str(len(tokens)), f"{u.created_at:%Y-%m-%d}",
                          f"{u.disabled_at:%Y-%m-%d %H:%M}Z" if u.disabled_at else "")
        Console().print(table)
    finally:
        conn.close()


@app.command("disable")
def disable(username: str = typer.Argument(...), config: Optional[Path] = config_option()) -> None:
    """Stop a user logging in: sessions and API tokens stop working at once."""
    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    users, audit, conn = _open(settings)
    try:
        with _together(conn):
            user = users.disable(username)
            for town in user.roles or {"": None}:
                _audit(audit, town, "user.disable", f"user:{username}")
        typer.echo(f"disabled {username}")
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


@app.command("remove")
def remove(username: str = typer.Argument(...),
           municipality: Optional[str] = typer.Option(None, help="The town to take the user's role in away "
                                                                "(default: the registry's)."),
           config: Optional[Path] = config_option()) -> None:
    """Take a user's role in one municipality away; its roles elsewhere stay."""
    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    town = _municipality(settings, municipality)
    users, audit, conn = _open(settings)
    try:
        role = users.find(username).roles.get(town)
        with _together(conn):
            user = users.remove(username, municipality=town)
            _audit(audit, town, "user.remove", f"user:{username}", role.value if role else None)
        left = ", ".join(f"{r.value} in {m}" for m, r in sorted(user.roles.items())) or "no role anywhere"
        typer.echo(f"{username}: no longer a member of {town} ({left})")
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


@app.command("passwd")
def passwd(username: str = typer.Argument(...),
           password_file: Optional[Path] = typer.Option(None, help="Read the new password from this file instead "
                                                                   "of a prompt."),
           config: Optional[Path] = config_option()) -> None:
    """Set a user's password; the user's sessions end (every browser logs in again)."""
    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    users, audit, conn = _open(settings)
    try:
        user = users.find(username)
        password = _password(password_file)
        with _together(conn):
            users.set_password(username, password)
            for town in user.roles or {"": None}:
                _audit(audit, town, "user.password", f"user:{username}", "set at the terminal")
        typer.echo(f"{username}: password changed; sessions ended")
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


def _lifetime(text: Optional[str], default):
    if text is None:
        return default
    from ..contract.timeutil import parse_duration
    try:
        lifetime = parse_duration(text)
    except ValueError as e:
        raise typer.BadParameter(f"{text!r}: {e} (e.g. 30d, 12h)", param_hint="--expires") from None
    if lifetime.total_seconds() <= 0:
        raise typer.BadParameter(f"{text!r}: must be positive", param_hint="--expires")
    return lifetime


@app.command("token")
def token(username: str = typer.Argument(...), label: str = typer.Option("script", help="What the token is for."),
          expires: Optional[str] = typer.Option(None, help="How long it works, e.g. 30d (default: the setting "
                                                           "web.token_lifetime, 90 days)."),
          config: Optional[Path] = config_option()) -> None:
    """Make an API token for a user's scripts (``Authorization: Bearer …``); shown once."""
    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    lifetime = _lifetime(expires, settings.web.token_lifetime)
    users, audit, conn = _open(settings)
    try:
        with _together(conn):
            made, secret = users.create_token(username, label, lifetime)
            user = users.find(username)
            for town in user.roles or {"": None}:
                _audit(audit, town, "token.create", f"user:{username}",
                       f"token {made.id}: {made.label}, expires {made.expires_at:%Y-%m-%d %H:%M}Z")
        typer.echo(secret)
        typer.echo(f"token {made.id} for {username} ({made.label}), until {made.expires_at:%Y-%m-%d %H:%M}Z; "
                   "it is shown only now", err=True)
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


@app.command("tokens")
def tokens(username: str = typer.Argument(...), config: Optional[Path] = config_option()) -> None:
    """A user's API tokens: id (for ``revoke``), label, made, expires, last used, revoked."""
    from rich.console import Console
    from rich.table import Table

    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    users, _, conn = _open(settings)
    try:
        table = Table("id", "label", "created", "expires", "last used", "revoked")
        def when(d) -> str:
            return f"{d:%Y-%m-%d %H:%M}Z" if d else ""

        for t in users.tokens(username):
            table.add_row(str(t.id), t.label, when(t.created_at), when(t.expires_at), when(t.last_used_at),
                          when(t.revoked_at))
        Console().print(table)
    except UserError as e:
        _fail(e)
    finally:
        conn.close()


@app.command("revoke")
def revoke(token_id: int = typer.Argument(..., help="The token's id (``ms4watch users tokens NAME``)."),
           config: Optional[Path] = config_option()) -> None:
    """Revoke one API token at once; the user's other tokens keep working."""
    from ..workbench.errors import UserError
    settings = settings_or_exit(config)
    users, audit, conn = _open(settings)
    try:
        owner = users.token_owner(token_id)
        if owner is None:
            raise UserError(f"no token {token_id}")
        with _together(conn):
            users.revoke_token(token_id)
            for town in users.find(owner).roles or {"": None}:
                _audit(audit, town, "token.revoke", f"user:{owner}", f"token {token_id}")
        typer.echo(f"revoked token {token_id} of {owner}")
    except UserError as e:
        _fail(e)
    finally:
        conn.close()
