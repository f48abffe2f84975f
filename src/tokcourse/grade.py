"""Grade a class's notebooks: ``python -m tokcourse.grade PATH... --out report.csv``.

The command line of :mod:`tokcourse.course.grader`, which says what it does; it sits on this
floor only so that its name is short to type.
"""

from __future__ import annotations

import sys

from tokcourse.course.grader import main

if __name__ == "__main__":
    sys.exit(main())
