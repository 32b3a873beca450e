"""The reference agent (``customer_returns``) as LangChain 0.2's docs wrote one.

Written to "Build an Agent with AgentExecutor (Legacy)" (``docs/docs/how_to/agent_executor.ipynb``:
``create_tool_calling_agent``, ``AgentExecutor``, ``invoke``) and "How to create tools"
(``docs/docs/how_to/custom_tools.ipynb``: ``@tool`` from ``langchain_core.tools``, an
``args_schema`` from ``langchain_core.pydantic_v1``, as 0.2 — still on pydantic v1 inside —
taught). The how-to pulls its prompt from the hub (``hwchase17/openai-functions-agent``),
which is unreachable offline: that prompt is written out, with the scenario's system prompt.

``harness`` is the benchmark's side, the same for every program: the scenario's question,
its tools' behaviour (``harness.tool``) and the mock's address (``harness.connection``).
"""

from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.pydantic_v1 import BaseModel, Field
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


class SearchInput(BaseModel):
    query: str = Field(description="What to search for.")


class OrderInput(BaseModel):
    order_id: str = Field(description="The order id, e.g. A123.")


def answer(harness):
    @tool("search_knowledge_base", args_schema=SearchInput)
    def search_knowledge_base(query: str) -> str:
        """Search the help-centre articles and return the best match."""
        return harness.tool("search_knowledge_base", query=query)

    @tool("query_order", args_schema=OrderInput)
    def query_order(order_id: str) -> str:
        """Look up an order by its id."""
        return harness.tool("query_order", order_id=order_id)

    tools = [search_knowledge_base, query_order]
    model = ChatOpenAI(model=harness.model, **harness.connection)
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", harness.system_prompt),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    agent = create_tool_calling_agent(model, tools, prompt)
    agent_executor = AgentExecutor(agent=agent, tools=tools)
    return agent_executor.invoke({"input": harness.question})["output"]
