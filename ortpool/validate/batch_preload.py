"""Imported by the forkserver of ``ortpool validate``'s model processes (:mod:`.batch`), never
by anything else: importing it warms the server once, and every model's process is forked warm."""

from ortpool.validate.batch import warm

warm()
