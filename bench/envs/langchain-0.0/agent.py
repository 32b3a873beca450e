"""The reference agent (``customer_returns``) as LangChain's 0.0.x docs wrote one.

Written to the 0.0.x "Agents" getting-started pages (2023): ``initialize_agent`` with an
``AgentType`` and ``agent.run(question)``; the chat model from ``langchain.chat_models``;
tools with ``@tool`` from ``langchain.tools``. No environment is built for 0.0 (its last
releases predate the openai 1.x SDK the mock's clients need): the program is measured only
on the newer lines (``bench.runner.phases.version_probe``).

``harness`` is the benchmark's side, the same for every program: the scenario's question,
its tools' behaviour (``harness.tool``) and the mock's address (``harness.connection``).
"""

from langchain.agents import AgentType, initialize_agent
from langchain.chat_models import ChatOpenAI
from langchain.tools import tool


def answer(harness):
    @tool
    def search_knowledge_base(query: str) -> str:
        """Search the help-centre articles and return the best match."""
        return harness.tool("search_knowledge_base", query=query)

    @tool
    def query_order(order_id: str) -> str:
        """Look up an order by its id."""
        return harness.tool("query_order", order_id=order_id)

    tools = [search_knowledge_base, query_order]
    llm = ChatOpenAI(model=harness.model, temperature=0, **harness.connection)
    agent = initialize_agent(tools, llm, agent=AgentType.OPENAI_FUNCTIONS, verbose=True)
    return agent.run(harness.question)
