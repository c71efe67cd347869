#!/usr/bin/env python3
"""Writes git-trees.json: for each of the 17 public targets in registry.json,
the anthropics/skills commit whose skills/<name> tree holds exactly the
package's folder (every file's bytes and executable bit), and that tree's
git object id.

cmd/skillctl's TestPullPublicLibrary computes the git tree id of each skill a
flat `skillctl pull` writes and compares it with the id recorded here: equal
ids mean the pulled folder is, file for file and mode for mode, what
`git checkout <commit>` puts in skills/<name>. Git is the authority on the
modes; the packages only carry the same bytes to CI, which reaches
registries and not GitHub.

Run by hand when registry.json's targets change, with a clone of
https://github.com/anthropics/skills (full history) and the selection cache
filled (any run of the test fills it):

    python3 test/selection/git_trees.py /path/to/anthropics-skills > test/selection/git-trees.json
"""
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def cache_dir():
    d = os.environ.get("SKILLSVC_SELECTION_CACHE")
    return d or os.path.join(os.path.expanduser("~/.cache"), "skillsvc", "selection-corpus")


def package_folder(source, prefix):
    """The package's files under prefix: {relative path: (bytes, mode)}."""
    ext = ".zip" if source["url"].endswith(".whl") else ".tgz"
    path = os.path.join(cache_dir(), source["sha256"] + ext)
    out = {}
    if ext == ".zip":
        with zipfile.ZipFile(path) as z:
            for i in z.infolist():
                if i.filename.startswith(prefix) and not i.is_dir():
                    out[i.filename[len(prefix):]] = (z.read(i), (i.external_attr >> 16) & 0o777)
    else:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isreg() and m.name.startswith(prefix):
                    out[m.name[len(prefix):]] = (t.extractfile(m).read(), m.mode)
    return out


def blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git(repo, *args):
    return subprocess.check_output(["git", "-C", repo, *args], text=True)


def main():
    repo = sys.argv[1]
    reg = json.load(open(os.path.join(HERE, "registry.json")))
    sources = {s["id"]: s for s in reg["target_sources"]}
    commits = git(repo, "rev-list", "--all", "--topo-order").split()
    out = {"repository": "https://github.com/anthropics/skills", "skills": {}}
    for target in reg["targets"]:
        name = target["name"]
        files = package_folder(sources[target["source"]], os.path.dirname(target["path"]) + "/")
        want = {rel: ("100755" if mode & 0o111 else "100644", blob_id(data)) for rel, (data, mode) in files.items()}
        found = None
        for c in commits:  # newest first
            folder = "skills/%s/" % name
            have = {}
            for line in git(repo, "ls-tree", "-r", c, "--", folder).splitlines():
                meta, p = line.split("\t", 1)
                mode, _, blob = meta.split()
                have[p[len(folder):]] = (mode, blob)
            if have == want:
                tree = git(repo, "rev-parse", "%s:skills/%s" % (c, name)).strip()
                found = {"commit": c, "tree": tree, "files": len(want),
                         "executable": sorted(r for r, (m, _) in want.items() if m == "100755")}
                break
        if found is None:
            ever = set()
            for line in git(repo, "log", "--all", "--format=", "--raw", "--no-abbrev", "--", "skills/%s" % name).splitlines():
                fields = line.split()
                if len(fields) >= 5:
                    ever.add(fields[3])
            seen = sum(1 for _, blob in want.values() if blob in ever)
            found = {"commit": None, "files": len(want),
                     "why": "%d of its %d files' contents were ever committed under skills/%s" % (seen, len(want), name)}
        out["skills"][name] = found
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
