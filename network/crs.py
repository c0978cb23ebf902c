"""Any coordinate system to WGS 84 longitude/latitude, through pyproj."""

from __future__ import annotations

from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError

from .errors import NetworkError


def to_wgs84(source_crs: str, where: str) -> Transformer:
    """A transformer from ``source_crs`` (EPSG code, WKT, PROJ string) to WGS 84 with
    longitude first. ``where`` names the file for the error."""
    try:
        crs = CRS.from_user_input(source_crs)
    except CRSError as e:
        raise NetworkError(f"{where}: crs: {source_crs!r} is not a coordinate system pyproj knows ({e})") from None
    return Transformer.from_crs(crs, CRS.from_epsg(4326), always_xy=True)


def same_crs(a: str, b: str) -> bool:
    """Whether two CRS descriptions (EPSG code, WKT, PROJ string) are the same system; an
    unreadable one differs."""
    try:
        return bool(CRS.from_user_input(a).equals(CRS.from_user_input(b), ignore_axis_order=True))
    except CRSError:
        return False


def crs_label(crs: str) -> str:
    """``EPSG:<code>`` where pyproj identifies one, else the system's name."""
    try:
        c = CRS.from_user_input(crs)
    except CRSError:
        return crs
    code = c.to_epsg()
    return f"EPSG:{code}" if code is not None else c.name


def is_geographic(crs: str) -> bool:
    """Whether the system's coordinates are longitude and latitude in degrees."""
    try:
        return bool(CRS.from_user_input(crs).is_geographic)
    except CRSError:
        return False
