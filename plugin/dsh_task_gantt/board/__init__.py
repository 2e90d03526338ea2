"""The board: geometry (views, extent, ticks), the view model (a timeline dict in, a
:class:`~.model.Board` out), levels of detail (time chunks, aggregates) and the pieces
the panel sends (whole, or only what changed since the version the browser holds)."""
