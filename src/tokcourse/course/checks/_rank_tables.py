"""Rank tables for the checks of chapters 05 and 12: real ones, read-only, and small ones.

Not a topic module (its name starts with ``_``): it registers no exercise.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from tokcourse import bpe

__all__ = ["_Ranks", "_real_ranks", "_small_ranks"]


class _Ranks(Mapping):
    """A tiktoken rank table (``{token bytes: rank}``) that reads like a dict and cannot change.

    The check copies every argument before each call; a real table holds 100,000 tokens, so
    this one copies as itself (it is immutable) and shows itself in a report by its name.
    """

    def __init__(self, name: str, ranks: Mapping[bytes, int]) -> None:
        self._name, self._ranks = name, ranks

    def __getitem__(self, token: bytes) -> int:
        return self._ranks[token]

    def get(self, token: Any, default: Any = None) -> Any:
        return self._ranks.get(token, default)

    def __contains__(self, token: object) -> bool:
        return token in self._ranks

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._ranks)

    def __len__(self) -> int:
        return len(self._ranks)

    # read-only views of the table itself: a student's dict(ranks) or loop over items() runs
    # at C speed instead of one Python call per token
    def keys(self) -> Any:
        return self._ranks.keys()

    def items(self) -> Any:
        return self._ranks.items()

    def values(self) -> Any:
        return self._ranks.values()

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Mapping) and dict(self.items()) == other)

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict) -> _Ranks:
        return self

    def __repr__(self) -> str:
        return f"<{self._name} ranks: {len(self._ranks):,} tokens>"


@cache
def _real_ranks(name: str) -> _Ranks:
    import tiktoken

    return _Ranks(name, tiktoken.get_encoding(name)._mergeable_ranks)


def _small_ranks(merges: dict[tuple[int, int], int]) -> dict[bytes, int]:
    """A rank table with the bytes in byte order, from a small trained merge table."""
    return {token: idx for idx, token in bpe.build_vocab(merges).items()}
