"""Analysis of trustsim run directories (reads files only; imports no engine, game or agent code)."""
