"""The Chroma store: embedded (``PersistentClient``) or a server (``HttpClient``), telemetry off.

Talk ⇄ flat Chroma metadata conversion lives here too, so every stage reads talks the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from .config import Settings
from .errors import IndexNotReadyError, StoreUnavailableError
from .records import Event, Talk

__all__ = [
    "ServerCollection",
    "event_from_metadata",
    "event_metadata",
    "get_pages",
    "open_collection",
    "talk_from_metadata",
    "talk_metadata",
]

logger = logging.getLogger(__name__)

LIST_SEP = "; "
#: Rows per Chroma ``get``: one call over ~100k rows fails in SQLite ("too many SQL variables").
GET_PAGE = 5000


def get_pages(
    collection: Any, *, include: list[str], where: dict[str, Any] | None = None
) -> Iterator[dict[str, list[Any]]]:
    """``collection.get(where=..., include=...)`` over every matching row, ``GET_PAGE`` rows a page."""
    offset = 0
    while True:
        got = collection.get(where=where, include=include, limit=GET_PAGE, offset=offset)
        ids = got["ids"] or []
        yield {"ids": ids, **{key: got[key] or [] for key in include}}
        if len(ids) < GET_PAGE:
            return
        offset += GET_PAGE


def talk_metadata(talk: Talk) -> dict[str, str | int | float | bool]:
    """Flat scalar metadata for a talk (Chroma accepts no None or lists)."""
    return {
        "kind": "talk",
        "talk_id": talk.id,
        "title": talk.title,
        "speakers": LIST_SEP.join(talk.speakers),
        "duration_min": talk.duration_min if talk.duration_min is not None else -1,
        "abstract": talk.abstract,
        "truncated": talk.truncated,
        "event": talk.event or "",
        "event_id": talk.event_id or "",
        "event_date": talk.event_date or "",
        "year": talk.year or 0,
        "source": talk.source,
        "line": talk.line,
        "title_derived": talk.title_derived,
    }


def talk_from_metadata(meta: dict[str, Any]) -> Talk:
    speakers = str(meta.get("speakers") or "")
    duration = int(meta.get("duration_min", -1))
    return Talk(
        id=str(meta["talk_id"]),
        title=str(meta.get("title", "")),
        speakers=tuple(s for s in speakers.split(LIST_SEP) if s),
        duration_min=duration if duration >= 0 else None,
        abstract=str(meta.get("abstract", "")),
        truncated=bool(meta.get("truncated", False)),
        event=str(meta.get("event") or "") or None,
        event_id=str(meta.get("event_id") or "") or None,
        event_date=str(meta.get("event_date") or "") or None,
        year=int(meta.get("year") or 0) or None,
        source=str(meta.get("source", "")),
        line=int(meta.get("line", 0)),
        title_derived=bool(meta.get("title_derived", False)),
    )


def event_metadata(event: Event) -> dict[str, str | int | float | bool]:
    return {
        "kind": "event",
        "event_id": event.id,
        "event": event.name,
        "event_date": event.date or "",
        "format": event.format or "",
        "year": event.year or 0,
        "audience": LIST_SEP.join(event.audience),
        "topics": LIST_SEP.join(event.topics),
        "series": LIST_SEP.join(event.series),
        "source": event.source,
        "line": event.line,
    }


def event_from_metadata(meta: dict[str, Any]) -> Event:
    def split(key: str) -> tuple[str, ...]:
        return tuple(s for s in str(meta.get(key) or "").split(LIST_SEP) if s)

    return Event(
        id=str(meta["event_id"]),
        name=str(meta.get("event", "")),
        date=str(meta.get("event_date") or "") or None,
        format=str(meta.get("format") or "") or None,
        year=int(meta.get("year") or 0) or None,
        audience=split("audience"),
        topics=split("topics"),
        series=split("series"),
        source=str(meta.get("source", "")),
        line=int(meta.get("line", 0)),
    )


def make_client(settings: Settings) -> Any:
    """A Chroma client for the settings: a server when ``chroma_url`` is set, else embedded."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        if not url.hostname:
            raise StoreUnavailableError(f"--chroma-url {settings.chroma_url!r} is not like http://127.0.0.1:8000")
        try:
            client: Any = chromadb.HttpClient(
                host=url.hostname,
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
        except Exception as exc:
            raise StoreUnavailableError(
                f"cannot reach the Chroma server at {settings.chroma_url} ({exc}); "
                "start it with `chroma run --host 127.0.0.1` or unset TALKQA_CHROMA_URL"
            ) from exc
        client._talkqa_url = settings.chroma_url
        return client
    settings.chroma_path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(settings.chroma_path), settings=chroma_settings)


def open_collection(client: Any, name: str, model_id: str, *, create: bool) -> Any:
    """The talk collection (cosine space), checked to have been built by ``model_id``."""
    try:
        if create:
            collection = client.get_or_create_collection(
                name, metadata={"hnsw:space": "cosine", "embed_model": model_id}
            )
        else:
            collection = client.get_collection(name)
    except Exception as exc:
        if create:
            raise StoreUnavailableError(f"cannot open the Chroma collection {name!r}: {exc}") from exc
        raise IndexNotReadyError(f"no index yet (collection {name!r}); run `talkqa ingest`") from exc
    if getattr(client, "_talkqa_url", None):
        collection = ServerCollection(collection, client._talkqa_url)
    built_with = (collection.metadata or {}).get("embed_model")
    if built_with and built_with != model_id:
        raise IndexNotReadyError(
            f"the index was built with {built_with!r}, not {model_id!r}; "
            "run `talkqa ingest --rebuild` or use another --data-dir"
        )
    return collection


class ServerCollection:
    """A server collection whose lost connections raise ``StoreUnavailableError``, not raw httpx errors.

    The HTTP client reconnects by itself, so a restarted server is used again on the next call.
    """

    def __init__(self, collection: Any, url: str) -> None:
        self._collection = collection
        self._url = url

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._collection, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            import httpx

            try:
                return value(*args, **kwargs)
            except httpx.TransportError as exc:
                raise StoreUnavailableError(
                    f"lost the Chroma server at {self._url} ({exc}); "
                    "start it again with `chroma run --host 127.0.0.1` or unset TALKQA_CHROMA_URL"
                ) from exc

        return call
