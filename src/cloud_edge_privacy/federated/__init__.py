"""Federated, differentially private training of the edge privacy detector (PrivateAI, Qi et al. 2026)."""
