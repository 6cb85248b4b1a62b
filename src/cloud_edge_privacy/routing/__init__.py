"""Routing: hard example mining routers and PRISM's sensitivity gate."""
