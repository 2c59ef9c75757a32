"""Common -> human-readable text: :mod:`.markdown` for files, :mod:`.terminal` for ``show``."""
