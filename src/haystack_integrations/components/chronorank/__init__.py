"""chronorank's Haystack components under the namespace Haystack trusts when it loads a
pipeline file (``Pipeline.loads`` needs no ``allowed_modules``). The code lives in
:mod:`chronorank.integrations.haystack`."""

from chronorank.integrations.haystack import ChronorankRetriever, TemporalRanker

__all__ = ["ChronorankRetriever", "TemporalRanker"]
