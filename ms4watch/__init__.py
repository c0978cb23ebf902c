"""ms4watch — storm-sewer outfall monitoring for New York MS4 municipalities."""

__version__ = "0.1.0"
