"""The article's complex agent on our scheduler: memory (AgentConfig(memory=True)), three
tools, and a custom stop condition (an after_tool hook that ends the run on a refund under
review)."""

from typing import Any

from scheduler import AgentConfig, LightweightAgent, RunState, ToolResult, tool

HANDOFF = "A human agent will review this refund and get back to you."


async def chat(model: Any, backend: Any, questions: list[str]) -> list[str]:
    @tool
    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id."""
        return backend.lookup_order(order_id)

    @tool
    def refund_policy(category: str) -> dict:
        """The refund policy of a product category."""
        return backend.refund_policy(category)

    @tool
    def issue_refund(order_id: str, amount: float) -> dict:
        """Refund an amount on an order."""
        return backend.issue_refund(order_id, amount)

    def stop_on_review(state: RunState, result: ToolResult) -> None:
        if "needs_review" in result.content:
            raise RuntimeError("the refund needs a human review")

    config = AgentConfig(
        system_prompt="You are a support agent for a home-goods shop. Use the tools.",
        memory=True,
        raise_hook_errors=True,
    )
    agent = LightweightAgent(model, config, tools=[lookup_order, refund_policy, issue_refund])
    agent.on("after_tool", stop_on_review)
    answers = []
    for question in questions:
        result = await agent.run(question)
        answers.append(HANDOFF if result.reason == "hook_error" else result.content)
    return answers
