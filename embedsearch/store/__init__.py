"""The segmented index store: immutable segments, deletion files and numbered generations, written by
one writer at a time and read through snapshots (see ``layout`` for the folder)."""
