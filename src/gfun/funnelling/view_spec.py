"""The ``views`` configuration of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`: its names and its
parameters.

A configuration is letters (``"xmw"``: the views registered under those names) or a list of ``(name, view)``
pairs, registered names and view objects. This module parses it (:func:`parse_views`, :func:`view_names`),
writes view sets in logs (:func:`label`), resolves the registered name a saved model refers to a view by
(:func:`registered_view_name`, :func:`saved_view_class`), and holds :class:`NamedViewsMixin`: the nested
parameters (``m__source``) and the construction of the configured, unfitted views.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gfun.views import (
    VIEW_CLASSES,
    accepted_params,
    check_view_name,
    class_path,
    make_view,
    registered_name,
    view_class,
)
from gfun.views.base import ViewGenerator

#: The nested estimators of GeneralizedFunnelling (``<name>__<parameter>`` in ``set_params``); no view may take
#: their names.
NESTED: tuple[str, ...] = ("meta", "mapper", "aggregation")

__all__ = ["NESTED", "NamedViewsMixin", "check_unique_names", "label", "parse_views", "registered_view_name",
           "saved_view_class", "view_names"]


def parse_views(spec: str | Sequence[Any]) -> list[str]:
    """View names from a configuration such as ``"xmw"`` (letters, order-insensitive, no repeats)."""
    if isinstance(spec, str):
        letters = [c for c in spec.lower() if not c.isspace()]
        unknown = [c for c in letters if c not in VIEW_CLASSES]
        if unknown:
            raise ValueError(f"unknown view letter(s) {unknown} in {spec!r}; available: "
                             f"{''.join(n for n in VIEW_CLASSES if len(n) == 1)} (gfun.register_view names a view)")
        if len(set(letters)) != len(letters):
            raise ValueError(f"view letters repeat in {spec!r}")
        if not letters:
            raise ValueError("at least one view is needed")
        return letters
    raise TypeError(f"views must be a string of letters such as 'xmw', got {type(spec).__name__}")


def _view_entry_name(entry: Any) -> str:
    """The name of one entry of a ``views`` list: ``(name, view)``, a registered name, or a view object."""
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], ViewGenerator):
            raise TypeError(f"a views entry is (name, ViewGenerator), a view name or a ViewGenerator, got {entry!r}")
        return check_view_name(entry[0])
    if isinstance(entry, str):
        view_class(entry)
        return entry
    if isinstance(entry, ViewGenerator):
        name = registered_name(type(entry), prefer=type(entry).letter)
        if name is None and type(entry).letter != "?":
            name = type(entry).letter
        if name is None:
            raise ValueError(f"the view {type(entry).__name__} has no name: give one, views=[('name', view), ...], "
                             "or register its class (gfun.register_view)")
        return name
    raise TypeError(f"a views entry is (name, ViewGenerator), a view name or a ViewGenerator, got {entry!r}")


def view_names(spec: str | Sequence[Any]) -> list[str]:
    """The names of the views of a ``views`` configuration, checked: known, and none given twice.

    Raises
    ------
    ValueError
        An unknown name, or two views with the same name.
    """
    if isinstance(spec, str):
        return parse_views(spec)
    if not isinstance(spec, Sequence):
        raise TypeError(f"views must be letters such as 'xmw' or a list of (name, view), got {type(spec).__name__}")
    names = [_view_entry_name(entry) for entry in spec]
    if not names:
        raise ValueError("at least one view is needed")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"two views are named {repeated[0]!r}: every view needs its own name "
                         "(views=[('x', PosteriorsView()), ('x2', PosteriorsView(C=10))])")
    taken = sorted(set(names) & set(NESTED))
    if taken:
        raise ValueError(f"a view cannot be named {taken[0]!r}: that name is the estimator's nested "
                         f"{taken[0]} (its parameters are set as {taken[0]}__<parameter>)")
    return names


def check_unique_names(spec: Any) -> None:
    """Refuse a ``views`` configuration that names two views alike, at construction.

    Only that: anything else (an unknown name, a malformed entry, a value of another type) is left to ``fit``, as
    scikit-learn's contract wants of ``__init__`` (``check_do_not_raise_errors_in_init_or_set_params``).
    """
    if isinstance(spec, str):
        letters = [c for c in spec.lower() if not c.isspace()]
        repeated = sorted({c for c in letters if letters.count(c) > 1 and c in VIEW_CLASSES})
        if repeated:
            raise ValueError(f"view letters repeat in {spec!r}")
        return
    if not isinstance(spec, Sequence):
        return
    try:
        names = [_view_entry_name(entry) for entry in spec]
    except (TypeError, ValueError):  # not a views configuration: fit says why
        return
    if len(set(names)) != len(names):
        view_names(spec)  # raises, naming the repeated view


def label(names: Sequence[str]) -> str:
    """How a set of views is written in logs and the validated scores of ``select`` (``Select.scores_``): ``"xm"``."""
    return ("" if all(len(n) == 1 for n in names) else "+").join(names)



def registered_view_name(view: ViewGenerator, name: str) -> str:
    """The name ``view``'s class is registered under (how a saved model refers to it)."""
    registered = registered_name(type(view), prefer=name)
    if registered is None:
        raise ValueError(f"cannot save view {name!r}: its class {class_path(type(view))} is not registered; "
                         f"gfun.register_view({name!r}, {type(view).__name__}) gives it a name (and loading the model "
                         "needs the same registration)")
    return registered


