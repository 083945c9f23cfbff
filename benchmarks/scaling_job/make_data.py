"""Build the bundle's data.tar.xz: a reduced debtags folder that load_debtags reads identically (split="all").

Run locally with the gfun venv: python benchmarks/scaling_job/make_data.py ../shared/data/debtags .dev2/data.tar.xz
Packages: only records of tagged packages, fields Package/Source/Tag/Description-md5.
Translation-<lang>: only the records the loader accepts (Package/Description-md5/Description-<lang>).
Files are plain text inside an xz tarball; the job re-compresses them to lz4.frame on the device.
"""
import io
import sys
import tarfile
from pathlib import Path

from gfun.datasets.debian_archive import _find_files, _read_file, parse_deb822
from gfun.datasets.debtags import DEBTAGS_MANY_SHOT, DEBTAGS_ZERO_SHOT, _load_packages


def raw_paragraphs(text: str):
    """Paragraphs as lists of (key, [raw lines]) with the same line rules as parse_deb822."""
    fields, last = [], None
    for line in text.split("\n"):
        if not line or line[0] in " \t" or line.isspace():
            if not line or line.isspace():
                if fields:
                    yield fields
                fields, last = [], None
                continue
            if last is not None:
                last[1].append(line)
            continue
        key = line.partition(":")[0]
        last = (key, [line])
        fields.append(last)
    if fields:
        yield fields


def render(fields, keep):
    return "\n".join(line for key, lines in fields if key in keep for line in lines)


def main(src, out):
    src = Path(src)
    tagged, _, _ = _load_packages(src)
    files = {}
    (pk,) = _find_files(src, "Packages")
    text, _ = _read_file(pk)
    keep = {"Package", "Source", "Tag", "Description-md5"}
    paras = []
    for fields in raw_paragraphs(text):
        rec = {k: "\n".join(ls) for k, ls in fields}
        name = rec.get("Package", "").partition(":")[2].strip()
        if name in tagged:
            paras.append(render(fields, keep))
    files["Packages"] = "\n\n".join(paras) + "\n"
    for lang in DEBTAGS_MANY_SHOT + DEBTAGS_ZERO_SHOT:
        (tr,) = _find_files(src, f"Translation-{lang}")
        text, _ = _read_file(tr)
        fld = f"Description-{lang}"
        keep = {"Package", "Description-md5", fld}
        accepted, paras = set(), []
        for fields in raw_paragraphs(text):
            rec = next(parse_deb822(render(fields, keep), keep), {})
            name = rec.get("Package")
            if name is None or name in accepted or fld not in rec:
                continue
            pkg = tagged.get(name)
            if pkg is None or (pkg.md5s and rec.get("Description-md5") not in pkg.md5s):
                continue
            accepted.add(name)
            paras.append(render(fields, keep))
        files[f"Translation-{lang}"] = "\n\n".join(paras) + "\n"
    with tarfile.open(out, "w:xz", preset=9 | 0x80000000) as tar:  # xz -9e
        for name, body in files.items():
            data = body.encode("utf-8")
            info = tarfile.TarInfo(f"debtags/{name}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
            print(f"{name}: {len(data):,} bytes")


if __name__ == "__main__":
    main(*sys.argv[1:])
