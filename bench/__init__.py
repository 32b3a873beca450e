"""schedbench's harness: mock LLM, engines, runner, metrics, debuggability, report and CLI."""
