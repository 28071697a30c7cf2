"""Documents and the readers that turn corpus files into them.

Readers validate as they go and report problems as ``file:line: what`` so a user can fix the
source. With ``skip_invalid`` a bad record is reported and skipped instead of stopping the read.
"""

from .document import (ID_FIELDS, TEXT_FIELDS, TITLE_FIELDS, Document, FieldMap, UniqueIds, check_id,
                       check_unique)
from .kinds import FieldKinds
from .readers import ROWS, Problem, detect_format
from .sources import ReadResult, bundled_sources, collection_name, iter_sources, parse_record, read_sources
from .values import check_unicode, clean_scalar, type_name

__all__ = ["ID_FIELDS", "ROWS", "TEXT_FIELDS", "TITLE_FIELDS", "Document", "FieldKinds", "FieldMap", "Problem",
           "ReadResult", "UniqueIds", "bundled_sources", "check_id", "check_unicode", "check_unique", "clean_scalar",
           "collection_name", "detect_format", "iter_sources", "parse_record", "read_sources", "type_name"]
