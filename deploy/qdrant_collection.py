"""Create a chronorank collection on a Qdrant cluster, at the current schema, before the first add.

The adapter would create it on its first ``add`` with Qdrant's defaults (one shard); on a cluster
you choose the shards and replicas. The collection is exactly what the adapter creates
(``QdrantStore.create_collection``: named vectors, payload indexes, schema metadata), with the
BM25 length statistics taken from a sample of your corpus (FORMAT.md JSON lines)::

    python deploy/qdrant_collection.py --url http://localhost:6333 --collection docs \\
        --sample corpus.jsonl --shards 6 --replicas 2

then ``QdrantStore("docs", url="http://localhost:6333").add(docs)``.
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any


def create(store: Any, sample: list[dict[str, Any]], shards: int, replicas: int) -> None:
    """The recipe: ``store``'s collection with ``shards`` shards and ``replicas`` replicas."""
    store.create_collection(sample, shard_number=shards, replication_factor=replicas)


def main() -> None:
    from chronorank.stores import QdrantStore

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--sample", required=True, help="corpus JSON lines; the first --sample-size are read")
    ap.add_argument("--sample-size", type=int, default=1000)
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--embedder", default="default", help="the embedder your store uses (its dimension)")
    a = ap.parse_args()
    with open(a.sample, encoding="utf-8") as f:
        sample = [json.loads(line) for line in itertools.islice(f, a.sample_size) if line.strip()]
    with QdrantStore(a.collection, url=a.url, embedder=a.embedder) as store:
        create(store, sample, a.shards, a.replicas)
    print(f"created {a.collection!r}: {a.shards} shards x {a.replicas} replicas")


if __name__ == "__main__":
    main()