def saved_view_class(name: str, path: str | None) -> type[ViewGenerator]:
    """The registered view class a saved model names (``path``: the class's import path when it was saved)."""
    from gfun.errors import UnregisteredViewError

    cls = VIEW_CLASSES.get(name)
    if cls is None:
        raise UnregisteredViewError(
            f"the model has a view of class {path or '?'} registered as {name!r}, and no view is registered under "
            f"that name here: import the class and call gfun.register_view({name!r}, <class>) before loading "
            "(a saved model never imports or unpickles code)")
    if path is not None and class_path(cls) != path:
        raise UnregisteredViewError(
            f"the model's view {name!r} was saved from class {path}, but {name!r} is registered here as "
            f"{class_path(cls)}: register the same class before loading")
    return cls



def _set_by_constructor(view: ViewGenerator) -> set[str]:
    """The parameters of ``view`` that differ from its class's defaults."""
    import inspect

    defaults = inspect.signature(type(view).__init__).parameters
    out = set()
    for key, value in view.get_params(deep=False).items():
        default = defaults[key].default if key in defaults else inspect.Parameter.empty
        try:
            same = bool(value is default or value == default)
        except (TypeError, ValueError):  # arrays and other values without a plain truth
            same = False
        if not same:
            out.add(key)
    return out


