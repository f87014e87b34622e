"""`main`: parse, run one command, and turn every failure into one line on stderr and an exit code.

Imports the parser and `state.errors`; how a failure is described (`investigator.failures`) is
imported only when one happens.
"""

from __future__ import annotations

import os
import signal
import sys

from investigator.cli.common import error
from investigator.cli.parsing import parser
from state.errors import InvestigatorError

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool cut off by `| head`


def _terminate(signum: int, _frame: object) -> None:
    from state.errors import Interrupted

    raise Interrupted("terminated", signum)


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr and an exit code (README, Exit codes);
    INVESTIGATOR_TRACEBACK=1 shows the traceback of an unexpected one."""
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        from investigator.config import check_environment

        check_environment()
        if getattr(args, "run_id", None) is not None:  # run ids become folder names: names, never paths
            from state import checked_name

            checked_name(args.run_id, "--run-id" if args.command == "run" else "RUN_ID")
        code = args.func(args)
        sys.stdout.flush()  # here, so a reader that went away is seen by the handler below
        return code
    except InvestigatorError as exc:
        from investigator.failures import describe

        error(describe(exc))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        error(str(exc) if str(exc) else "interrupted")
        return 128 + getattr(exc, "signum", signal.SIGINT)
    except BrokenPipeError:
        # the reader went away (`investigator runs | head -1`): stop quietly, and keep Python
        # from complaining when it flushes stdout on the way out
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the last resort: any failure becomes one line and an exit code
        from investigator.failures import describe, redacted_traceback, store_error

        if os.environ.get("INVESTIGATOR_TRACEBACK"):  # the frames, never a value from a source
            try:
                sys.stderr.write(redacted_traceback(exc))
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
        else:
            error(describe(exc) + " (INVESTIGATOR_TRACEBACK=1 shows the traceback)")
        return 4 if store_error(exc) else 5
