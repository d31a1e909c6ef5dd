"""Exit codes of every command line of the project (``noisecbr`` and ``casebase``), one table.

===  ==============================================================================
0    success
1    partial failure: some inputs could not be used (the others were processed; the failures
     are listed on stderr)
2    usage error (unknown option, bad value: click's own code)
3    not found (an unknown case, page or site id)
4    model error (the model file cannot be read or is not a model)
5    case base error (the database cannot be opened, read or written: locked, corrupt,
     unknown revision, …)
6    other error (a file that cannot be read or written, an unexpected failure)
130  interrupted (Ctrl-C)
===  ==============================================================================
"""

from __future__ import annotations

__all__ = ["EXIT_CASEBASE", "EXIT_INTERRUPTED", "EXIT_MODEL", "EXIT_NOT_FOUND", "EXIT_OK",
           "EXIT_OTHER", "EXIT_PARTIAL", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_MODEL = 4
EXIT_CASEBASE = 5
EXIT_OTHER = 6
#: 128 + SIGINT, what a shell reports for a process stopped by Ctrl-C.
EXIT_INTERRUPTED = 130
