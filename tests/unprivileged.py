"""Running a piece of a test as an unprivileged user: the tests run as root, which may write anything."""

from __future__ import annotations

import os
from collections.abc import Callable


def as_unprivileged(action: Callable[[], object]) -> tuple[int, str]:
    """Run ``action()`` in a forked child as the unprivileged user 65534; its exit code and message (3 = OSError)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.setgid(65534)
            os.setuid(65534)
            action()
        except OSError as exc:
            os.write(write, f"{type(exc).__name__}: {exc}".encode())
            code = 3
        except BaseException as exc:  # noqa: BLE001
            os.write(write, f"{type(exc).__name__}: {exc}".encode())
            code = 4
        finally:
            os._exit(code)
    os.close(write)
    try:
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status), os.read(read, 4096).decode()
    finally:
        os.close(read)
