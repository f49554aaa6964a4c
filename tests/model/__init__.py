"""Tests of ortpool.model, staging: inputs, subgraph outputs, files written together."""
