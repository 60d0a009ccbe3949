"""Rerankers on the demo gold set: keyword, keyword+rerank and hybrid+rerank in one experiment.

No package on the registry ships cross-encoder weights (docs/evaluation.md), so the reranker
here is what this machine can serve without a download: a local ``/v1/rerank`` endpoint
(the standard request shape, on loopback, in this process) that scores each passage by the
cosine of its packaged MiniLM embedding with the query's. The pipelines reach it through
Assay's HTTP reranker, the same path as a llama.cpp, vLLM or TEI server. ``--llm`` also
times the LLM pointwise reranker with the local SmolLM2 on a few queries.

Prints nDCG@10, R@10 (recall) and RR (MRR) per pipeline, with the reranker's time.

    python benchmarks/rerank_demo.py [--depth 30] [--llm 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from assay.demo import open_demo
from assay.experiments import create_experiment, run_experiment
from assay.store.settings import Settings
from assay.store.workspace import Workspace

METRICS = ["nDCG@10", "R@10", "RR", "retrieval_recall@10", "retrieval_mrr@10"]


def serve_minilm(ws: Workspace) -> tuple[Any, str]:
    """A ``/v1/rerank`` endpoint on loopback scoring by MiniLM cosine; (server, url)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from assay.search.embeddings import workspace_embedder

    embedder = workspace_embedder(ws, "minilm")

    async def rerank(request: Request) -> JSONResponse:
        body = await request.json()
        vectors = np.asarray(embedder.embed([body["query"], *body["documents"]]))
        scores = vectors[1:] @ vectors[0]
        order = np.argsort(-scores)[: body.get("top_n") or len(scores)]
        results = [{"index": int(i), "relevance_score": float(scores[i])} for i in order]
        return JSONResponse({"model": "minilm-cosine", "results": results})

    app = Starlette(routes=[Route("/v1/rerank", rerank, methods=["POST"])])
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical", lifespan="off")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/v1/rerank"


def time_llm(queries: int) -> None:
    from assay.demo import gold_items
    from assay.llm import GeneratorSettings, make_generator
    from assay.search.rerank import RerankError
    from assay.search.rerank_llm import LlmReranker

    generator = make_generator(GeneratorSettings(kind="local", max_tokens=16))
    reranker = LlmReranker(generator, name="LLM reranker (SmolLM2-135M)")
    for gold in gold_items()[:queries]:
        passages = [*[e["text"] for e in gold["evidence"]][:3], "The canteen opens at noon."]
        began = time.perf_counter()
        try:
            scores: Any = reranker.rerank(gold["query"], passages).scores
        except RerankError as exc:
            scores = f"failed: {exc}"
        took = time.perf_counter() - began
        print(f"  {gold['query_id']}: {len(passages)} passages in {took:.1f} s; scores {scores}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depth", type=int, default=30, help="hits reranked per query")
    parser.add_argument("--llm", type=int, default=0, help="also time SmolLM2 on N queries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, Workspace.open(Settings(home=Path(home))) as ws:
        project, _ = open_demo(ws, with_items=True)
        server, url = serve_minilm(ws)
        reranker = {"kind": "http", "url": url, "model": "minilm-cosine", "depth": args.depth}
        hybrid = {"kind": "hybrid", "embedder": "minilm"}
        experiment = create_experiment(
            ws,
            project,
            "rerank-demo",
            mode="retrieval",
            metrics=METRICS,
            pipelines=[
                "keyword",
                {"name": "keyword+rerank", "reranker": reranker},
                {"name": "hybrid", "retriever": hybrid},
                {"name": "hybrid+rerank", "retriever": hybrid, "reranker": reranker},
            ],
        )
        began = time.perf_counter()
        done = run_experiment(
            ws,
            project,
            experiment.id,
            progress=lambda n, total: print(f"  {n}/{total}", file=sys.stderr, flush=True),
        )
        took = time.perf_counter() - began
        server.should_exit = True
        print(
            f"demo gold set: {done.task_count} tasks, rerank depth {args.depth}, run {took:.1f} s"
        )
        print(f"{'pipeline':<16}" + "".join(f"{m:>22}" for m in METRICS) + f"{'errors':>8}")
        for name, part in done.aggregates.items():
            means = [part["overall"][m]["mean"] for m in METRICS]
            cells = "".join(f"{'-' if v is None else f'{v:.4f}':>22}" for v in means)
            print(f"{name:<16}{cells}{part['errors']:>8}")
        if args.llm:
            print(f"LLM pointwise reranker, local SmolLM2-135M, {args.llm} queries:")
            time_llm(args.llm)


if __name__ == "__main__":
    main()
