"""Unpack the bundle's data.tar.xz into DEST/ as lz4.frame files (Packages.lz4, Translation-<lang>.lz4)."""
import sys
import tarfile
from pathlib import Path

import lz4.frame

src, dest = sys.argv[1], Path(sys.argv[2])
dest.mkdir(parents=True, exist_ok=True)
with tarfile.open(src, "r:xz") as tar:
    for m in tar.getmembers():
        if m.isfile():
            data = tar.extractfile(m).read()
            (dest / (Path(m.name).name + ".lz4")).write_bytes(lz4.frame.compress(data))
            print(f"{Path(m.name).name}.lz4: {len(data):,} bytes of text")
