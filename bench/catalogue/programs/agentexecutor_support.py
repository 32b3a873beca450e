"""The article's complex agent on AgentExecutor: memory (the chat history passed back in, as
its docs do), three tools, and a custom stop condition (the steps iterated, stopped when a
refund is under review)."""

from typing import Any

from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool

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

    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a support agent for a home-goods shop. Use the tools."),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    tools = [lookup_order, refund_policy, issue_refund]
    executor = AgentExecutor(agent=create_tool_calling_agent(model, tools, prompt), tools=tools)
    history: list[Any] = []
    answers = []
    for question in questions:
        async for step in executor.iter({"input": question, "chat_history": history}):
            if any("needs_review" in str(obs) for _, obs in step.get("intermediate_step", ())):
                answer = HANDOFF
                break
            answer = step.get("output", "")
        history += [HumanMessage(question), AIMessage(answer)]
        answers.append(answer)
    return answers
