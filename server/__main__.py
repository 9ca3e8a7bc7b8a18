"""Command line of the service.

    python -m server keys create --name NAME [--rate N]   # prints the key alone on the last line
    python -m server keys create --name NAME --publishable --origin https://shop.example [--origin ...]
    python -m server keys list
    python -m server keys revoke NAME
    (create and revoke return once every running worker has read the change: --no-wait not to wait)
    python -m server --keystore redis://HOST:6379/0 keys migrate keys.sqlite3   # copy SQLite -> Redis
    python -m server switch-index NEW_INDEX_DIR [--link PATH]

The key store is ``--keystore`` or ``ADDRESS_KEYSTORE`` (default ``keys.sqlite3``): an SQLite
file, or a Redis URL (``redis://``, ``rediss://``, ``unix://``) shared by a cluster.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from server.config import DEFAULT_INDEX, DEFAULT_KEYSTORE, Config
from server.keys import PUBLISHABLE, SECRET, KeyStore, KeyStoreError, RedisKeyStore, migrate, open_store

#: What a worker's read of the key store takes at most, beyond its refresh interval, on a store
#: that answers (one SELECT of the keys table, or one Redis HGETALL).
READ_MARGIN_SECONDS = 0.2
#: Default rate of a publishable key: every visitor of the site shares it, and anyone can read it.
PUBLISHABLE_RATE = 20.0


def _keys_create(store: KeyStore | RedisKeyStore, args: argparse.Namespace) -> int:
    kind = PUBLISHABLE if args.publishable else SECRET
    rate = args.rate
    if rate is None:
        variable, default = (
            ("ADDRESS_PUBLISHABLE_RATE", PUBLISHABLE_RATE) if args.publishable else ("ADDRESS_DEFAULT_RATE", 100.0)
        )
        try:
            rate = float(os.environ.get(variable, default))
        except ValueError:
            raise KeyStoreError(f"{variable} must be a number of requests per second") from None
    key = store.create(args.name, rate, kind=kind, origins=args.origin)
    print(f"created {kind} API key {args.name!r}: {rate:g} requests/s (all workers together).")
    if args.publishable:
        print("It is shown only this once; web pages of its origins may use it (it is in their HTML):")
    else:
        print("It is shown only this once and stored only as a hash; keep it secret:")
    _until_every_worker_has_read(args)
    print(key)
    return 0


def _until_every_worker_has_read(args: argparse.Namespace) -> None:
    """Return once a running service's workers have read the store since the change (unless
    ``--no-wait``): each reads it every ``key_refresh_seconds``, so that a key printed by
    ``keys create`` works at once (``KEY=$(... | tail -n1); curl ...``) and one revoked is
    refused everywhere when ``keys revoke`` returns."""
    if args.no_wait:
        return
    sys.stdout.flush()
    try:
        refresh = Config.from_env().key_refresh_seconds
    except ValueError:  # the service could not start with it either
        refresh = Config().key_refresh_seconds
    time.sleep(refresh + READ_MARGIN_SECONDS)


def _keys_list(store: KeyStore | RedisKeyStore, args: argparse.Namespace) -> int:
    rows = store.list()
    print(f"{'name':<24} {'created_at':<21} {'rate/s':>9}  {'kind':<11} {'status':<28} origins")
    for row in rows:
        status = f"revoked {row.revoked_at}" if row.revoked_at else "active"
        origins = " ".join(row.origins) or "-"
        print(f"{row.name:<24} {row.created_at:<21} {row.rate:>9g}  {row.kind:<11} {status:<28} {origins}")
    return 0


def _keys_revoke(store: KeyStore | RedisKeyStore, args: argparse.Namespace) -> int:
    if not store.revoke(args.name):
        print(f"no active key named {args.name!r}", file=sys.stderr)
        return 1
    _until_every_worker_has_read(args)
    print(f"revoked {args.name!r}: every worker refuses it")
    return 0


def _keys_migrate(store: KeyStore | RedisKeyStore, args: argparse.Namespace) -> int:
    if not os.path.isfile(args.source):
        raise KeyStoreError(f"no SQLite key store at {args.source!r}")
    counts = migrate(KeyStore(args.source), store)
    print(
        f"{args.source} -> {store}: copied {counts['copied']}, already there {counts['present']}, "
        f"revocations carried over {counts['revoked']}, conflicts {counts['conflicts']} "
        f"(the source is unchanged)"
    )
    return 1 if counts["conflicts"] else 0


def _switch_index(args: argparse.Namespace) -> int:
    """Point the ``current`` symlink at a new index, atomically, after checking it opens."""
    import engine  # here, so that the key commands work without the compiled engine

    target = os.path.realpath(args.directory)
    try:
        engine.AddressIndex.open(target).close()
    except engine.IndexOpenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # an index copied here (rsync, cp) sits in the page cache in small pages: on disk and out
    # of the cache, the workers that open it map it in 2 MiB pages (engine._HUGEPAGE)
    engine.release_page_cache(target)
    link = args.link
    os.makedirs(os.path.dirname(link) or ".", exist_ok=True)
    if os.path.exists(link) and not os.path.islink(link):
        print(f"{link} exists and is not a symlink; refusing to replace it", file=sys.stderr)
        return 1
    tmp = f"{link}.tmp-{os.getpid()}"
    os.symlink(target, tmp)
    os.replace(tmp, link)  # rename(2): readers see the old or the new link, never none
    print(f"{link} -> {target}")
    print("if gunicorn is serving it, reload: kill -HUP <gunicorn master pid>")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m server", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--keystore",
        default=os.environ.get("ADDRESS_KEYSTORE", DEFAULT_KEYSTORE),
        help="SQLite file or redis:// URL of the key store (default: $ADDRESS_KEYSTORE or %(default)s)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    key_commands = keys.add_subparsers(dest="action", required=True)
    no_wait = argparse.ArgumentParser(add_help=False)
    no_wait.add_argument(
        "--no-wait",
        action="store_true",
        help="return at once; without it the command returns when every worker has read the change (about 1 s)",
    )
    create = key_commands.add_parser("create", help="create a key and print it once", parents=[no_wait])
    create.add_argument("--name", required=True, help="who the key is for (1-64 of A-Za-z0-9._-)")
    create.add_argument(
        "--rate",
        type=float,
        default=None,
        help="requests per second, all workers and replicas together (default: $ADDRESS_DEFAULT_RATE or 100; "
        f"publishable: $ADDRESS_PUBLISHABLE_RATE or {PUBLISHABLE_RATE:g})",
    )
    create.add_argument(
        "--publishable",
        action="store_true",
        help="a key for web pages: served only to the --origin pages (needs one at least)",
    )
    create.add_argument(
        "--origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin (https://shop.example[:port]) whose pages may use the key; repeatable",
    )
    create.set_defaults(run=_keys_create)
    key_commands.add_parser("list", help="names, creation time, rate, kind, origins; never keys").set_defaults(
        run=_keys_list
    )
    revoke = key_commands.add_parser("revoke", help="revoke a key (every worker refuses it when this returns)",
                                     parents=[no_wait])
    revoke.add_argument("name")
    revoke.set_defaults(run=_keys_revoke)
    copy = key_commands.add_parser(
        "migrate",
        help="copy every key of an SQLite store into the --keystore Redis (idempotent; the source is only read)",
    )
    copy.add_argument("source", help="the SQLite key store to copy from")
    copy.set_defaults(run=_keys_migrate)

    switch = commands.add_parser("switch-index", help="check an index and point the 'current' symlink at it atomically")
    switch.add_argument("directory")
    switch.add_argument(
        "--link",
        default=os.environ.get("ADDRESS_INDEX", DEFAULT_INDEX),
        help="the symlink gunicorn serves (default: $ADDRESS_INDEX or %(default)s)",
    )

    args = parser.parse_args(argv)
    try:
        if args.command == "switch-index":
            return _switch_index(args)
        return args.run(open_store(args.keystore), args)
    except KeyStoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
