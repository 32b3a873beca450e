"""The article's complex agent on LangChain 1.x: memory (a checkpointer and a thread), three
tools, and a custom stop condition (a middleware that ends the run on a refund under review)."""

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentState, before_model
from langchain.messages import AIMessage, ToolMessage
from langchain.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime

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

    @before_model(can_jump_to=["end"])
    async def stop_on_review(state: AgentState, runtime: Runtime) -> dict | None:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage) and "needs_review" in last.text:
            return {"messages": [AIMessage(HANDOFF)], "jump_to": "end"}
        return None

    agent = create_agent(
        model,
        tools=[lookup_order, refund_policy, issue_refund],
        system_prompt="You are a support agent for a home-goods shop. Use the tools.",
        middleware=[stop_on_review],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "dana"}}
    answers = []
    for question in questions:
        result = await agent.ainvoke({"messages": [{"role": "user", "content": question}]}, config)
        answers.append(result["messages"][-1].text)
    return answers
