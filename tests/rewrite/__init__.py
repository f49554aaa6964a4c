"""Tests of ortpool.rewrite: rewrite and restore."""
