"""Saving and loading fitted models, without pickle, without ever destroying what gfun did not write.

A saved model is a directory that gfun owns::

    DIR/
      .gfun-model                  marker: JSON {"magic": "gfun model directory", "layout": 1, ...}
      CURRENT                      pointer: JSON {"version": "v-...", "manifest_sha256": ..., "manifest_size": ...}
      v-20261126T091500123456Z-1a2b3c4d/
        manifest.json              format, format version, gfun version, estimator, configuration, classes,
                                   languages, the SHA-256 and size of the two other files, and the versions of
                                   the numeric libraries the saving process had imported
        state.json                 the fitted state's structure and scalars (vocabularies, parameters)
        arrays.npz                 the fitted state's numeric arrays (loaded with ``allow_pickle=False``)

Ownership. gfun writes into a directory only if it is new, empty, or carries the marker ``.gfun-model``
(a JSON file with gfun's magic string, written when gfun first claims the directory). Any other
non-empty directory (a web application, a data folder, the current directory) is refused with a message
naming it and what it holds, and so is a path that is a file. gfun only ever deletes what its own
naming proves it wrote inside a marked directory: ``v-<timestamp>-<random>`` version folders other than
the current one and its own ``.CURRENT.*.tmp`` files. Nothing beside the directory (such as a
``.DIR.old`` backup) is touched. :func:`~gfun.persistence.saving.check_model_destination` runs these checks
(and a real write test) before an expensive fit.

Atomic replacement. A save writes a complete new version folder (files flushed to disk), then
replaces ``CURRENT`` with a single ``os.replace``, and only after that removes the previous version.
A reader follows ``CURRENT``, so it always finds either the old or the new complete model; a reader
that followed the old pointer just before the old version was removed retries with the new pointer.
Concurrent saves to one directory are serialised with an advisory lock (``flock``) on the directory, taken
before a new directory is claimed: both succeed, the last one wins. ``CURRENT`` and the marker are never
written or read through a symbolic link; a ``CURRENT`` that is a link, a FIFO or a device is refused before
the fit (and again under the lock).
A save that was killed leaves an unreferenced version folder, removed by the next save. New
directories and files get the usual permissions (the umask decides, as for any other file).

Loading never executes code from the files: JSON and plain numeric arrays only, and the estimator
class is looked up in a fixed allow-list. Only regular files inside the directory are read: symbolic
links (for instance to ``/dev/zero`` or to a file elsewhere), devices and FIFOs are refused without
being opened for reading. ``CURRENT`` records the size and SHA-256 of the manifest, and the manifest
those of the other files; sizes are checked before reading and checksums before parsing. A model
written in another format version is refused, and a damaged or hand-edited manifest or state
(missing keys, wrong types, inconsistent entries) raises :class:`~gfun.errors.DamagedModelError` naming the file and
the field; a state that fails to rebuild inside a library installed in another version than the manifest records
raises its subclass :class:`~gfun.errors.LibraryVersionError`, naming both versions. After loading, the model
is run on one probe document per language; a state that loads but cannot predict is refused the same way.

References. Parts of a state that are a deterministic function of a local encoder are stored by reference,
identified by a SHA-256 and rebuilt at load time from the local copy (never downloaded): the weights of a B view
that fine-tuning did not change, and the word vectors of an M view over sub-word means (``e5-subword``). A copy
that differs is refused with :class:`~gfun.errors.ReferenceMismatchError`, naming the state file and the encoder; a
self-contained save (``gfun train --self-contained``) stores them instead.

Models saved by gfun 0.1.0 in the earlier flat layout (``manifest.json``, ``state.json`` and
``arrays.npz`` directly in the directory, no marker) still load, with the same checks except the
manifest checksum, which that layout did not have. gfun does not save over such a directory (it
cannot prove that it wrote it): delete it or choose another directory.

Modules: :mod:`gfun.persistence.directory` (file names, marker, pointer, the estimators' allow-list),
:mod:`gfun.persistence.saving` (:func:`~gfun.persistence.saving.save_model`: destination checks, locking, versions,
atomic writes), :mod:`gfun.persistence.loading` (:func:`~gfun.persistence.loading.load_model`: manifest checks,
safe opening, verification, rebuild) and :mod:`gfun.persistence.legacy` (every older shape of a saved state brought to
today's before it is rebuilt). The fitted states themselves are flattened by :mod:`gfun.core.state`.
"""
