"""The terminal lines the pipeline prints for events: values rounded for a person to read."""

from ms4watch.pipeline import AlertPipeline


def line(d):
    return AlertPipeline._line(None, d)     # uses nothing of the pipeline but the event


def test_storm_depths_and_values_are_rounded():
    assert line({"kind": "storm", "gauge": "RG-2", "start": "2026-06-06T20:19:00-04:00", "depth_in": 0.031496}) == \
        "[2026-06-06 20:19] storm RG-2 0.03 in, raining"
    assert line({"kind": "storm", "gauge": "RG-1", "start": "2026-06-03T01:00:00-04:00", "depth_in": 0.85,
                 "qualifying": True, "end": "2026-06-03T09:10:00-04:00"}) == \
        "[2026-06-03 01:00] storm RG-1 0.85 in, qualifying, ended 09:10"
    assert line({"kind": "turbidity_contrast", "station": "TP-1", "start": "2026-06-06T20:30:00-04:00",
                 "max_delta_ntu": 15.948}).endswith("max +15.9 NTU")
