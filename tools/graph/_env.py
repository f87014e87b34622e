"""Imports that must run before graphrag builds anything (see NOTES.md, traps 5 and 12).

``lancedb``: graphrag imports it lazily inside ``generate_text_embeddings``, where its
tracemalloc workflow profiler makes that import take ~5 s instead of ~1 s.
``default_encoding``: points ``TIKTOKEN_CACHE_DIR`` at litellm's bundled cl100k_base /
o200k_base files, so graphrag's tiktoken tokenizers never download.

The environment variables these imports depend on are set by the package ``__init__``.
"""

import lancedb  # noqa: F401
import litellm.litellm_core_utils.default_encoding  # noqa: F401
