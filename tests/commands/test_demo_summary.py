"""The demo's closing table says what was raised in words, as the pages do (issue 23)."""

from ms4watch.commands.demo import alerts_text


def test_the_alerts_by_kind_are_named_not_coded():
    text = alerts_text({"dry_weather_flow": 2, "inspection_due": 6, "turbidity_contrast": 3})
    assert text == "dry-weather flow: 2, inspection due: 6, turbidity contrast: 3"
    assert alerts_text({}) == "none"
