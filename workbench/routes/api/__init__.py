"""The API under ``/api/v1``, described by its OpenAPI schema (``/api/v1/openapi.json``)."""
