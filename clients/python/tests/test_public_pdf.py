"""A public document skill's script through the client: the pdf skill of
anthropics/skills, from the PyPI package test/selection/registry.json pins
(downloaded here and cached where the Go tests and the selection benchmark
cache it: its licence forbids committing it), uploaded to a user's library,
runs its form-field extractor with run_skill_script on a fillable PDF the
test makes, with this venv's python (it has pypdf: requirements-test.txt).
fields.json appears in the thread's /workspace with the form's fields.
Without bubblewrap the bwrap case fails when SKILLSVC_REQUIRE_SERVERS=1."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tarfile
import tempfile
import urllib.request
import uuid
from pathlib import Path

import pytest

from skillsvc import Client, runner

REGISTRY = Path(__file__).resolve().parents[3] / "test" / "selection" / "registry.json"
REQUIRED = os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1"


def unavailable(msg: str) -> None:
    if REQUIRED:
        pytest.fail(msg + " (SKILLSVC_REQUIRE_SERVERS=1)")
    pytest.skip(msg)


def cache_dir() -> Path:
    """Where internal/selection/corpus keeps archives: $SKILLSVC_SELECTION_CACHE,
    else skillsvc/selection-corpus in the user's cache directory."""
    if d := os.environ.get("SKILLSVC_SELECTION_CACHE"):
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "skillsvc" / "selection-corpus"


def _pinned(path: Path, sha256: str, size: int) -> bool:
    h = hashlib.sha256()
    n = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                n += len(chunk)
                if n > size:
                    return False
    except OSError:
        return False
    return n == size and h.hexdigest() == sha256


def fetch(source: dict) -> Path:
    """The source's archive in the cache, downloaded and verified against
    its pinned sha256 and size when it is not there."""
    d = cache_dir()
    file = d / (source["sha256"] + ".tgz")
    if _pinned(file, source["sha256"], source["size"]):
        return file
    d.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(source["url"], timeout=600) as resp:
            while chunk := resp.read(1 << 20):
                out.write(chunk)
                if out.tell() > source["size"]:
                    break
        if not _pinned(Path(tmp), source["sha256"], source["size"]):
            raise ValueError(f"{source['url']} does not match its pinned sha256 {source['sha256']} and size {source['size']}")
        os.replace(tmp, file)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return file


def public_skill(name: str, dest: Path) -> Path:
    """Extracts the target name's whole folder from its pinned package into
    dest/<folder>: regular files only, none outside the folder."""
    lst = json.loads(REGISTRY.read_text())
    target = next(t for t in lst["targets"] if t["name"] == name)
    source = next(s for s in lst.get("target_sources", []) + lst["sources"] if s["id"] == target["source"])
    assert source["url"].endswith((".tgz", ".tar.gz")), source["url"]
    try:
        archive = fetch(source)
    except (OSError, ValueError) as e:
        unavailable(f"the public {name} skill cannot be fetched: {e}")
    folder = target["path"].rsplit("/", 1)[0] + "/"
    out = dest / folder.rstrip("/").rsplit("/", 1)[-1]
    with tarfile.open(archive, "r:gz") as tar:
        for m in tar:
            rel = m.name.removeprefix("./").removeprefix(folder)
            if not m.isreg() or rel == m.name or ".." in rel.split("/") or rel.startswith("/"):
                continue
            p = out / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(tar.extractfile(m).read())
            p.chmod(0o755 if m.mode & 0o111 else 0o644)
    return out


def fillable_pdf() -> bytes:
    """A one-page PDF with an AcroForm of two fields, a text field
    "full_name" and a checkbox "agree" (states /Yes and /Off), written object
    by object with the cross-reference table its offsets need (the Go and
    TypeScript tests make the same file)."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R] >> >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Annots [4 0 R 5 0 R] >>",
        b"<< /Type /Annot /Subtype /Widget /FT /Tx /T (full_name) /Rect [50 120 250 140] /P 3 0 R >>",
        b"<< /Type /Annot /Subtype /Widget /FT /Btn /T (agree) /Rect [50 60 70 80] /P 3 0 R /V /Off /AS /Off"
        b" /AP << /N << /Yes 6 0 R /Off 6 0 R >> >> >>",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 0 >>\nstream\n\nendstream",
    ]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


# What the extractor finds in fillable_pdf().
FIELDS = [
    {"field_id": "full_name", "type": "text", "page": 1, "rect": [50, 120, 250, 140]},
    {"field_id": "agree", "type": "checkbox", "checked_value": "/Yes", "unchecked_value": "/Off", "page": 1, "rect": [50, 60, 70, 80]},
]


@pytest.fixture(scope="module")
def pdf_user(skillsvc_env, tmp_path_factory) -> str:
    try:
        import pypdf  # noqa: F401  (the script's import, in this interpreter)
    except ImportError:
        unavailable(f"{sys.executable} has no pypdf: run make pyenv (clients/python/requirements-test.txt pins it)")
    skill = public_skill("pdf", tmp_path_factory.mktemp("public"))
    user = "py-pdf-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        for f in sorted(p for p in skill.rglob("*") if p.is_file()):
            admin.put_library_file(f"docs/pdf/{f.relative_to(skill).as_posix()}", f.read_bytes(), user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_pdf_form_field_extractor(skillsvc_env, pdf_user: str, tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap" and not runner.bwrap_available():
        unavailable("bubblewrap is not available (apt-get install -y bubblewrap)")
    with Client(skillsvc_env.grpc_addr, user=pdf_user, thread="py-pdf-" + uuid.uuid4().hex[:8]) as c:
        c.upload("/workspace/form.pdf", fillable_pdf())
        r = c.run_skill_script(
            "pdf",
            "extract_form_field_info.py",
            args=["form.pdf", "fields.json"],
            sandbox=sandbox,
            interpreters={".py": sys.executable},
            cache_dir=tmp_path / "cache",
        )
        assert (r.exit_code, r.sandbox, r.stdout) == (0, sandbox, "Wrote 2 fields to fields.json\n"), r.stderr
        assert r.written == ["/workspace/fields.json"]
        assert json.loads(c.download("/workspace/fields.json")) == FIELDS
