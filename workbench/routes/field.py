"""The offline field form, as pages: ``/field/`` (the form; its script builds it from
``/api/v1/field/form`` and queues records in IndexedDB), its service worker
``/field/sw.js`` (served here, not under ``/static``, so that its scope is ``/field/``) and
its web app manifest (installable on a phone; no app store). The worker and the manifest
hold no records: anyone may read them."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from ..deps import CurrentActor, Services, base_path, render
from ..roles import Permission

router = APIRouter(include_in_schema=False)


@router.get("/field")
def field_root(request: Request, actor: CurrentActor) -> Response:
    return RedirectResponse(f"{base_path(request)}/field/", status_code=303)


@router.get("/field/")
def field(request: Request, actor: CurrentActor, services: Services) -> Response:
    return render(request, "field.html", title="Field form", actor=actor,
                  may_record=actor.may(Permission.RECORD_INSPECTION))


@router.get("/field/sw.js")
def service_worker() -> Response:
    script = (files("ms4watch.workbench") / "static" / "field-sw.js").read_text(encoding="utf-8")
    return Response(script, media_type="text/javascript")


@router.get("/field/manifest.webmanifest")
def manifest(request: Request, services: Services) -> Response:
    base = base_path(request)
    return JSONResponse({
        "name": f"ms4watch field form — {services.municipality}", "short_name": "ms4watch field",
        "description": "Inspections and outfall visits, recorded without signal and sent once back online",
        "start_url": f"{base}/field/", "scope": f"{base}/field/", "display": "standalone",
        "background_color": "#ffffff", "theme_color": "#1f4e79",
        "icons": [{"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
                  {"src": "/static/field-icon-192.png", "sizes": "192x192", "type": "image/png"},
                  {"src": "/static/field-icon-512.png", "sizes": "512x512", "type": "image/png"}],
    }, media_type="application/manifest+json")
