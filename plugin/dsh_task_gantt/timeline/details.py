"""The drawn messages' and prompts' details, by id, as the drawing made them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class MessageDetails(Mapping[str, Mapping[str, Any]]):
    """Each drawn message's and prompt's detail, by id: the maps the drawing made, laid
    one over the other as ``dict.update`` would merge them (a later map's detail wins),
    not merged. A build reads none of them (the message route asks for one), and a
    day's team has tens of thousands: merged, they were a copy at every build."""

    __slots__ = ("_layers",)

    def __init__(self) -> None:
        self._layers: list[Mapping[str, Mapping[str, Any]]] = []

    def update(self, details: Mapping[str, Mapping[str, Any]]) -> None:
        """Lay ``details`` over what is here (held, never copied: never mutate it)."""
        if details:
            self._layers.append(details)

    def __setitem__(self, ident: str, detail: Mapping[str, Any]) -> None:
        top = self._layers[-1] if self._layers else None
        if type(top) is not _Own:
            top = _Own()
            self._layers.append(top)
        top[ident] = detail

    def __getitem__(self, ident: str) -> Mapping[str, Any]:
        for layer in reversed(self._layers):
            detail: Mapping[str, Any] | None = layer.get(ident)
            if detail is not None:
                return detail
        raise KeyError(ident)

    def __iter__(self) -> Iterator[str]:
        return iter({ident: None for layer in self._layers for ident in layer})

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Own(dict[str, Mapping[str, Any]]):
    """The details set one by one (a layer of the model's own)."""

    __slots__ = ()
