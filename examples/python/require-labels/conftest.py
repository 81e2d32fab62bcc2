# Lets pytest find the SDK of this repository without installing it.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "plugin-sdk" / "python"))
