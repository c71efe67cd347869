"""The library both adapters' tests load from, on the real binary on MinIO
(skillsvc.testing's testenv, default limits): five skills, four of them in
categories, one with scripts/ and an executable script, one whose
description is over the 1,024 characters ADK accepts (skillsvc serves it
with a warning), and one whose compatibility ADK refuses (over 500 characters)."""

from __future__ import annotations

import uuid

import pytest

from skillsvc import Client

LONG_DESCRIPTION = "A demo skill whose description runs long. " + "Very long indeed. " * 70

FILES = {
    "tools/greeter/SKILL.md": "---\nname: greeter\ndescription: Greets people by name, a demo skill with a script.\n---\n"
    "Run scripts/greet.sh with the name.\n",
    "tools/greeter/scripts/greet.sh": '#!/bin/sh\necho "hello, ${1:-world}, from greeter"\n',
    "tools/greeter/references/guide.md": "# Greeting guide\n\nBe kind.\n",
    "docs/summarizer/SKILL.md": "---\nname: summarizer\ndescription: Summarizes documents in three lines, a demo skill.\n---\nSummarize.\n",
    "misc/verbose/SKILL.md": f"---\nname: verbose\ndescription: {LONG_DESCRIPTION}\n---\nBe brief anyway.\n",
    "flat-one/SKILL.md": "---\nname: flat-one\ndescription: A demo skill outside any category.\n---\nFlat.\n",
    # Served by skillsvc with a warning; ADK's Frontmatter takes at most 500
    # characters of compatibility.
    "misc/odd-meta/SKILL.md": "---\nname: odd-meta\ndescription: A demo skill whose compatibility ADK refuses.\n"
    f"compatibility: {'Runs anywhere. ' * 40}\n---\nOdd.\n",
}

#: name -> description as listed.
SKILLS = {
    "greeter": "Greets people by name, a demo skill with a script.",
    "summarizer": "Summarizes documents in three lines, a demo skill.",
    "verbose": LONG_DESCRIPTION.strip(),
    "flat-one": "A demo skill outside any category.",
    "odd-meta": "A demo skill whose compatibility ADK refuses.",
}


@pytest.fixture(scope="session")
def library(skillsvc_env) -> str:
    """A fresh user's library holding FILES; returns the user."""
    assert len(SKILLS["verbose"]) > 1024
    user = "py-adapters-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        for path, text in FILES.items():
            admin.put_library_file(path, text.encode(), user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def client(skillsvc_env, library):
    with Client(skillsvc_env.grpc_addr, user=library, thread="adapters-" + uuid.uuid4().hex[:8]) as c:
        yield c
