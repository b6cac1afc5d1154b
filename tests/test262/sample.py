#!/usr/bin/env python3
"""Choose Palisade's test262 sample and vendor it under tests/test262/upstream/.

    python3 tests/test262/sample.py TEST262_GIT_DIR QUICKJS_DIR

TEST262_GIT_DIR is a clone of tc39/test262 (bare or not; HEAD is used); QUICKJS_DIR holds the
QuickJS-ng sources rquickjs-sys ships (its test262.conf names the features QuickJS-ng skips).
The rule (also written to manifest.json): the paths under test/built-ins and test/language,
sorted; without _FIXTURE files, module tests, tests QuickJS-ng's test262.conf excludes and tests
whose features it marks skip; then every k-th, from the first, with k = len // TARGET.
"""

import hashlib
import json
import os
import subprocess
import sys

import yaml

TARGET = 600
ROOTS = ("test/built-ins/", "test/language/")


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True
    ).stdout


class Blobs:
    """Reads files at HEAD through one `git cat-file --batch`."""

    def __init__(self, repo):
        self.proc = subprocess.Popen(
            ["git", "-C", repo, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, path):
        self.proc.stdin.write(f"HEAD:{path}\n".encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        size = int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data


def metadata(text):
    start = text.find("/*---")
    end = text.find("---*/", start)
    if start < 0 or end < 0:
        return {}
    return yaml.safe_load(text[start + 5 : end]) or {}


def quickjs_conf(path):
    skip, exclude, section = set(), set(), None
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "features" and line.endswith("=skip"):
            skip.add(line[: -len("=skip")])
        elif section == "exclude":
            exclude.add(line.removeprefix("test262/"))
    return skip, exclude


def main():
    repo, quickjs = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "upstream")
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    blobs = Blobs(repo)
    skip, exclude = quickjs_conf(os.path.join(quickjs, "test262.conf"))
    every = git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
    paths = sorted(
        p for p in every if p.startswith(ROOTS) and p.endswith(".js") and "_FIXTURE" not in p
    )
    fixtures_in = {}
    for p in every:
        if p.startswith(ROOTS) and "_FIXTURE" in p:
            fixtures_in.setdefault(os.path.dirname(p), []).append(p)
    eligible = []
    for path in paths:
        if path in exclude or any(path.startswith(e) for e in exclude if e.endswith("/")):
            continue
        meta = metadata(blobs.read(path).decode())
        if "module" in (meta.get("flags") or []):
            continue
        if skip & set(meta.get("features") or []):
            continue
        eligible.append((path, meta))
    step = max(1, len(eligible) // TARGET)
    chosen = eligible[::step]

    files, harness = [], {"assert.js", "sta.js", "doneprintHandle.js"}
    for path, meta in chosen:
        harness.update(meta.get("includes") or [])
    manifest_files = []
    for path, meta in chosen:
        data = blobs.read(path)
        files.append((path, data))
        negative = meta.get("negative")
        entry = {
            "path": path,
            "sha256": hashlib.sha256(data).hexdigest(),
            "flags": meta.get("flags") or [],
            "includes": meta.get("includes") or [],
        }
        if b"_FIXTURE" in data:
            # The modules the test imports: every _FIXTURE file of its folder.
            entry["fixtures"] = []
            for fixture in sorted(fixtures_in.get(os.path.dirname(path), [])):
                fixture_data = blobs.read(fixture)
                files.append((fixture, fixture_data))
                entry["fixtures"].append(
                    {"path": fixture, "sha256": hashlib.sha256(fixture_data).hexdigest()}
                )
        if negative:
            entry["negative"] = {"phase": negative["phase"], "type": negative["type"]}
        manifest_files.append(entry)
    manifest_harness = []
    for name in sorted(harness):
        data = blobs.read(f"harness/{name}")
        files.append((f"harness/{name}", data))
        manifest_harness.append(
            {"path": f"harness/{name}", "sha256": hashlib.sha256(data).hexdigest()}
        )
    license = blobs.read("LICENSE")
    files.append(("LICENSE", license))

    for path, data in files:
        target = os.path.join(out, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)

    manifest = {
        "repository": "https://github.com/tc39/test262",
        "commit": commit,
        "rule": (
            "paths under test/built-ins/ and test/language/ ending in .js, sorted; without "
            "_FIXTURE files, tests flagged module, tests QuickJS-ng's test262.conf (rquickjs-sys "
            "0.12.2, QuickJS-ng 0.15.1) excludes, and tests whose features it marks skip; of the "
            f"{len(eligible)} left, every {step}th from the first; with each test that names a "
            "_FIXTURE file, every _FIXTURE file of its folder"
        ),
        "skipped_features": sorted(skip),
        "eligible": len(eligible),
        "step": step,
        "license_sha256": hashlib.sha256(license).hexdigest(),
        "files": manifest_files,
        "harness": manifest_harness,
    }
    with open(os.path.join(here, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"{len(eligible)} eligible, every {step}th: {len(chosen)} tests, {len(harness)} harness files")


if __name__ == "__main__":
    main()
