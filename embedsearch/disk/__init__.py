"""Writes that survive a crash: the one way every layer puts bytes on disk."""
