"""A handler module that fails on import (the hostile tests check it is reported)."""

raise RuntimeError("broken on import")
