"""The reference agent (``customer_returns``) as LangChain 0.1's docs wrote one.

Written to the 0.1 agents Quickstart (``docs/docs/modules/agents/quick_start.ipynb``:
``create_openai_functions_agent``, ``AgentExecutor(..., verbose=True)``, ``invoke``) and
"Defining Custom Tools" (``docs/docs/modules/tools/custom_tools.ipynb``: ``@tool`` with an
``args_schema`` from ``langchain.pydantic_v1``). The Quickstart pulls its prompt from the hub
(``hwchase17/openai-functions-agent``), which is unreachable offline: that prompt is written
out as the Quickstart prints it, with the scenario's system prompt.

``harness`` is the benchmark's side, the same for every program: the scenario's question,
its tools' behaviour (``harness.tool``) and the mock's address (``harness.connection``).
"""

from langchain.agents import AgentExecutor, create_openai_functions_agent
from langchain.pydantic_v1 import BaseModel, Field
from langchain.tools import tool
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
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
    llm = ChatOpenAI(model=harness.model, temperature=0, **harness.connection)
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", harness.system_prompt),
            MessagesPlaceholder(variable_name="chat_history", optional=True),
            ("human", "{input}"),
            MessagesPlaceholder(variable_name="agent_scratchpad"),
        ]
    )
    agent = create_openai_functions_agent(llm, tools, prompt)
    agent_executor = AgentExecutor(agent=agent, tools=tools, verbose=True)
    return agent_executor.invoke({"input": harness.question})["output"]
