"""View-generating functions (VGFs), by name: the paper's configuration letters and the views users register.

========  ==========================================================
letter    view
========  ==========================================================
``x``     :class:`~gfun.views.posteriors.PosteriorsView` (calibrated posteriors of per-language SVMs)
``m``     :class:`~gfun.views.embeddings.WordEmbeddingView` (TF-IDF x aligned word vectors, SIF, L2)
``w``     :class:`~gfun.views.wce.WordClassEmbeddingView` (TF-IDF x word-class embeddings, SIF, L2)
``b``     :class:`~gfun.views.transformer.TransformerView` (fine-tuned multilingual transformer, pooled vector)
``r``     :class:`~gfun.views.recurrent.RecurrentView` (GRU over aligned word vectors [+ WCEs])
``p``     :class:`~gfun.views.pooled.PooledPosteriorsView` (calibrated posteriors of SVMs over one vocabulary
          shared by all languages; serves any language)
``e``     :class:`~gfun.views.encoder.EncoderPosteriorsView` (calibrated posteriors of class-balanced SVMs on a
          frozen multilingual encoder's document vector; serves any language)
``f``     :class:`~gfun.views.encoder.FusedPosteriorsView` (the same on the encoder's vector beside the pooled
          TF-IDF row: early fusion; serves any language)
========  ==========================================================

A view written outside gfun (a subclass of :class:`~gfun.views.base.ViewGenerator`) gets a name with
:func:`register_view`: the name then works in the letters shortcut (``views="xc"`` for a name ``"c"``), in
``view_params``, and it is how a saved model refers to the view's class (loading looks the name up here and
never imports or unpickles anything; a model with such a view loads where the same registration was made).
:func:`gfun.views.checks.check_view` checks that a view follows the contract.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from gfun.views.base import ViewGenerator
from gfun.views.embeddings import WordEmbeddingView
from gfun.views.encoder import EncoderPosteriorsView, FusedPosteriorsView
from gfun.views.pooled import PooledPosteriorsView
from gfun.views.posteriors import PosteriorsView
from gfun.views.recurrent import RecurrentView
from gfun.views.transformer import TransformerView
from gfun.views.wce import WordClassEmbeddingView

__all__ = ["BUILTIN_VIEWS", "VIEW_CLASSES", "accepted_params", "check_view_name", "class_path", "make_view",
           "register_view", "registered_name", "unregister_view", "view_class", "views_serving_unseen_languages"]

#: Configuration letter -> view class.
VIEW_CLASSES: dict[str, type[ViewGenerator]] = {
    "x": PosteriorsView,
    "m": WordEmbeddingView,
    "w": WordClassEmbeddingView,
    "b": TransformerView,
    "r": RecurrentView,
    "p": PooledPosteriorsView,
    "e": EncoderPosteriorsView,
    "f": FusedPosteriorsView,
}


#: The names of the built-in views (:func:`unregister_view` refuses them).
BUILTIN_VIEWS: tuple[str, ...] = tuple(VIEW_CLASSES)

_NAME = re.compile(r"[a-z][a-z0-9_]*")


def check_view_name(name: Any) -> str:
    """``name`` if it can name a view: lower-case letters, digits and ``_``, starting with a letter, no ``__``
    (which separates a view's name from its parameter in ``set_params(m__source=...)``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or "__" in name:
        raise ValueError(f"a view name is lower-case letters, digits and '_' (a letter first, no '__'), got {name!r}")
    return name


def register_view(name: str, cls: type[ViewGenerator], *, replace: bool = False) -> type[ViewGenerator]:
    """Give view class ``cls`` the name ``name``: usable in ``views="..."`` (a one-letter name), in
    ``view_params`` and in saved models.

    Registering is also what allows a saved model to rebuild views of ``cls``: loading looks the class up by
    this name only (it is recorded with the class's import path, which must match).

    Parameters
    ----------
    name : str
        Lower-case letters, digits and ``_`` (see :func:`check_view_name`); a one-letter name also works in the
        letters shortcut (``"xc"``).
    cls : type
        A subclass of :class:`~gfun.views.base.ViewGenerator` (the class, not an instance).
    replace : bool
        Allow re-binding a name already registered to another class (never a built-in one).

    Returns
    -------
    cls

    Raises
    ------
    ValueError
        An invalid name, or one registered to another class (without ``replace``).
    TypeError
        ``cls`` is not a ViewGenerator subclass.
    """
    check_view_name(name)
    if not (isinstance(cls, type) and issubclass(cls, ViewGenerator)):
        raise TypeError(f"register_view needs a subclass of gfun.views.ViewGenerator, got {cls!r}")
    if inspect.isabstract(cls):
        raise TypeError(f"{cls.__qualname__} does not implement {sorted(cls.__abstractmethods__)}")
    current = VIEW_CLASSES.get(name)
    if current is not None and current is not cls and (not replace or name in BUILTIN_VIEWS):
        raise ValueError(f"view name {name!r} is taken by {current.__module__}.{current.__qualname__}"
                         + ("" if name in BUILTIN_VIEWS else " (pass replace=True to re-bind it)"))
    VIEW_CLASSES[name] = cls
    return cls


def unregister_view(name: str) -> None:
    """Remove a name registered by :func:`register_view` (built-in names cannot be removed)."""
    if name in BUILTIN_VIEWS:
        raise ValueError(f"{name!r} is a built-in view")
    VIEW_CLASSES.pop(name, None)


def _default_reach(cls: type[ViewGenerator]) -> str | None:
    """``language_reach()`` of a view of ``cls`` with its default parameters; for a class that cannot be built
    without arguments, ``"some"`` where it does not override :meth:`ViewGenerator.language_reach` (the default
    answer), else None (unknown)."""
    try:
        return cls().language_reach()
    except Exception:  # a user's view may need constructor arguments, or a fit, to answer
        return "some" if cls.language_reach is ViewGenerator.language_reach else None


def _title(cls: type[ViewGenerator]) -> str:
    """A view class's name in words: its docstring's first words before ``VGF`` (``"Word-embeddings"``), or
    the class name."""
    first = (inspect.getdoc(cls) or "").strip().partition("\n")[0]
    title = first.partition(" VGF")[0].strip() if " VGF" in first else ""
    return title or cls.__name__


def views_serving_unseen_languages() -> list[str]:
    """The registered views that can serve languages without training documents, as ``"M (Word-embeddings)"``.

    A view is listed when its ``language_reach()``, with its default parameters, is ``"any"`` or ``"some"``;
    the list follows :data:`VIEW_CLASSES`, so a view registered with :func:`register_view` appears too. Named in
    the error for a language no view of a model can represent.

    Returns
    -------
    list of str
        ``"<NAME> (<title>)"`` for each such view, in registration order (a one-letter name upper-cased).
    """
    return [f"{name.upper() if len(name) == 1 else name} ({_title(cls)})" for name, cls in VIEW_CLASSES.items()
            if _default_reach(cls) in ("any", "some")]


def registered_name(cls: type[ViewGenerator], prefer: str | None = None) -> str | None:
    """The name ``cls`` is registered under (``prefer`` when it is one of several), or None."""
    names = [n for n, c in VIEW_CLASSES.items() if c is cls]
    if prefer in names:
        return prefer
    return names[0] if names else None


def class_path(cls: type) -> str:
    """``module.QualifiedName`` of a class (how a saved model records a view's class)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def view_class(name: str) -> type[ViewGenerator]:
    """The view class registered as ``name``."""
    try:
        return VIEW_CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown view {name!r}; registered: {', '.join(VIEW_CLASSES)} "
                         "(gfun.register_view gives a view class a name)") from None


def accepted_params(cls: type) -> set[str]:
    """The parameters ``cls.__init__`` accepts."""
    return {p for p in inspect.signature(cls.__init__).parameters if p != "self"}


def make_view(name: str, *, defaults: dict[str, Any] | None = None, **params: Any) -> ViewGenerator:
    """An unfitted view of the class registered as ``name``.

    ``params`` must all be parameters of the view (a typo raises); ``defaults`` are passed only to views that
    accept them (such as ``n_jobs`` and ``random_state``, which gfun hands every view).

    Raises
    ------
    ValueError
        An unknown view name, or a parameter the view does not have.
    """
    cls = view_class(name)
    accepted = accepted_params(cls)
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ValueError(f"view {name!r} ({cls.__name__}) has no parameter(s) {unknown}; its parameters: "
                         f"{sorted(accepted)}")
    kwargs = {k: v for k, v in (defaults or {}).items() if k in accepted}
    kwargs.update(params)
    return cls(**kwargs)
