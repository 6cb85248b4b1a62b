"""Edge (llama.cpp) and cloud (OpenAI-compatible HTTP) models, and the model-file catalog."""
