"""Framework integrations: LangChain, LlamaIndex, Haystack and Chroma.

Each lives in its own module and imports its framework only there, so importing this
package loads no framework::

    from chronorank.integrations.langchain import TemporalRetriever, TemporalCompressor
    from chronorank.integrations.llama_index import TemporalPostprocessor, TemporalRetriever
    from chronorank.integrations.haystack import TemporalRanker
    from chronorank.integrations.chroma import query_collection

All of them rerank through ``TemporalReranker.rerank_columns`` and write the same
``chronorank_*`` metadata keys (``METADATA_KEYS``).
"""

from chronorank.integrations._common import METADATA_KEYS, METADATA_PREFIX

__all__ = ["METADATA_KEYS", "METADATA_PREFIX"]
