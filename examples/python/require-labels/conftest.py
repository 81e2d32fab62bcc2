# Lets pytest find the SDK of this repository without installing it.
import sys
from pathlib import Path

sys.path.insert(0, str((Path(__file__).parent / "../../../plugin-sdk" / "python").resolve()))
