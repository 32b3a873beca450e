"""The article's complex agent on the OpenAI Agents SDK: memory (a session), three tools, and
a custom stop condition (tool_use_behavior: a function that ends the run on a refund under
review)."""

from typing import Any

from agents import Agent, Runner, SQLiteSession, ToolsToFinalOutputResult, function_tool

HANDOFF = "A human agent will review this refund and get back to you."


async def chat(model: Any, backend: Any, questions: list[str]) -> list[str]:
    @function_tool
    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id."""
        return backend.lookup_order(order_id)

    @function_tool
    def refund_policy(category: str) -> dict:
        """The refund policy of a product category."""
        return backend.refund_policy(category)

    @function_tool
    def issue_refund(order_id: str, amount: float) -> dict:
        """Refund an amount on an order."""
        return backend.issue_refund(order_id, amount)

    def stop_on_review(context: Any, results: list[Any]) -> ToolsToFinalOutputResult:
        review = any("needs_review" in str(r.output) for r in results)
        return ToolsToFinalOutputResult(is_final_output=review, final_output=HANDOFF)

    agent = Agent(
        name="support",
        instructions="You are a support agent for a home-goods shop. Use the tools.",
        tools=[lookup_order, refund_policy, issue_refund],
        model=model,
        tool_use_behavior=stop_on_review,
    )
    session = SQLiteSession("dana")
    answers = []
    for question in questions:
        result = await Runner.run(agent, question, session=session)
        answers.append(result.final_output)
    return answers
