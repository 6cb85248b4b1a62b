"""The privacy path: the edge pipeline, the gateway that protects, the egress guard, per-sample context."""
