"""The one-outfall town the server-level tests run (serve, its logs, metrics, backups,
crashes, `serve --check`): a rain gauge, an outfall with its dry-weather floor, the SMO."""

SITES = """\
municipality: town
timezone: America/New_York
rain_gauges: [{id: RG-1, tip_in: 0.01}]
outfalls: [{id: OF-12, name: Spook Rock Rd, rain_gauges: [RG-1], flow_floor_gpm: 0.5}]
contacts: [{name: Pat Doe, role: smo, email: smo@town.test}]
"""

MIN = 60 * 10**9
H = 60 * MIN


def publish_dry_weather_flow(port: int, *also: tuple[str, bytes]) -> int:
    """As the town's two loggers would: three dry days at RG-1, then flow at OF-12 rising
    above its floor for 35 min (a dry-weather-flow alert), published QoS 1 to the broker on
    ``port``, each acknowledged; ``also``: more (topic, payload) after them. Returns how
    many readings were published."""
    import time

    import paho.mqtt.client as mqtt

    from ms4watch.contract.wire import encode_readings
    from tests.support.mqtt_clients import stop_client

    now = time.time_ns() // MIN * MIN
    rain = [(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in", [], None) for k in range(80 * 4 + 1)]
    flow = [(now - 35 * MIN + k * 5 * MIN, "flow", "flow", 0.3 if k < 1 else 4.0 + k / 10, "L/s", [], None)
            for k in range(8)]
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="logger", protocol=mqtt.MQTTv311)
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    try:
        for topic, payload in (("ms4/town/RG-1/LOG-RG1/readings", encode_readings("LOG-RG1", 1, rain)),
                               ("ms4/town/OF-12/LOG-OF12/readings", encode_readings("LOG-OF12", 1, flow)), *also):
            pub.publish(topic, payload, qos=1).wait_for_publish(5)
    finally:
        stop_client(pub)
    return len(rain) + len(flow)
