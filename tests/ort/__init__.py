"""Tests of ortpool.ort: registration, the hook, sessions, the runtime, threads, hostile inputs."""
