"""Tests of ortpool.fix: forms, proofs, the command."""
