"""Edge (llama.cpp) and cloud (OpenAI-compatible HTTP) models, and the model-file catalog."""
import os


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under ``taskset``), not all the machine's: llama.cpp
    with more threads than usable cores stalls on its thread barriers."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 2
