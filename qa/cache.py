"""Small on-disk caches under the data dir (catalog, hashes, term sets), keyed by ingest generation.

Every cache is optional: a missing or unwritable one only costs a slower start.
"""

from __future__ import annotations

import logging
import pickle
import tempfile
from pathlib import Path

__all__ = ["write_cache"]

logger = logging.getLogger(__name__)


def write_cache(path: Path, value: object, stale: str) -> None:
    """Replace the files matching ``stale`` next to ``path`` with ``value``, written atomically.

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> write_cache(d / "terms-a.pkl", {"x": 1}, "terms-*.pkl"); write_cache(d / "terms-b.pkl", 2, "terms-*.pkl")
    >>> sorted(p.name for p in d.iterdir())
    ['terms-b.pkl']
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(stale):
            old.unlink(missing_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        Path(fh.name).replace(path)
    except OSError as exc:  # the cache is optional
        logger.warning("could not write the cache %s: %s", path, exc)
