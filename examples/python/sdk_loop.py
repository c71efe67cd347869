"""A plain model-SDK loop with skills from skillsvc: the prompt block in the
system prompt and a load_skill tool, no agent framework.

    python examples/python/sdk_loop.py                                  # offline: a scripted model
    python examples/python/sdk_loop.py --model claude-sonnet-4-5        # Anthropic (pip install anthropic)
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from skillsvc import Client
from skillsvc.tools import SkillTools

TASK = "Write a commit message for: fix the login redirect loop."


def scripted_turns() -> Iterator[dict[str, Any]]:
    """What a model would answer, in the Anthropic Messages shape."""
    yield {
        "stop_reason": "tool_use",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "load_skill", "input": {"skill": "commit-message", "arguments": TASK}},
        ],
    }
    yield {
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Fix login redirect loop\n\nThe redirect sent users back to /login after signing in."}],
    }


def anthropic_turns(model: str, system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    import anthropic  # only for --model

    client = anthropic.Anthropic()
    while True:
        r = client.messages.create(model=model, max_tokens=2048, system=system, tools=tools, messages=messages)
        yield r.model_dump()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="127.0.0.1:7070")
    p.add_argument("--user", default="alice")
    p.add_argument("--thread", default="sdk-loop-example")
    p.add_argument("--model", help="an Anthropic model name; default: scripted")
    args = p.parse_args()

    with Client(args.target, user=args.user, thread=args.thread) as client:
        skills = SkillTools(client)
        system = "You are a careful software engineer.\n\n" + skills.prompt(query=TASK, char_budget=4000)
        messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
        turns = anthropic_turns(args.model, system, skills.definitions("anthropic"), messages) if args.model else scripted_turns()
        for turn in turns:
            messages.append({"role": "assistant", "content": turn["content"]})
            if turn["stop_reason"] != "tool_use":
                print("".join(b["text"] for b in turn["content"] if b["type"] == "text"))
                return
            results = []
            for block in turn["content"]:
                if block["type"] == "tool_use":
                    text = skills.run(block["name"], block["input"])
                    print(f"[{block['name']}({block['input']['skill']})] {len(text)} characters:\n{text}\n")
                    results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text})
            messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    main()
