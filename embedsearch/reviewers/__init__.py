"""Reviewers for submissions: each reviewer's affinity to each submission from their own publications
(``Matcher``, ``AffinityTable``), conflicts of interest, and an assignment within loads (``assign``)."""

from .affinity import Affinity, Evidence
from .assign import Assignment, assign
from .match import AffinityTable, Matcher
from .profiles import Reviewers
from .scores import ScoreTable
from .settings import AffinitySettings, AssignSettings, ConflictSettings
from .submissions import Submissions

__all__ = ["Affinity", "AffinitySettings", "AffinityTable", "AssignSettings", "Assignment", "ConflictSettings",
           "Evidence", "Matcher", "Reviewers", "ScoreTable", "Submissions", "assign"]
