"""Tests of ortpool.validate: validate, conformance, reports."""
