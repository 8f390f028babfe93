"""Issue 18's fuzz test: mutated bundled manifests against every command path."""
