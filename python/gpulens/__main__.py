"""`python -m gpulens ...`: runs the gpulens executable with the same arguments."""

from __future__ import annotations

import os
import subprocess
import sys

from gpulens._find import find_gpulens_bin


def main() -> int:
    try:
        binary = find_gpulens_bin()
    except FileNotFoundError as error:
        print(f"gpulens: {error}", file=sys.stderr)
        return 2
    arguments = [binary, *sys.argv[1:]]
    if sys.platform == "win32":
        # (No exec on Windows: run it and pass its status on.)
        return subprocess.run(arguments).returncode
    # The binary takes over this process: signals, stdin and stdout are its own.
    os.execv(binary, arguments)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
