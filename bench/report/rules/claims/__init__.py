"""The claims ledger's rules: one module per claim (or per pair of claims on the same data)."""
