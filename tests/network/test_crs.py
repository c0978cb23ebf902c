"""State Plane feet to WGS 84, checked against the projections' published definitions
(EPSG dataset), not against pyproj's own answer for some other point."""

from __future__ import annotations

import pytest
from pyproj import Geod

from ms4watch.network.crs import to_wgs84
from ms4watch.network.errors import NetworkError

# EPSG:2263 NAD83 / New York Long Island (ftUS): Lambert Conic Conformal (2SP), latitude of
# false origin 40°10'N, longitude of false origin 74°W, false easting 300000 m = 984250 ftUS,
# false northing 0. EPSG:2260 NAD83 / New York East (ftUS): Transverse Mercator, latitude of
# origin 38°50'N, central meridian 74°30'W, false easting 150000 m = 492125 ftUS.
DEFINED_ORIGINS = [
    ("EPSG:2263", (984250.0, 0.0), (-74.0, 40 + 10 / 60)),
    ("EPSG:2260", (492125.0, 0.0), (-74.5, 38 + 50 / 60)),
]


@pytest.mark.parametrize("crs, xy, lonlat", DEFINED_ORIGINS)
def test_false_origin_lands_on_its_published_latitude_and_longitude(crs, xy, lonlat):
    lon, lat = to_wgs84(crs, "test").transform(*xy)
    # NAD83 and WGS 84 differ by about a metre here; pyproj's default NAD83->WGS84 is the
    # null transformation, so the published origin is met to well under a millimetre.
    assert lon == pytest.approx(lonlat[0], abs=1e-8)
    assert lat == pytest.approx(lonlat[1], abs=1e-8)


def test_a_thousand_us_feet_on_the_grid_is_about_a_thousand_feet_on_the_ground():
    """Sanity bound: 1,000 ftUS east on the Long Island grid, measured on the ellipsoid, is
    304.8006 m times the projection's scale (within 1/10,000 on this zone)."""
    tr = to_wgs84("EPSG:2263", "test")
    a = tr.transform(1_000_000.0, 200_000.0)
    b = tr.transform(1_001_000.0, 200_000.0)
    _, _, metres = Geod(ellps="WGS84").inv(*a, *b)
    assert metres == pytest.approx(1000 * 1200 / 3937, rel=1e-4)
    assert 40.6 < a[1] < 40.8 and -74.0 < a[0] < -73.8      # Brooklyn, not somewhere else


def test_round_trip_back_to_state_plane():
    from pyproj import Transformer
    lon, lat = to_wgs84("EPSG:2263", "test").transform(1_012_345.6, 234_567.8)
    back = Transformer.from_crs("EPSG:4326", "EPSG:2263", always_xy=True).transform(lon, lat)
    assert back == pytest.approx((1_012_345.6, 234_567.8), abs=1e-4)


def test_an_unknown_crs_names_the_file():
    with pytest.raises(NetworkError, match=r"town.yaml: crs: 'EPSG:999999'"):
        to_wgs84("EPSG:999999", "town.yaml")
