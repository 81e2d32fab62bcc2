"""`python -m capstan_plugin build POLICY.py OUT.wasm [--world W]`."""

import argparse
import os
import sys

from .build import build
from .dispatch import WORLDS


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m capstan_plugin")
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="build a policy module into a Capstan plugin component")
    b.add_argument("policy", help="the policy module, e.g. require_labels.py")
    b.add_argument("out", help="the component to write, e.g. require-labels.wasm")
    b.add_argument("--world", default="admission", choices=sorted(WORLDS))
    b.add_argument("--wit", help="the WIT directory (default: plugin-sdk/wit beside this SDK)")
    args = parser.parse_args()
    try:
        seconds = build(args.policy, args.out, args.world, args.wit)
    except (RuntimeError, ValueError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    size = os.path.getsize(args.out) / (1 << 20)
    print(f"{args.out}: {args.world} component, {size:.1f} MiB, built in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