class NamedViewsMixin:
    """The named views of a ``views`` configuration as nested parameters (as :class:`sklearn.pipeline.Pipeline`).

    Mixed into :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`, which provides ``views``, ``view_params``
    and ``_view_defaults()`` (what the estimator hands every view: see :meth:`_named_views`).
    """

    views: Any
    view_params: dict | None

    def _check_view_params(self) -> dict[str, dict]:
        """``view_params``, checked: every name registered, every parameter one its view has."""
        extra = self.view_params or {}
        if not isinstance(extra, dict):
            raise TypeError(f"view_params must be a dict of view name -> parameters, got {type(extra).__name__}")
        configured = {} if isinstance(self.views, str) else {
            n: e for n, e in zip(view_names(self.views), self.views, strict=True) if not isinstance(e, str)}
        for name, params in extra.items():
            if name in configured:
                view = configured[name][1] if isinstance(configured[name], tuple) else configured[name]
                cls = type(view)
            else:
                cls = view_class(name)
            unknown = sorted(set(params or {}) - accepted_params(cls))
            if unknown:
                raise ValueError(f"view_params[{name!r}]: {cls.__name__} has no parameter(s) {unknown}; its "
                                 f"parameters: {sorted(accepted_params(cls))}")
        return extra

    def _named_views(self, spec: Any = None) -> list[tuple[str, ViewGenerator]]:
        """The configured views, unfitted, with their names (new objects: ``views`` is not modified).

        One rule for every view, named by letter or given as an object: the view's parameters are its own (an
        object's), then ``view_params``; the estimator then sets the parameters the view takes from it
        (:attr:`~gfun.views.base.ViewGenerator.from_estimator`: ``n_jobs``, ``random_state``, and for X the
        policy's ``train_posteriors``) wherever neither gave one (an object's parameter left at its default).
        """
        from sklearn.base import clone

        spec = self.views if spec is None else spec
        extra = self._check_view_params()
        entries = parse_views(spec) if isinstance(spec, str) else list(spec)
        handed = self._view_defaults()
        out = []
        for name, entry in zip(view_names(spec), entries, strict=True):
            given = set(extra.get(name) or {})
            if isinstance(entry, str):
                view = make_view(name, **extra.get(name, {}))
            else:
                view = clone(entry[1] if isinstance(entry, tuple) else entry)
                given |= _set_by_constructor(view)
                if extra.get(name):
                    view.set_params(**extra[name])
            takes = set(getattr(view, "from_estimator", ())) & set(view.get_params(deep=False)) - given
            view.set_params(**{k: v for k, v in handed.items() if k in takes})
            out.append((name, view))
        return out

    def _build_views(self, spec: Any = None) -> list[ViewGenerator]:
        """The configured views, unfitted (see :meth:`_named_views`)."""
        return [view for _, view in self._named_views(spec)]

    # ------------------------------------------------------------------ nested parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's parameters; with ``deep``, also each view object of ``views`` (by name) and its
        parameters, as ``<name>__<parameter>`` (as :class:`sklearn.pipeline.Pipeline` does). A letters
        configuration has no view objects: :meth:`set_params` takes ``<letter>__<parameter>`` all the same."""
        out = super().get_params(deep=False)
        if not deep:
            return out
        for nested in NESTED:
            value = out.get(nested)
            if hasattr(value, "get_params"):
                out.update({f"{nested}__{k}": v for k, v in value.get_params(deep=True).items()})
        if isinstance(self.views, str):
            return out
        try:
            names = view_names(self.views)
        except (TypeError, ValueError):  # not a views configuration: no nested parameters (fit says why)
            return out
        for name, entry in zip(names, self.views, strict=True):
            if isinstance(entry, str):
                continue
            view = entry[1] if isinstance(entry, tuple) else entry
            out[name] = view
            out.update({f"{name}__{k}": v for k, v in view.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> Any:
        """Set parameters, a view's as ``<name>__<parameter>`` (``m__source=...``) or a whole view as ``<name>``
        (for a list of named views). For a letters configuration a view's parameters go to ``view_params``.

        The estimator's own parameters are set as given (checked by ``fit``, as scikit-learn wants); a view's
        parameter (``<name>__<parameter>``) or a view replaced by name is checked here, against the views."""
        mine = super().get_params(deep=False)
        own = {k: v for k, v in params.items() if "__" not in k and k in mine}
        super().set_params(**own)
        params = {k: v for k, v in params.items() if k not in own}
        for nested in NESTED:
            sub = {k.partition("__")[2]: params.pop(k) for k in list(params) if k.startswith(nested + "__")}
            if sub:
                self._nested_estimator(nested).set_params(**sub)
        if not params:
            return self
        nested: dict[str, dict[str, Any]] = {}
        replaced: dict[str, Any] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                replaced[name] = value
        names = view_names(self.views)
        unknown = sorted((set(nested) | set(replaced)) - set(names))
        if unknown:
            raise ValueError(f"invalid parameter(s) {unknown} of GeneralizedFunnelling: no view is named "
                             f"{unknown[0]!r} (views: {names})")
        if isinstance(self.views, str) and replaced:
            raise ValueError(f"views={self.views!r} is a letters configuration: set a view's parameters "
                             f"(e.g. {sorted(replaced)[0]}__<parameter>), or give views as a list of (name, view)")
        entries = [self.views] if isinstance(self.views, str) else list(self.views)
        by_name = dict(zip(names, entries, strict=True)) if not isinstance(self.views, str) else {}
        extra = {k: dict(v) for k, v in (self.view_params or {}).items()}
        for name, sub in nested.items():
            entry = replaced.get(name, by_name.get(name, name))
            if isinstance(entry, str):  # a view built from its name: its parameters live in view_params
                extra.setdefault(name, {}).update(sub)
            else:
                (entry[1] if isinstance(entry, tuple) else entry).set_params(**sub)
        if extra != (self.view_params or {}):
            self.view_params = extra
        if replaced:
            self.views = [(n, replaced[n]) if n in replaced else e for n, e in zip(names, entries, strict=True)]
            view_names(self.views)
        self._check_view_params()
        return self
