from .sink import SqliteSink

__all__ = ["SqliteSink"]
