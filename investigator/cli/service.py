"""Commands of the HTTP service: serve (webhooks in, one investigation per alert) and its queue worker,
with the argument types of their options (`_port`, `_host`: their names show in argparse's errors).

Imports the standard library only at module level; uvicorn and the service are imported inside
the commands.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _service_settings(args: argparse.Namespace):  # noqa: ANN202 - imported lazily so --help starts at once
    from investigator.service.settings import load_settings

    return load_settings(Path(args.config) if args.config else None, home=args.home, store=args.store,
                         broker=args.broker).check()


def _port(text: str) -> int:
    """A TCP port: 1..65535 (uvicorn would bind 70000 mod 65536 while printing 70000)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port number from 1 to 65535 (got {text!r})")
    return int(text)


def _host(text: str) -> str:
    """An IP address (v4 or v6) or a host name of letters, digits, '-' and '.' (RFC 1123)."""
    import ipaddress
    import re

    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    label = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
    if len(text) <= 253 and not re.fullmatch(r"[\d.]+", text) and re.fullmatch(rf"{label}(\.{label})*\.?", text):
        return text
    raise argparse.ArgumentTypeError(f"an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or localhost (got {text!r})")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from investigator.service.app import create_app

    settings = _service_settings(args)
    app = create_app(settings, in_process_worker=False if args.no_worker else None)
    print(f"serving on http://{args.host}:{args.port} (store {settings.store_url.split('://', 1)[0]}, queue "
          f"{settings.broker_url.split('://', 1)[0]}{', in-process worker' if settings.local_queue and not args.no_worker else ''})",
          file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from investigator.service.queue import run_worker

    return run_worker(_service_settings(args), concurrency=args.concurrency, name=args.name,
                      loglevel=args.log_level.upper())
