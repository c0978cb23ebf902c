"""The SMO's workbench: the web application ``ms4watch serve`` (and ``ms4watch demo``) runs.

Pages rendered on the server (Jinja2, a few lines of plain JavaScript, no build step, every
asset in the package), an API under ``/api/v1`` described by its OpenAPI schema, the
emailed acknowledge links, the inbound-SMS webhook, ``/health`` and ``/metrics``.

    services = Workbench.open(settings, registry=..., incidents=..., ...)   # the town's services
    app = create_app(settings, services)                                     # FastAPI

``app.py`` builds the application; ``deps.py`` holds the typed dependencies routes take;
``routes/<resource>.py`` one router per resource; ``services/`` the actions behind pages
and API alike, each checking the caller's role and writing the audit log; ``auth/`` users,
roles per municipality, passwords, API tokens, sessions, CSRF, acknowledge links.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .services import Workbench

__all__ = ["create_app", "Workbench"]


def __getattr__(name: str) -> Any:
    """``create_app`` and ``Workbench`` on first use (PEP 562): a server that only needs
    ``workbench.records`` (the approvals the engine judges by) or its metrics, as ``serve
    --http off`` does, does not import FastAPI, the routes and the desks (~1 s of start-up)."""
    if name == "create_app":
        from .app import create_app
        return create_app
    if name == "Workbench":
        from .services import Workbench
        return Workbench
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
