"""Users and their roles per municipality, passwords (argon2), API tokens (stored hashed),
login attempts (rate limiting), the signing secret, signed acknowledge links, CSRF."""

from .links import AckLinks
from .secret import load_secret
from .users import ApiToken, User, UserStore

__all__ = ["AckLinks", "load_secret", "ApiToken", "User", "UserStore"]
