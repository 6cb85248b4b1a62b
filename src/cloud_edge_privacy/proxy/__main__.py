"""``python -m cloud_edge_privacy.proxy --upstream URL ...`` (same as ``cloud-edge-privacy proxy``)."""
import sys

from .cli import main

sys.exit(main())
