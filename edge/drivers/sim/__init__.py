from .driver import SimDriver, SimOptions
from .world import World

__all__ = ["SimDriver", "SimOptions", "World"]
