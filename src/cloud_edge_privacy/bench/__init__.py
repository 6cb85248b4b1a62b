"""The benchmark: our Ianvs-compatible runner, executors, Ianvs module adapters, PRISM's benchmark."""
