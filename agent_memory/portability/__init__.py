"""Export and import of a user's memories (JSON Lines, one record per memory).

- :mod:`.records`: the record format (``agent-memory/v1``) and its validation;
- :mod:`.exporter`: read a user's originals from the store, page by page;
- :mod:`.importer`: validate a whole file, then write originals and index rows;
- :mod:`.from_mem0`: turn a dump of mem0's ``get_all()`` into records.
"""

from agent_memory.portability.exporter import ExportPage, export_page, iter_pages
from agent_memory.portability.importer import ImportReport, import_records, parse_records
from agent_memory.portability.records import FORMAT, ExportRecord

__all__ = ["FORMAT", "ExportPage", "ExportRecord", "ImportReport", "export_page", "import_records",
           "iter_pages", "parse_records"]
