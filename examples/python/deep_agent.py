"""A LangChain Deep Agent whose files and skills live in skillsvc.

    python examples/python/deep_agent.py                       # offline: a scripted model
    python examples/python/deep_agent.py --model anthropic:claude-sonnet-4-5   # a real model

The agent sees /workspace (this thread's files), /ticket and the read-only
/skills library; SkillsPromptMiddleware lists the user's skills that fit
the task in its prompt, and the agent loads one by reading its SKILL.md.
"""

from __future__ import annotations

import argparse

from deepagents import create_deep_agent

from skillsvc import Client
from skillsvc.deepagents import SkillsPromptMiddleware, SkillsvcBackend
from skillsvc.testing_models import ScriptedChatModel, script, tool_call

TASK = "Write release notes for these merged changes: export skills as tar.gz; fix the login redirect."


def scripted_model() -> ScriptedChatModel:
    """What a model would do with TASK: find the skill, read it, write, check."""
    notes = "## Added\n- Export a skill as a tar.gz archive\n\n## Fixed\n- Fix the redirect after login\n"
    return ScriptedChatModel(
        messages=script(
            tool_call("read_file", "1", file_path="/skills/writing/release-notes/SKILL.md"),
            tool_call("read_file", "2", file_path="/skills/writing/release-notes/references/style.md"),
            tool_call("write_file", "3", file_path="/workspace/RELEASE_NOTES.md", content=notes),
            tool_call("edit_file", "4", file_path="/workspace/RELEASE_NOTES.md", old_string="Fix the redirect", new_string="Fix the redirect loop"),
            "Wrote /workspace/RELEASE_NOTES.md following the release-notes skill.",
        )
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7070", help="skillsvc gRPC address")
    p.add_argument("--user", default="alice")
    p.add_argument("--thread", default="deep-agent-example")
    p.add_argument("--model", help="a real model as provider:name (needs its langchain package and API key); default: scripted")
    p.add_argument("--task", default=TASK)
    args = p.parse_args()

    backend = SkillsvcBackend(args.target, user=args.user)
    model = args.model or scripted_model()
    # The skills block in the system prompt holds the skills that fit the task.
    agent = create_deep_agent(model=model, backend=backend, middleware=[SkillsPromptMiddleware(backend)])
    result = agent.invoke({"messages": [{"role": "user", "content": args.task}]}, {"configurable": {"thread_id": args.thread}})
    print(result["messages"][-1].text)

    with Client(args.target, user=args.user, thread=args.thread) as c:
        print("\n--- /workspace/RELEASE_NOTES.md ---")
        print(c.read("/workspace/RELEASE_NOTES.md").content)
    backend.close()


if __name__ == "__main__":
    main()
